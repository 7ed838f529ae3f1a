/**
 * The data-subject access export (LGPD art. 18): everything held about a student in one document: the
 * full record, image consents with history, check-ins, pickup entries and grants, events and audit
 * entries naming the student. It reads what the store holds, so once retention has anonymised a
 * deleted student (decision 0045) it answers what is left, and nothing of the person.
 */
import * as E from 'fp-ts/lib/Either.js';
import { toConsent } from '../domain/consent.js';
import { type ApiError, apiError } from '../domain/errors.js';
import { toStudentPhoto } from '../domain/photo.js';
import type { StudentExport } from '../domain/studentExport.js';
import { photosAllowed, visibleStudentFields } from '../rules/students.js';
import type { AuditLog } from '../store/auditLog.js';
import type { ConsentStore } from '../store/consents.js';
import type { PhotoStore } from '../store/photos.js';
import { type StudentStore, toRecord } from '../store/students.js';
import type { SubjectRecords } from '../store/subjectRecords.js';
import type { DirectoryPort } from '../sync/directoryPort.js';
import { studentView } from './studentService.js';

export interface StudentExportDeps {
  readonly students: StudentStore;
  readonly consents: ConsentStore;
  readonly directory: DirectoryPort;
  readonly records: SubjectRecords;
  readonly photos: PhotoStore;
  readonly audit: AuditLog;
  readonly clock: () => Date;
}

export const exportStudent = async (
  deps: StudentExportDeps,
  studentId: string,
): Promise<E.Either<ApiError, StudentExport>> => {
  const doc = await deps.students.get(studentId);
  if (doc === undefined) return E.left(apiError('NOT_FOUND', 'No such student.'));
  const everything = visibleStudentFields(['ADMIN'], []);
  const events = (await deps.records.eventsOf(studentId))
    .map(({ _id: _i, docType: _d, ...event }) => event)
    .sort((a, b) => a.serverTimestamp.localeCompare(b.serverTimestamp));
  const auditEntries = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await deps.audit.query({
      subjectId: studentId,
      limit: 200,
      ...(cursor === undefined ? {} : { cursor }),
    });
    if (E.isLeft(page)) break;
    auditEntries.push(...page.right.items);
    if (page.right.nextCursor === null) break;
    cursor = page.right.nextCursor;
  }
  // Check-ins, pickup entries (without their one-time-code hashes) and grants naming the student.
  const withoutStorage = (docs: ReadonlyArray<Record<string, unknown>>) =>
    docs.map(({ _id: _i, _rev: _r, docType: _d, otpHash: _o, ...fields }) => fields);
  // The stored photo itself, while one is held (a revocation erases it, decision 0033).
  const stored = await deps.photos.get(studentId);
  const image = stored === undefined ? undefined : await deps.photos.image(studentId, 'full');
  return E.right({
    exportedAt: deps.clock().toISOString(),
    photo:
      stored === undefined || image === undefined
        ? null
        : { stored: toStudentPhoto(stored), jpegBase64: Buffer.from(image).toString('base64') },
    checkIns: withoutStorage(await deps.records.checkinsOf(studentId)),
    pickupEntries: withoutStorage(await deps.records.pickupEntriesOf(studentId)),
    pickupAuthorizations: withoutStorage(await deps.records.grantsOf(studentId)),
    student: studentView(toRecord(doc), everything, photosAllowed(deps.directory.activeConsents(studentId))),
    imageConsents: (await deps.consents.listForSubject('STUDENT', studentId)).map(toConsent),
    events,
    auditEntries,
  });
};

export interface StudentExportService {
  /** Everything held about one student (LGPD art. 18), or NOT_FOUND. */
  exportOf(studentId: string): Promise<E.Either<ApiError, StudentExport>>;
}

export const studentExportService = (deps: StudentExportDeps): StudentExportService => ({
  exportOf: (studentId) => exportStudent(deps, studentId),
});
