/** A complete student record with neutral values, for tests that need one and care about few fields. */
import { randomUUID } from 'node:crypto';
import type { NewAuditEntry } from '../../src/domain/audit.js';
import type { AdmissionException } from '../../src/domain/projection.js';
import type { StudentRecord } from '../../src/domain/student.js';
import type { LabelledChild } from '../../src/rules/labels.js';

export const aStudentRecord = (over: Partial<StudentRecord> = {}): StudentRecord => ({
  studentId: randomUUID(),
  displayName: 'Criança',
  photoRef: null,
  photo_refs: [],
  guardianName: 'G',
  guardianNameAlt: null,
  birthDate: null,
  phones: [],
  address: null,
  allergies: null,
  specialNeeds: null,
  classId: randomUUID(),
  nucleusId: null,
  familyMembershipStatus: null,
  imageConsentId: null,
  visitor: false,
  status: 'ACTIVE',
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
  deleted_justification: null,
  ...over,
});

/** A child's document in a tablet's roster (`rosterStudent`), in class `c1`, with nothing to flag. */
export const aRosterStudent = (
  studentId: string,
  displayName: string,
  over: Record<string, unknown> = {},
) => ({
  _id: `student:${studentId}`,
  docType: 'rosterStudent',
  studentId,
  displayName,
  classId: 'c1',
  photoRef: null,
  allergies: null,
  specialNeeds: null,
  visitor: false,
  pickup: [],
  ...over,
});

/** A child as a label shows it (name, class, session, the day's code), with nothing to flag. */
export const aLabelledChild = (over: Partial<LabelledChild> = {}): LabelledChild => ({
  displayName: 'Ana Souza',
  className: 'Berçário',
  sessionTitle: 'Culto',
  allergies: null,
  specialNeeds: null,
  code: 'K7Q2',
  ...over,
});

/** An audit entry of a student's creation, each with a correlation id of its own. */
export const anAuditEntry = (overrides: Partial<NewAuditEntry> = {}): NewAuditEntry => ({
  correlation_id: randomUUID(),
  actor_user_id: 'user-1',
  actor_role: 'ADMIN',
  endpoint: 'POST /api/v1/students',
  outcome: 'SUCCESS',
  details: { status: 201, studentId: 'student-1' },
  subject_id: 'student-1',
  action: 'MUTATION',
  ...overrides,
});

/** A check-in the admission rule would have refused on arrival (ROOM_FULL), detected at `at`. */
export const anAdmissionException = (
  studentId: string,
  at: string,
  checkedIn: number,
): AdmissionException => ({
  aspect: `checkin:s-1:${studentId}`,
  kind: 'checkin',
  subjectId: studentId,
  policy: 'ADMISSION_RULE',
  reason: 'ROOM_FULL',
  refusals: [{ reason: 'ROOM_FULL', checkedIn, capacity: 1 }],
  event: {
    eventId: randomUUID(),
    userId: 'u-2',
    role: 'CHAMADOR',
    deviceId: 'tablet-1',
    clientTimestamp: at,
    serverTimestamp: at,
    change: { type: 'CHECK_IN', checkInId: randomUUID() },
  },
  detectedAt: at,
});
