/**
 * The student list served from memory: a projection of the private database's student and consent
 * documents, kept current by this instance's own writes (read-your-writes) and by the database's
 * change feed (other instances on the same CouchDB). Search and keyset paging never touch the store.
 *
 * A search used to scan the whole roll in name order, so a query that matches few children (the usual
 * one: a surname typed at the door) read every name: 438 req/s and p99 51 ms at 50,000 students. Every
 * name's trigrams now point at its students (`names.ts`); such a query verifies only the students of
 * its rarest trigram. A query whose words are all shorter than three letters, or whose rarest trigram
 * is common, still scans in order, and that scan stops after one page of matches.
 */
import * as E from 'fp-ts/lib/Either.js';
import type { Observable, Subscription } from 'rxjs';
import { ConsentDoc } from '../domain/consent.js';
import { type StudentDoc, StudentDoc as StudentDocC, type StudentStatus } from '../domain/student.js';
import { trigramIndex } from '../lib/trigramIndex.js';
import { foldName, photosAllowed, queryMatcher, sortKeyOf } from '../rules/students.js';
import type { Change } from './changeFeed.js';

export interface DirectoryEntry {
  readonly studentId: string;
  readonly displayName: string;
  readonly folded: string;
  readonly sortKey: string;
  readonly status: StudentStatus;
  readonly photoRef: string | null;
  readonly updatedAt: string;
}

export interface DirectoryPage {
  readonly items: ReadonlyArray<DirectoryEntry>;
  /** The sort key of the last item when more may follow; undefined at the end. */
  readonly lastKey: string | undefined;
}

export interface StudentDirectory {
  load(students: ReadonlyArray<StudentDoc>, consents: ReadonlyArray<ConsentDoc>): void;
  upsertStudent(doc: StudentDoc): void;
  upsertConsent(doc: ConsentDoc): void;
  /** How many unrevoked image consents the student has. */
  activeConsents(studentId: string): number;
  page(query: {
    status: StudentStatus;
    q: string;
    /** Only the students of this class, when given. */
    classId?: string;
    afterKey: string | undefined;
    limit: number;
  }): DirectoryPage;
  size(): number;
  /** Every student record held, in no particular order (the roster's full pass reads them here). */
  all(): StudentDoc[];
  /** The record held for `studentId`, as this process wrote it or the private feed last told it. */
  get(studentId: string): StudentDoc | undefined;
  /** Follows a change feed of the private database until the subscription ends. */
  follow(changes: Observable<Change>, onUndecodable: (id: string) => void): Subscription;
}

/** First index whose key is greater than `key` in an array sorted by key. */
const upperBound = (entries: ReadonlyArray<DirectoryEntry>, key: string): number => {
  let lo = 0;
  let hi = entries.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((entries[mid]?.sortKey ?? '') <= key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
};

export interface StudentDirectoryOptions {
  /**
   * A search reads its candidates from the name index while they are at most this share of the list;
   * beyond it a scan in name order finds a page of matches sooner (tests set it to reach each path).
   */
  readonly indexedShare?: number;
}

export const studentDirectory = (options: StudentDirectoryOptions = {}): StudentDirectory => {
  const indexedShare = options.indexedShare ?? 1 / 8;
  const students = new Map<string, StudentDoc>();
  const sorted: Record<StudentStatus, DirectoryEntry[]> = { ACTIVE: [], DELETED: [] };
  const entries = new Map<string, DirectoryEntry>();
  // consentId → (studentId, active), so a revocation can be applied without reading the store.
  const consents = new Map<string, { readonly subjectId: string; readonly active: boolean }>();
  const activeBySubject = new Map<string, number>();
  const names = trigramIndex<DirectoryEntry>();

  const remove = (entry: DirectoryEntry) => {
    const list = sorted[entry.status];
    const at = upperBound(list, entry.sortKey) - 1;
    if (at >= 0 && list[at]?.studentId === entry.studentId) list.splice(at, 1);
  };

  const project = (doc: StudentDoc) => {
    const old = entries.get(doc.studentId);
    if (old !== undefined) remove(old);
    const entry: DirectoryEntry = {
      studentId: doc.studentId,
      displayName: doc.displayName,
      folded: foldName(doc.displayName),
      sortKey: sortKeyOf(doc.displayName, doc.studentId),
      status: doc.status,
      photoRef: photosAllowed(activeBySubject.get(doc.studentId) ?? 0) ? doc.photoRef : null,
      updatedAt: doc.updatedAt,
    };
    entries.set(doc.studentId, entry);
    names.set(doc.studentId, entry.folded, entry);
    const list = sorted[entry.status];
    list.splice(upperBound(list, entry.sortKey), 0, entry);
  };

  const directory: StudentDirectory = {
    load(studentDocs, consentDocs) {
      for (const c of consentDocs) directory.upsertConsent(c);
      for (const s of studentDocs) directory.upsertStudent(s);
    },

    upsertStudent(doc) {
      const known = students.get(doc.studentId);
      // Feeds deliver a document after our own write already applied it: keep the newest.
      if (known !== undefined && known.updatedAt > doc.updatedAt) return;
      students.set(doc.studentId, doc);
      project(doc);
    },

    upsertConsent(doc) {
      const before = consents.get(doc.consentId);
      const active = doc.subject_type === 'STUDENT' && doc.revoked_at === null;
      if (before !== undefined && before.active === active) return;
      consents.set(doc.consentId, { subjectId: doc.subject_id, active });
      const delta = (active ? 1 : 0) - (before?.active === true ? 1 : 0);
      if (delta === 0) return;
      activeBySubject.set(doc.subject_id, (activeBySubject.get(doc.subject_id) ?? 0) + delta);
      const student = students.get(doc.subject_id);
      if (student !== undefined) project(student);
    },

    activeConsents: (studentId) => activeBySubject.get(studentId) ?? 0,

    page({ status, q, classId, afterKey, limit }) {
      const list = sorted[status];
      const folded = foldName(q);
      const matches = queryMatcher(folded);
      const inClass = (studentId: string) =>
        classId === undefined || students.get(studentId)?.classId === classId;
      const wanted = (entry: DirectoryEntry) =>
        entry.status === status &&
        (afterKey === undefined || entry.sortKey > afterKey) &&
        matches(entry.folded) &&
        inClass(entry.studentId);
      const candidates = names.candidates(folded, list.length * indexedShare);
      if (candidates !== undefined) {
        const found = candidates.filter(wanted).sort((a, b) => (a.sortKey < b.sortKey ? -1 : 1));
        return found.length > limit
          ? { items: found.slice(0, limit), lastKey: found[limit - 1]?.sortKey }
          : { items: found, lastKey: undefined };
      }
      const items: DirectoryEntry[] = [];
      for (let i = afterKey === undefined ? 0 : upperBound(list, afterKey); i < list.length; i += 1) {
        const entry = list[i];
        if (entry === undefined || !matches(entry.folded) || !inClass(entry.studentId)) continue;
        if (items.length === limit) return { items, lastKey: items[items.length - 1]?.sortKey };
        items.push(entry);
      }
      return { items, lastKey: undefined };
    },

    size: () => entries.size,

    all: () => [...students.values()],
    get: (studentId) => students.get(studentId),

    follow(changes, onUndecodable) {
      return changes.subscribe((change) => {
        if (change.deleted || change.doc === undefined) return;
        if (change.id.startsWith('student:')) {
          const d = StudentDocC.decode(change.doc);
          if (E.isRight(d)) directory.upsertStudent(d.right);
          else onUndecodable(change.id);
        } else if (change.id.startsWith('imageConsent:')) {
          const d = ConsentDoc.decode(change.doc);
          if (E.isRight(d)) directory.upsertConsent(d.right);
          else onUndecodable(change.id);
        }
      });
    },
  };
  return directory;
};
