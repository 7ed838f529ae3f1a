/**
 * A first-time visitor registered at the door (a VISITOR_REGISTERED event, made online or offline)
 * becomes a student record once the pipeline has decided the registration: flagged `visitor`, with the
 * id the tablet generated, in the class the tablet chose, the guardian's phone as the record's only
 * phone. A student that exists already is left as it is, so a replay, a resend or a second instance's
 * pipeline creates nobody twice, and an office correction made since is never overwritten.
 */
import type { PendingAuditEntry } from '../domain/audit.js';
import type { AspectProjection } from '../rules/projections.js';
import type { ClassStore } from '../store/classes.js';
import { isConflict } from '../store/storeErrors.js';
import type { StudentStore } from '../store/students.js';
import type { DirectoryPort } from '../sync/directoryPort.js';
import { PIPELINE_ENDPOINT, recordAuditKey } from '../sync/projector.js';

/** The qualifier of a visitor's phone, as the REST walk-in check-in writes it. */
export const VISITOR_PHONE_QUALIFIER = 'visitante';

export const visitorWriteThrough =
  (deps: {
    readonly students: StudentStore;
    readonly classes: ClassStore;
    readonly directory: DirectoryPort;
    readonly audit: (entries: ReadonlyArray<PendingAuditEntry>) => Promise<void>;
    readonly clock: () => Date;
  }) =>
  async (p: AspectProjection): Promise<void> => {
    const state = p.state;
    if (state?.kind !== 'visitor') return;
    if ((await deps.students.get(state.studentId)) !== undefined) return;
    const at = deps.clock().toISOString();
    // Audited before the record is written: a crash between the two writes the same keyed entry again.
    await deps.audit([
      {
        entry: {
          correlation_id: state.eventId,
          actor_user_id: state.registeredBy,
          actor_role: null,
          endpoint: PIPELINE_ENDPOINT,
          outcome: 'SUCCESS',
          details: { code: 'VISITOR_REGISTERED', eventId: state.eventId, studentId: state.studentId },
          subject_id: state.studentId,
          action: 'MUTATION',
        },
        // The server's time of the registration: a device's clock says nothing about when it was stored.
        key: recordAuditKey(
          'VISITOR_REGISTERED',
          state.eventId,
          p.events.find((e) => e.eventId === state.eventId)?.serverTimestamp ?? at,
        ),
      },
    ]);
    const cls = await deps.classes.getClass(state.classId);
    try {
      const created = await deps.students.create({
        studentId: state.studentId,
        displayName: state.displayName,
        photoRef: null,
        photo_refs: [],
        guardianName: state.guardianName,
        guardianNameAlt: null,
        birthDate: null,
        phones: [{ number: state.phone, qualifier: VISITOR_PHONE_QUALIFIER }],
        address: null,
        allergies: state.allergies,
        specialNeeds: state.specialNeeds,
        classId: state.classId,
        nucleusId: cls?.nucleusId ?? null,
        familyMembershipStatus: null,
        imageConsentId: null,
        visitor: true,
        status: 'ACTIVE',
        createdAt: at,
        updatedAt: at,
        deleted_justification: null,
      });
      deps.directory.upsertStudent(created);
    } catch (e) {
      // Another instance's pipeline created it first: the same registration, so nothing is lost.
      if (!isConflict(e)) throw e;
    }
  };
