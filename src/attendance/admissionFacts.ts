/**
 * The facts the admission rule (`rules/admission.ts`) judges a check-in by, read from the store: the
 * session's class and its rules, the child's record, who is in the room. Each is read only when a rule
 * the church set needs it, so a church that sets none pays for no reads beyond today's.
 */
import { type ClassDoc, type ClassSessionDoc, isActive } from '../domain/classes.js';
import type { StudentDoc } from '../domain/student.js';
import {
  type AdmissionFacts,
  type AdmissionRecord,
  admissionRecordOf,
  hasAgeBounds,
  type RequiredField,
  type RoomRules,
  roomRulesOf,
} from '../rules/admission.js';
import { type CheckinStanding, headcountOf } from '../rules/checkin.js';
import type { ConsentStore } from '../store/consents.js';
import type { ProjectionStore } from '../store/projections.js';
import type { StudentStore } from '../store/students.js';
import type { VolunteerService } from './volunteerService.js';

export interface AdmissionFactsDeps {
  readonly students: Pick<StudentStore, 'get'>;
  readonly consents: Pick<ConsentStore, 'listForSubject'>;
  readonly projections: Pick<ProjectionStore, 'projectPrefix'>;
  readonly volunteers: Pick<VolunteerService, 'inRoom'>;
}

/** What a check-in knows of its child before the facts are read: found or not, deleted, a visitor. */
export type KnownStudent = Pick<StudentDoc, 'studentId' | 'status' | 'visitor'>;

/** Children in the room now: the session's check-in aspects as the pipeline projected them. */
export const childrenInRoom = async (
  projections: Pick<ProjectionStore, 'projectPrefix'>,
  sessionId: string,
): Promise<number> =>
  headcountOf(
    (await projections.projectPrefix(`checkin:${sessionId}:`)).flatMap((p) =>
      p.state?.kind === 'checkin' ? [p.state.checkins] : [],
    ),
  ).checkedIn;

// Stands in for a record nobody needs to read (no field required, no age range): the rule then
// looks at none of it.
const UNREAD_RECORD: AdmissionRecord = {
  birthMonth: null,
  guardianPhone: true,
  allergiesAnswered: true,
  specialNeedsAnswered: true,
  imageConsentAnswered: true,
};

export const readAdmissionFacts = async (
  deps: AdmissionFactsDeps,
  input: {
    readonly session: ClassSessionDoc | undefined;
    /** The session's class, which the caller reads once for its rules and its status. */
    readonly sessionClass: ClassDoc | undefined;
    readonly student: KnownStudent | undefined;
    readonly checkins: ReadonlyArray<CheckinStanding>;
    readonly requiredFields: ReadonlyArray<RequiredField>;
    readonly actorRoles: ReadonlyArray<string>;
  },
): Promise<AdmissionFacts> => {
  const { session, student, sessionClass } = input;
  const room: RoomRules = roomRulesOf(sessionClass);
  const recordNeeded =
    student !== undefined &&
    !student.visitor &&
    student.status !== 'DELETED' &&
    (input.requiredFields.length > 0 || hasAgeBounds(room.ageRange));
  const full = recordNeeded ? await deps.students.get(student.studentId) : undefined;
  const record =
    full === undefined
      ? UNREAD_RECORD
      : admissionRecordOf({
          ...full,
          imageConsents: input.requiredFields.includes('imageConsent')
            ? (await deps.consents.listForSubject('STUDENT', full.studentId)).length
            : 0,
        });
  const counted = session !== undefined && (room.capacity !== null || room.childrenPerVolunteer !== null);
  return {
    student:
      student === undefined
        ? undefined
        : { deleted: student.status === 'DELETED', visitor: student.visitor, record },
    session:
      session === undefined
        ? undefined
        : {
            date: session.date,
            active: isActive(session),
            // A class that is gone (damage: classes are never deleted) closes nothing.
            classActive: sessionClass === undefined || isActive(sessionClass),
          },
    room,
    occupancy: counted
      ? {
          checkedIn: await childrenInRoom(deps.projections, session.sessionId),
          volunteers:
            room.childrenPerVolunteer === null ? 0 : await deps.volunteers.inRoom(session.sessionId),
        }
      : { checkedIn: 0, volunteers: 0 },
    checkins: input.checkins,
    requiredFields: input.requiredFields,
    actorRoles: input.actorRoles,
  };
};
