/** Full student records in the private database (never replicated as they are). */
import canonicalize from 'canonicalize';
import * as E from 'fp-ts/lib/Either.js';
import {
  StudentDoc,
  type StudentRecord,
  type StudentWritableField,
  studentWritable,
} from '../domain/student.js';
import { putBatched } from './batchedPut.js';
import { getDoc, getDocs, listDocs } from './docs.js';
import type { Database } from './pouch.js';
import { isConflict } from './storeErrors.js';

export const studentDocId = (studentId: string): string => `student:${studentId}`;

export interface StudentStore {
  get(studentId: string): Promise<StudentDoc | undefined>;
  /** The students among `studentIds` that exist, by id (one read). */
  getMany(studentIds: ReadonlyArray<string>): Promise<Map<string, StudentDoc>>;
  listAll(): Promise<StudentDoc[]>;
  create(record: StudentRecord): Promise<StudentDoc>;
  /** Compare-and-swap on `current._rev`. */
  update(current: StudentDoc, next: StudentRecord): Promise<StudentDoc | 'CONFLICT'>;
  /**
   * Sets one field to a value the event pipeline decided (validated again with the field's codec).
   * `UNCHANGED` when it already holds it; undefined when there is no such student or the value does
   * not fit the field.
   */
  applyField(
    studentId: string,
    field: StudentWritableField,
    value: unknown,
    at: string,
  ): Promise<StudentDoc | 'UNCHANGED' | undefined>;
}

export const toRecord = (doc: StudentDoc): StudentRecord => {
  const { _id: _i, _rev: _r, docType: _d, ...record } = doc;
  return record;
};

const sameValue = (a: unknown, b: unknown): boolean => canonicalize(a) === canonicalize(b);

export const studentStore = (db: Database): StudentStore => ({
  get: (studentId) => getDoc(db, StudentDoc, studentDocId(studentId)),
  async getMany(studentIds) {
    const docs: StudentDoc[] = await getDocs(db, StudentDoc, studentIds.map(studentDocId));
    return new Map(docs.map((d) => [d.studentId, d]));
  },
  listAll: () => listDocs(db, StudentDoc, 'student'),
  async create(record) {
    const doc = {
      _id: studentDocId(record.studentId),
      docType: 'student' as const,
      ...record,
      photo_refs: [...record.photo_refs],
      phones: [...record.phones],
    };
    const r = await putBatched(db, doc);
    return { ...doc, _rev: r.rev };
  },
  async update(current, next) {
    const doc = {
      _id: current._id,
      _rev: current._rev,
      docType: 'student' as const,
      ...next,
      photo_refs: [...next.photo_refs],
      phones: [...next.phones],
    };
    try {
      const r = await putBatched(db, doc);
      return { ...doc, _rev: r.rev };
    } catch (e) {
      if (isConflict(e)) return 'CONFLICT';
      throw e;
    }
  },
  async applyField(studentId, field, value, at) {
    if (E.isLeft(studentWritable[field].decode(value))) return undefined;
    for (let attempt = 0; attempt < 20; attempt += 1) {
      const current = await getDoc(db, StudentDoc, studentDocId(studentId));
      if (current === undefined) return undefined;
      if (sameValue(current[field], value)) return 'UNCHANGED';
      const candidate = StudentDoc.decode({ ...current, [field]: value, updatedAt: at });
      if (E.isLeft(candidate)) return undefined;
      try {
        const r = await putBatched(db, candidate.right);
        return { ...candidate.right, _rev: r.rev };
      } catch (e) {
        if (!isConflict(e)) throw e;
      }
    }
    throw new Error('the student record stayed contended');
  },
});
