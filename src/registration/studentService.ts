/**
 * Student registration: create, change, soft delete, read by role, list from the directory. Every
 * change appends an immutable event; photos need an active image consent; deletion is soft and
 * justified. Around the pure rules of `rules/students.ts`.
 *
 * A change of fields is one STUDENT_FIELD_SET event per changed field, based on the field's current
 * version: the event pipeline decides each with the conflict rule (the same path as a tablet's offline
 * edits) and writes the record; the answer is the record once it has (read-your-writes). Changes to one
 * student from this instance run one at a time, so they never race each other.
 */
import { randomUUID } from 'node:crypto';
import canonicalize from 'canonicalize';
import * as E from 'fp-ts/lib/Either.js';
import { importedCreationEventId } from '../crypto/importIds.js';
import { type ApiError, apiError } from '../domain/errors.js';
import type { NewEvent } from '../domain/event.js';
import { studentFieldAspect } from '../domain/eventTypes.js';
import type { Actor, Principal } from '../domain/principal.js';
import {
  type CreateStudentBody,
  isStudentWritableField,
  type PatchStudentBody,
  Student,
  type StudentDoc,
  type StudentRecord,
  studentWritable,
} from '../domain/student.js';
import { keyedLock } from '../lib/keyedLock.js';
import { requestScopedId } from '../lib/requestIds.js';
import {
  decideDelete,
  hasPhotos,
  photosAllowed,
  type StudentField,
  unknownPhotoRefs,
  visibleStudentFields,
} from '../rules/students.js';
import type { EventStore } from '../store/events.js';
import { isConflict } from '../store/storeErrors.js';
import { type StudentStore, toRecord } from '../store/students.js';
import type { DirectoryPort } from '../sync/directoryPort.js';
import type { EventPipeline } from '../sync/pipelineRuntime.js';

export interface ClassLookup {
  getClass(classId: string): Promise<{ readonly nucleusId?: string | null } | undefined>;
}

/** The photo stored for a student, if any (`src/store/photos.ts`). */
export interface StoredPhotoLookup {
  get(studentId: string): Promise<{ readonly photoRef: string } | undefined>;
  /** Erases it; false when there was none. */
  remove(studentId: string): Promise<boolean>;
}

export interface StudentServiceDeps {
  readonly students: StudentStore;
  readonly photos: StoredPhotoLookup;
  readonly directory: DirectoryPort;
  readonly classes: ClassLookup;
  readonly events: EventStore;
  readonly pipeline: Pick<EventPipeline, 'settle' | 'current'>;
  readonly clock: () => Date;
  readonly settleTimeoutMs?: number;
}

const invalid = (path: string, message: string): ApiError =>
  apiError('VALIDATION_FAILED', message, { issues: [{ path, message }] });
const notFound = (): ApiError => apiError('NOT_FOUND', 'No such student.');
/**
 * A photo stored without an active image consent: 400 with the reason, on PATCH as on PUT …/photo
 * (product decision, over the 409 decision 0033 first chose; 0043). `path` is the input that carried it.
 */
export const noImageConsent = (path: string): ApiError =>
  apiError(
    'VALIDATION_FAILED',
    'This student has no active image consent: record one (POST /api/v1/image-consents) before storing a photo. Nothing was stored.',
    {
      reason: 'NO_ACTIVE_IMAGE_CONSENT',
      issues: [{ path, message: 'photos need an active image consent for this student' }],
    },
  );
const noConsent = (): ApiError => noImageConsent('body.photoRef');
const unstoredPhoto = (paths: ReadonlyArray<string>): ApiError =>
  apiError('VALIDATION_FAILED', 'A photo reference names no photo stored for this student.', {
    reason: 'PHOTO_NOT_STORED',
    issues: paths.map((path) => ({
      path,
      message: "not this student's stored photo; upload one with PUT /api/v1/students/{studentId}/photo",
    })),
  });

/** The API view of a record for a reader: only the fields the reader's roles may see; photos only with consent. */
export const studentView = (
  record: StudentRecord,
  visible: ReadonlySet<StudentField>,
  photosVisible: boolean,
): Student => {
  const out: Record<string, unknown> = {};
  // Fields a record may lack (the retention dates of an older record) are left out, not sent as undefined.
  for (const field of visible) if (record[field] !== undefined) out[field] = record[field];
  if (!photosVisible) {
    if (visible.has('photoRef')) out.photoRef = null;
    if (visible.has('photo_refs')) out.photo_refs = [];
  }
  const decoded = Student.decode(out);
  // Every record field satisfies its codec, so a failure here is a bug in the field lists.
  if (E.isLeft(decoded)) throw new Error('a student view does not match the Student codec');
  return decoded.right;
};

/** The API view of a stored student, as `studentView` shows its record. */
export const studentDocView = (
  doc: StudentDoc,
  visible: ReadonlySet<StudentField>,
  photosVisible: boolean,
): Student => studentView(toRecord(doc), visible, photosVisible);

export interface StudentService {
  create(
    actor: Actor,
    body: CreateStudentBody,
    options?: { visitor?: boolean },
  ): Promise<E.Either<ApiError, StudentDoc>>;
  /**
   * Creates many students with ids the caller chose (an import derives them), in bulk writes: the
   * same records, directory entries and STUDENT_CREATED events as `create`, bulk writes for the events
   * and one for the records per batch instead of two writes per student. Each event's id derives from
   * its student's (`importedCreationEventId`), and the events are written first: the items of a call
   * that failed are sent again, and find the events stored before. Answers in the order of `items`;
   * `CONFLICT` for an id already taken (its record is not written, and its event is the one stored
   * with the student that took the id).
   */
  createMany(
    actor: Actor,
    items: ReadonlyArray<{ readonly studentId: string; readonly body: CreateStudentBody }>,
  ): Promise<Array<E.Either<ApiError, StudentDoc>>>;
  patch(actor: Actor, studentId: string, body: PatchStudentBody): Promise<E.Either<ApiError, StudentDoc>>;
  softDelete(actor: Actor, studentId: string, justification: string): Promise<E.Either<ApiError, StudentDoc>>;
  read(
    principal: Principal,
    studentId: string,
  ): Promise<E.Either<ApiError, { view: Student; sensitive: boolean }>>;
}

/** A new student's record from a create body; `nucleus` is the class's, used when the body names none. */
const newRecord = (
  studentId: string,
  body: CreateStudentBody,
  nucleus: string | null | undefined,
  at: string,
  visitor: boolean,
): StudentRecord => ({
  studentId,
  displayName: body.displayName,
  photoRef: null,
  photo_refs: [],
  guardianName: body.guardianName,
  guardianNameAlt: body.guardianNameAlt ?? null,
  birthDate: body.birthDate ?? null,
  phones: body.phones,
  address: body.address ?? null,
  allergies: body.allergies ?? null,
  specialNeeds: body.specialNeeds ?? null,
  classId: body.classId,
  nucleusId: body.nucleusId ?? nucleus ?? null,
  familyMembershipStatus: body.familyMembershipStatus ?? null,
  imageConsentId: null,
  visitor,
  status: 'ACTIVE',
  createdAt: at,
  updatedAt: at,
  deleted_justification: null,
});

/** The STUDENT_CREATED payload: which fields were given, never their values. */
const createdPayload = (
  body: CreateStudentBody,
  created: Pick<StudentRecord, 'visitor'>,
): Record<string, unknown> => ({
  fields: Object.keys(body).sort(),
  visitor: created.visitor,
});

const WRITABLE_FIELDS = Object.keys(studentWritable).filter(isStudentWritableField);

export const studentService = (deps: StudentServiceDeps): StudentService => {
  const now = () => deps.clock().toISOString();
  const locks = keyedLock();

  const checkClass = async (
    classId: string | undefined,
  ): Promise<E.Either<ApiError, string | null | undefined>> => {
    if (classId === undefined) return E.right(undefined);
    const found = await deps.classes.getClass(classId);
    return found === undefined
      ? E.left(invalid('body.classId', 'no class with this id'))
      : E.right(found.nucleusId ?? null);
  };

  const eventOf = (
    actor: Actor,
    type: string,
    doc: Pick<StudentDoc, 'studentId'>,
    payload: Record<string, unknown>,
    eventId: string = randomUUID(),
  ): NewEvent => ({
    eventId,
    type,
    subjectType: 'STUDENT',
    subjectId: doc.studentId,
    payload,
    actor: { userId: actor.principal.userId, role: actor.principal.primaryRole },
    deviceId: actor.deviceId,
    clientTimestamp: now(),
    serverTimestamp: now(),
  });
  const record = (
    actor: Actor,
    type: string,
    doc: StudentDoc,
    payload: Record<string, unknown>,
    eventId?: string,
  ) => deps.events.append(eventOf(actor, type, doc, payload, eventId));

  return {
    async create(actor, body, options = {}) {
      const classNucleus = await checkClass(body.classId);
      if (E.isLeft(classNucleus)) return classNucleus;
      // No consent can exist for a student that does not exist yet.
      if (hasPhotos(body)) return E.left(noConsent());
      const studentId = requestScopedId(actor.requestKey, 'student');
      // A retry of this keyed request finds the student its earlier attempt created (the id derives
      // from the request), and answers it rather than a second child or a conflict.
      const created = await deps.students
        .create(newRecord(studentId, body, classNucleus.right, now(), options.visitor ?? false))
        .catch(async (e: unknown) => {
          const earlier =
            actor.requestKey !== undefined && isConflict(e) ? await deps.students.get(studentId) : undefined;
          if (earlier === undefined) throw e;
          return earlier;
        });
      deps.directory.upsertStudent(created);
      await record(
        actor,
        'STUDENT_CREATED',
        created,
        createdPayload(body, created),
        requestScopedId(actor.requestKey, 'STUDENT_CREATED'),
      );
      return E.right(created);
    },

    async createMany(actor, items) {
      const at = now();
      const nuclei = new Map<string, E.Either<ApiError, string | null | undefined>>();
      const out: Array<E.Either<ApiError, StudentDoc>> = [];
      const toWrite: Array<{ index: number; body: CreateStudentBody; record: StudentRecord }> = [];
      for (const [index, { studentId, body }] of items.entries()) {
        const nucleus = nuclei.get(body.classId) ?? (await checkClass(body.classId));
        nuclei.set(body.classId, nucleus);
        if (E.isLeft(nucleus)) out.push(nucleus);
        else if (hasPhotos(body)) out.push(E.left(noConsent()));
        else {
          // A place held in the answer's order; the write's own answer replaces it below.
          out.push(E.left(apiError('INTERNAL_ERROR')));
          toWrite.push({ index, body, record: newRecord(studentId, body, nucleus.right, at, false) });
        }
      }
      // The events first, each under an id derived from its student's: a file that failed part way
      // is sent again, and its rows whose students were not stored write their events again, which
      // finds the ones stored before (`duplicate`). Written after the students, the events of a
      // failed write would be missing for good: those rows match their students as unchanged.
      await deps.events.appendMany(
        toWrite.map((w) =>
          eventOf(
            actor,
            'STUDENT_CREATED',
            w.record,
            createdPayload(w.body, w.record),
            importedCreationEventId(w.record.studentId),
          ),
        ),
      );
      const stored = await deps.students.createMany(toWrite.map((w) => w.record));
      for (const [k, w] of toWrite.entries()) {
        const doc = stored[k];
        if (doc === undefined || doc === 'CONFLICT') {
          out[w.index] = E.left(
            apiError('CONFLICT', 'A student with this id exists already.', { reason: 'STUDENT_EXISTS' }),
          );
          continue;
        }
        deps.directory.upsertStudent(doc);
        out[w.index] = E.right(doc);
      }
      return out;
    },

    async patch(actor, studentId, body) {
      const classNucleus = await checkClass(body.classId);
      if (E.isLeft(classNucleus)) return classNucleus;
      if (hasPhotos(body) && !photosAllowed(deps.directory.activeConsents(studentId)))
        return E.left(noConsent());
      return locks.run(studentId, async (): Promise<E.Either<ApiError, StudentDoc>> => {
        const current = await deps.students.get(studentId);
        if (current === undefined) return E.left(notFound());
        if (current.status === 'DELETED')
          return E.left(apiError('CONFLICT', 'The student is deleted.', { reason: 'STUDENT_DELETED' }));
        const base = toRecord(current);
        if (hasPhotos(body)) {
          const stored = await deps.photos.get(studentId);
          const known = new Set([...(stored === undefined ? [] : [stored.photoRef]), ...base.photo_refs]);
          if (base.photoRef !== null) known.add(base.photoRef);
          const unknown = unknownPhotoRefs(body, known);
          if (unknown.length > 0) return E.left(unstoredPhoto(unknown));
        }
        const next: StudentRecord = {
          ...base,
          ...body,
          // A class change carries its nucleus unless the body names one.
          nucleusId:
            body.nucleusId !== undefined
              ? body.nucleusId
              : body.classId !== undefined
                ? (classNucleus.right ?? null)
                : base.nucleusId,
        };
        const changed = WRITABLE_FIELDS.filter((f) => canonicalize(base[f]) !== canonicalize(next[f]));
        if (changed.length === 0) return E.right(current);
        const at = now();
        const events = await Promise.all(
          changed.map(async (field) => {
            const aspect = studentFieldAspect(studentId, field);
            const head = await deps.pipeline.current(aspect);
            return {
              eventId: randomUUID(),
              type: 'STUDENT_FIELD_SET',
              subjectType: 'STUDENT',
              subjectId: studentId,
              aspect,
              baseVersion: head?.version ?? null,
              payload: { field, value: next[field] },
              actor: { userId: actor.principal.userId, role: actor.principal.primaryRole },
              deviceId: actor.deviceId,
              clientTimestamp: at,
              serverTimestamp: at,
            };
          }),
        );
        const stored = await deps.events.appendMany(events);
        const settled = await deps.pipeline.settle(
          events.map((e) => ({
            eventId: e.eventId,
            aspect: e.aspect,
            justStored: stored.get(e.eventId) === 'stored',
          })),
          deps.settleTimeoutMs,
        );
        if (settled.size < new Set(events.map((e) => e.aspect)).size) {
          return E.left(
            apiError(
              'STORE_UNAVAILABLE',
              'The change is recorded but not applied yet; read the student again shortly.',
            ),
          );
        }
        const updated = await deps.students.get(studentId);
        return updated === undefined ? E.left(notFound()) : E.right(updated);
      });
    },

    async softDelete(actor, studentId, justification) {
      for (let attempt = 0; attempt < 3; attempt += 1) {
        const current = await deps.students.get(studentId);
        if (current === undefined) return E.left(notFound());
        if (decideDelete(current.status) === 'already-deleted') {
          return E.left(
            apiError('CONFLICT', 'The student is already deleted.', { reason: 'ALREADY_DELETED' }),
          );
        }
        const at = now();
        // The photo's purpose ends with the child's place in the ministry (0045): its references go
        // with the status, in one write, and the image right after. A crash in between leaves an image
        // no record names, which the retention job erases.
        const updated = await deps.students.update(current, {
          ...toRecord(current),
          status: 'DELETED',
          deleted_justification: justification,
          deletedAt: at,
          photoRef: null,
          photo_refs: [],
          updatedAt: at,
        });
        if (updated === 'CONFLICT') continue;
        deps.directory.upsertStudent(updated);
        const photoErased = await deps.photos.remove(studentId);
        await record(actor, 'SOFT_DELETE', updated, { justification, photoErased });
        return E.right(updated);
      }
      return E.left(apiError('CONFLICT', 'The student changed while this request ran; try again.'));
    },

    async read(principal, studentId) {
      const doc = await deps.students.get(studentId);
      if (doc === undefined) return E.left(notFound());
      const visible = visibleStudentFields(principal.roles, principal.permissions);
      const view = studentView(
        toRecord(doc),
        visible,
        photosAllowed(deps.directory.activeConsents(studentId)),
      );
      const sensitive = visible.has('allergies') || visible.has('photoRef');
      return E.right({ view, sensitive });
    },
  };
};
