/** Full student records in the private database (never replicated as they are). */
import { StudentDoc, type StudentRecord } from '../domain/student.js';
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
}

export const toRecord = (doc: StudentDoc): StudentRecord => {
  const { _id: _i, _rev: _r, docType: _d, ...record } = doc;
  return record;
};

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
    const r = await db.put(doc);
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
      const r = await db.put(doc);
      return { ...doc, _rev: r.rev };
    } catch (e) {
      if (isConflict(e)) return 'CONFLICT';
      throw e;
    }
  },
});
