/** Full student records in the private database (never replicated as they are). */
import canonicalize from 'canonicalize';
import * as E from 'fp-ts/lib/Either.js';
import {
  StudentDoc,
  type StudentRecord,
  type StudentWritableField,
  studentWritable,
} from '../domain/student.js';
import { foldName } from '../rules/students.js';
import { putBatched } from './batchedPut.js';
import { type DocCache, noDocCache, writingThrough } from './docCache.js';
import { eachDocPage, getDoc, getDocs, listDocs } from './docs.js';
import { sentAgainAfterSilence } from './docWrites.js';
import type { Database } from './pouch.js';
import { isConflict, isStored } from './storeErrors.js';

export const studentDocId = (studentId: string): string => `student:${studentId}`;

export interface StudentStore {
  get(studentId: string): Promise<StudentDoc | undefined>;
  /** The students among `studentIds` that exist, by id (one read). */
  getMany(studentIds: ReadonlyArray<string>): Promise<Map<string, StudentDoc>>;
  listAll(): Promise<StudentDoc[]>;
  /** Every student, `pageSize` at a time in id order (`eachDocPage`): the roll is never held whole. */
  eachPage(
    pageSize: number,
    visit: (page: StudentDoc[], last: boolean) => Promise<void> | void,
  ): Promise<void>;
  create(record: StudentRecord): Promise<StudentDoc>;
  /**
   * Creates many in one bulk write (the caller bounds the batch). Each record is stored whole or not
   * at all: `CONFLICT` when its id is taken (a concurrent import of the same row).
   */
  createMany(records: ReadonlyArray<StudentRecord>): Promise<Array<StudentDoc | 'CONFLICT'>>;
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
  const { _id: _i, _rev: _r, docType: _d, nameFolded: _n, ...record } = doc;
  return record;
};

/**
 * The stored document of `record`, its folded name derived last: a record spread from an older
 * document (which `toRecord` strips, but a caller's object may still carry) never keeps a stale one.
 */
const docOf = (record: StudentRecord) => ({
  docType: 'student' as const,
  ...record,
  photo_refs: [...record.photo_refs],
  phones: [...record.phones],
  nameFolded: foldName(record.displayName),
});

const newDoc = (record: StudentRecord): Omit<StudentDoc, '_rev'> => ({
  _id: studentDocId(record.studentId),
  ...docOf(record),
});

const sameValue = (a: unknown, b: unknown): boolean => canonicalize(a) === canonicalize(b);
/** Whether a stored record holds what `doc` would have written (its revision aside). */
const sameContent = (stored: StudentDoc, doc: Omit<StudentDoc, '_rev'>): boolean => {
  const { _rev, ...content } = stored;
  return sameValue(content, doc);
};

/** Whether retention anonymised the record (0045). */
export const isAnonymised = (doc: StudentDoc): boolean =>
  doc.anonymisedAt !== undefined && doc.anonymisedAt !== null;

/** `cache` holds records read or written by this process (embedded store only; see docCache.ts). */
export const studentStore = (db: Database, cache: DocCache<StudentDoc> = noDocCache()): StudentStore => {
  const read = (id: string) => cache.read(id, () => getDoc(db, StudentDoc, id));
  /** Stores `doc` (`put` semantics, so a stale `_rev` is a 409) and remembers what was stored. */
  const write = async (doc: StudentDoc | Omit<StudentDoc, '_rev'>): Promise<StudentDoc> => {
    const r = await writingThrough(cache, doc._id, () => putBatched(db, doc));
    const stored: StudentDoc = { ...doc, _rev: r.rev };
    cache.remember(doc._id, stored);
    return stored;
  };
  return {
    get: (studentId) => read(studentDocId(studentId)),
    async getMany(studentIds) {
      const found = await cache.readMany(studentIds.map(studentDocId), async (missing) => {
        const docs: StudentDoc[] = await getDocs(db, StudentDoc, missing);
        return new Map(docs.map((d) => [d._id, d]));
      });
      return new Map([...found.values()].map((d) => [d.studentId, d]));
    },
    listAll: () => listDocs(db, StudentDoc, 'student'),
    eachPage: (pageSize, visit) => eachDocPage(db, StudentDoc, 'student', pageSize, visit),
    create: (record) => write(newDoc(record)),
    async createMany(records) {
      if (records.length === 0) return [];
      const docs = records.map(newDoc);
      for (const d of docs) cache.forget(d._id);
      const { result: results, again } = await sentAgainAfterSilence(() => db.bulkDocs(docs));
      // Sent again after a cut answer, a record the first send stored answers a conflict: it is this
      // write's own when the stored record is the one written (ids derive from the rows they import).
      const conflicted = docs.filter((_, i) => {
        const r = results[i];
        return again && r !== undefined && isConflict(r);
      });
      const storedBefore = new Map(
        (
          await getDocs(
            db,
            StudentDoc,
            conflicted.map((d) => d._id),
          )
        ).map((d) => [d._id, d]),
      );
      return docs.map((doc, i): StudentDoc | 'CONFLICT' => {
        const r = results[i];
        cache.forget(doc._id);
        if (r !== undefined && isStored(r)) {
          const stored: StudentDoc = { ...doc, _rev: r.rev };
          cache.remember(doc._id, stored);
          return stored;
        }
        const before = storedBefore.get(doc._id);
        if (before !== undefined && sameContent(before, doc)) return before;
        if (r !== undefined && isConflict(r)) return 'CONFLICT';
        throw new Error(`student write failed: ${r?.name ?? 'no result'}`, { cause: r });
      });
    },
    async update(current, next) {
      try {
        return await write({ _id: current._id, _rev: current._rev, ...docOf(next) });
      } catch (e) {
        if (isConflict(e)) return 'CONFLICT';
        throw e;
      }
    },
    async applyField(studentId, field, value, at) {
      if (E.isLeft(studentWritable[field].decode(value))) return undefined;
      for (let attempt = 0; attempt < 20; attempt += 1) {
        // A conflict below forgot the id (writingThrough), so a retry reads the store afresh.
        const current = await read(studentDocId(studentId));
        if (current === undefined) return undefined;
        // An anonymised record never takes a personal value back (a replay of its events, or an
        // event pushed again by a tablet): anonymisation is for good (0045).
        if (isAnonymised(current) || sameValue(current[field], value)) return 'UNCHANGED';
        const changed = { ...current, [field]: value, updatedAt: at };
        const candidate = StudentDoc.decode(
          field === 'displayName' && typeof value === 'string'
            ? { ...changed, nameFolded: foldName(value) }
            : changed,
        );
        if (E.isLeft(candidate)) return undefined;
        try {
          return await write(candidate.right);
        } catch (e) {
          if (!isConflict(e)) throw e;
        }
      }
      throw new Error('the student record stayed contended');
    },
  };
};
