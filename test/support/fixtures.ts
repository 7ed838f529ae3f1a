/** A complete student record with neutral values, for tests that need one and care about few fields. */
import { randomUUID } from 'node:crypto';
import type { StudentRecord } from '../../src/domain/student.js';

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
