/**
 * The student list served from memory: a projection of the private database's student and consent
 * documents, kept current by this instance's own writes (read-your-writes) and by the database's
 * change feed (other instances on the same CouchDB). Search and keyset paging never touch the store.
 *
 * A search used to scan the whole roll in name order, so a query that matches few children (the usual
 * one: a surname typed at the door) read every name: 438 req/s and p99 51 ms at 50,000 students. Every
 * name's trigrams now point at its students (`trigramIndex.ts`), in name order, one index per status:
 * a search walks the students of its rarest trigram from the page's start and stops after one page of
 * matches, so a common first name costs a page, not a sort of every child who has it (decision 0062).
 * A query whose words are all shorter than three letters still scans the list in order, and that scan
 * also stops after one page of matches.
 *
 * It holds what the list, the search, the check-in and the visitors' report read of each student, not
 * the record: at 100,000 students the whole records passed the 256 MB heap the image sets (decision
 * 0019, tenth round). Full records are read from the store, through its bounded cache.
 */
import * as E from 'fp-ts/lib/Either.js';
import type { Observable, Subscription } from 'rxjs';
import { ConsentDoc } from '../domain/consent.js';
import { type StudentDoc, StudentDoc as StudentDocC, type StudentStatus } from '../domain/student.js';
import { type OrderedList, orderedList } from '../lib/orderedList.js';
import { trigramIndex } from '../lib/trigramIndex.js';
import { foldName, photosAllowed, queryMatcher, sortKeyOf } from '../rules/students.js';
import type { MatchQuery } from '../store/studentViews.js';
import type { Change } from './changeFeed.js';

export interface DirectoryEntry {
  readonly studentId: string;
  readonly displayName: string;
  readonly folded: string;
  readonly sortKey: string;
  readonly status: StudentStatus;
  readonly photoRef: string | null;
  readonly updatedAt: string;
  readonly classId: string;
  readonly visitor: boolean;
  /** When a visitor was registered (the visitors' report); null for every other student. */
  readonly visitorSince: string | null;
}

/**
 * What the directory keeps of a student's record: enough to make its entry again, so a snapshot's row
 * (`src/domain/directorySnapshot.ts`). Its `photoRef` is the stored key; whether an entry shows it
 * depends on the consents held.
 */
export type StudentSummary = Omit<DirectoryEntry, 'folded' | 'sortKey'>;

export const summaryOf = (doc: StudentDoc): StudentSummary => ({
  studentId: doc.studentId,
  displayName: doc.displayName,
  status: doc.status,
  photoRef: doc.photoRef,
  updatedAt: doc.updatedAt,
  classId: doc.classId,
  visitor: doc.visitor,
  visitorSince: doc.visitor ? doc.createdAt : null,
});

export interface DirectoryPage {
  readonly items: ReadonlyArray<DirectoryEntry>;
  /** The sort key of the last item when more may follow; undefined at the end. */
  readonly lastKey: string | undefined;
}

export interface StudentDirectory {
  load(students: ReadonlyArray<StudentDoc>, consents: ReadonlyArray<ConsentDoc>): void;
  /**
   * Adds the students `each` visits, a page at a time, and puts them in name order once at the end:
   * placing each in order as it comes moved half the list per student (12 s of a start at 100,000).
   */
  loadPages(each: (visit: (page: ReadonlyArray<StudentDoc>) => void) => Promise<void>): Promise<void>;
  /** Adds summaries (a snapshot's), in name order once at the end, as `loadPages` does records. */
  loadSummaries(summaries: Iterable<StudentSummary>): void;
  /** Every student held, as summaries (the active in name order, then the deleted): what a snapshot keeps. */
  summaries(): StudentSummary[];
  upsertStudent(doc: StudentDoc): void;
  upsertConsent(doc: ConsentDoc): void;
  /** How many unrevoked image consents the student has. */
  activeConsents(studentId: string): number;
  /**
   * How many image consents were ever recorded for the student, revoked ones too: whether the
   * guardian was asked (the admission rule's `imageConsent` field).
   */
  consentsRecorded(studentId: string): number;
  page(query: {
    status: StudentStatus;
    q: string;
    /** Only the students of this class, when given. */
    classId?: string;
    afterKey: string | undefined;
    limit: number;
  }): DirectoryPage;
  /**
   * The ids of the students of `status` whose folded name is `folded`, whole (the import's matching
   * by name: one range of the name-ordered list).
   */
  named(status: StudentStatus, folded: string): string[];
  size(): number;
  /** The visitors held, in no particular order. */
  visitors(): DirectoryEntry[];
  /** What is held of `studentId`, as this process wrote it or the private feed last told it. */
  get(studentId: string): DirectoryEntry | undefined;
  /** Follows a change feed of the private database until the subscription ends. */
  follow(changes: Observable<Change>, onUndecodable: (id: string) => void): Subscription;
}

/** The students of a status in name order, by sort key. */
const nameOrder = (sorted: ReadonlyArray<DirectoryEntry> = []): OrderedList<DirectoryEntry> =>
  orderedList((entry) => entry.sortKey, sorted);

export interface StudentDirectoryOptions {
  /**
   * A search walks its candidates from the name index while they are at most this share of the list,
   * else scans the list. The candidates are a subset of the list in its order, so walking them never
   * reads more than the scan: the default is the whole list (tests set 0 to reach the scan).
   */
  readonly indexedShare?: number;
}

export const studentDirectory = (options: StudentDirectoryOptions = {}): StudentDirectory => {
  const indexedShare = options.indexedShare ?? 1;
  // Each status's students in name order, in chunks, so placing a student costs about the same
  // whatever the roll (a sorted array moved half of itself at each write, decision 0068).
  const sorted: Record<StudentStatus, OrderedList<DirectoryEntry>> = {
    ACTIVE: nameOrder(),
    DELETED: nameOrder(),
  };
  // While a load runs, its entries (and those held before it) wait here, and are sorted at its end.
  const loaded: Record<StudentStatus, DirectoryEntry[]> = { ACTIVE: [], DELETED: [] };
  const entries = new Map<string, DirectoryEntry>();
  // consentId → (studentId, active), so a revocation can be applied without reading the store.
  const consents = new Map<string, { readonly subjectId: string; readonly active: boolean }>();
  const activeBySubject = new Map<string, number>();
  const recordedBySubject = new Map<string, number>();
  const nameIndex = () => trigramIndex<DirectoryEntry>((entry) => entry.sortKey);
  // One index per status, so a page's walk reads only students of the status it lists.
  const names: Record<StudentStatus, ReturnType<typeof nameIndex>> = {
    ACTIVE: nameIndex(),
    DELETED: nameIndex(),
  };
  // The stored photo key of the students that have one, shown only while a consent is active: a
  // consent's change re-projects the entry without the record.
  const photoRefs = new Map<string, string>();
  // A roll has a few classes: one string of each id for every student in it.
  const classIds = new Map<string, string>();
  const internClass = (classId: string): string => {
    const held = classIds.get(classId);
    if (held !== undefined) return held;
    classIds.set(classId, classId);
    return classId;
  };
  const visitorIds = new Set<string>();

  let loading = false;
  /** Places `entry` (replacing what was held for its student) in the name order and the name index. */
  const place = (entry: DirectoryEntry) => {
    const old = entries.get(entry.studentId);
    if (old !== undefined) {
      if (!loading) sorted[old.status].delete(old.sortKey);
      else {
        const list = loaded[old.status];
        list.splice(list.indexOf(old), 1);
      }
    }
    entries.set(entry.studentId, entry);
    if (loading) {
      loaded[entry.status].push(entry);
      return;
    }
    if (old !== undefined && old.status !== entry.status) names[old.status].delete(old.studentId);
    names[entry.status].set(entry.studentId, entry.folded, entry);
    sorted[entry.status].set(entry.sortKey, entry);
  };
  const bySortKey = (a: DirectoryEntry, b: DirectoryEntry) =>
    a.sortKey < b.sortKey ? -1 : a.sortKey > b.sortKey ? 1 : 0;
  const beginLoad = () => {
    loading = true;
    for (const status of ['ACTIVE', 'DELETED'] as const) {
      loaded[status] = sorted[status].values();
      sorted[status] = nameOrder();
    }
  };
  // The name order and the name indexes are made again from the sorted lists: in order, each
  // posting is an append.
  const endLoad = () => {
    loading = false;
    for (const status of ['ACTIVE', 'DELETED'] as const) {
      const list = loaded[status].sort(bySortKey);
      loaded[status] = [];
      sorted[status] = nameOrder(list);
      names[status] = nameIndex();
      for (const entry of list) names[status].set(entry.studentId, entry.folded, entry);
    }
  };
  const addAll = (page: ReadonlyArray<StudentDoc>) => {
    for (const doc of page) directory.upsertStudent(doc);
  };
  // Whether the entry held already says what the summary says (the photo key as stored).
  const holds = (known: DirectoryEntry, s: StudentSummary): boolean =>
    known.updatedAt === s.updatedAt &&
    known.displayName === s.displayName &&
    known.status === s.status &&
    known.classId === s.classId &&
    known.visitor === s.visitor &&
    known.visitorSince === s.visitorSince &&
    (photoRefs.get(s.studentId) ?? null) === s.photoRef;
  // Feeds deliver a document after our own write already applied it: keep the newest, and leave an
  // entry that already says what the summary says where it is. Placing it again moved two slices of a
  // list as long as the roll for every student an import wrote, when the feed told each one back
  // (decision 0068).
  const upsert = (summary: StudentSummary) => {
    const known = entries.get(summary.studentId);
    if (known !== undefined && known.updatedAt > summary.updatedAt) return;
    if (known !== undefined && holds(known, summary)) return;
    project(summary);
  };

  const shownPhoto = (studentId: string): string | null =>
    photosAllowed(activeBySubject.get(studentId) ?? 0) ? (photoRefs.get(studentId) ?? null) : null;

  const project = (s: StudentSummary) => {
    if (s.photoRef === null) photoRefs.delete(s.studentId);
    else photoRefs.set(s.studentId, s.photoRef);
    if (s.visitor) visitorIds.add(s.studentId);
    else visitorIds.delete(s.studentId);
    const sortKey = sortKeyOf(s.displayName, s.studentId);
    place({
      studentId: s.studentId,
      displayName: s.displayName,
      // A slice of the sort key shares its characters: one copy of each folded name.
      folded: sortKey.slice(0, sortKey.length - s.studentId.length - 1),
      sortKey,
      status: s.status,
      photoRef: shownPhoto(s.studentId),
      updatedAt: s.updatedAt,
      classId: internClass(s.classId),
      visitor: s.visitor,
      visitorSince: s.visitorSince,
    });
  };

  const directory: StudentDirectory = {
    load(studentDocs, consentDocs) {
      for (const c of consentDocs) directory.upsertConsent(c);
      beginLoad();
      try {
        addAll(studentDocs);
      } finally {
        endLoad();
      }
    },

    async loadPages(each) {
      beginLoad();
      try {
        await each(addAll);
      } finally {
        endLoad();
      }
    },

    loadSummaries(summaries) {
      beginLoad();
      try {
        for (const summary of summaries) upsert(summary);
      } finally {
        endLoad();
      }
    },

    // In the lists' order: a load of them (a snapshot's, at the next start) finds them sorted, and its
    // sort and its name index's appends cost one pass (decision 0062).
    summaries: () =>
      [...sorted.ACTIVE.values(), ...sorted.DELETED.values()].map((e) => ({
        studentId: e.studentId,
        displayName: e.displayName,
        status: e.status,
        photoRef: photoRefs.get(e.studentId) ?? null,
        updatedAt: e.updatedAt,
        classId: e.classId,
        visitor: e.visitor,
        visitorSince: e.visitorSince,
      })),

    upsertStudent: (doc) => upsert(summaryOf(doc)),

    upsertConsent(doc) {
      const before = consents.get(doc.consentId);
      const active = doc.subject_type === 'STUDENT' && doc.revoked_at === null;
      if (before === undefined && doc.subject_type === 'STUDENT')
        recordedBySubject.set(doc.subject_id, (recordedBySubject.get(doc.subject_id) ?? 0) + 1);
      if (before !== undefined && before.active === active) return;
      consents.set(doc.consentId, { subjectId: doc.subject_id, active });
      const delta = (active ? 1 : 0) - (before?.active === true ? 1 : 0);
      if (delta === 0) return;
      activeBySubject.set(doc.subject_id, (activeBySubject.get(doc.subject_id) ?? 0) + delta);
      const entry = entries.get(doc.subject_id);
      if (entry !== undefined) place({ ...entry, photoRef: shownPhoto(entry.studentId) });
    },

    activeConsents: (studentId) => activeBySubject.get(studentId) ?? 0,
    consentsRecorded: (studentId) => recordedBySubject.get(studentId) ?? 0,

    page({ status, q, classId, afterKey, limit }) {
      const list = sorted[status];
      const folded = foldName(q);
      const matches = queryMatcher(folded);
      const indexed = names[status].candidates(folded, afterKey);
      // Either way, students of the status in name order after `afterKey`.
      const inOrder: Iterable<DirectoryEntry> =
        indexed !== undefined && indexed.count <= list.size * indexedShare
          ? indexed.values
          : list.after(afterKey);
      const items: DirectoryEntry[] = [];
      for (const entry of inOrder) {
        if (!matches(entry.folded) || (classId !== undefined && entry.classId !== classId)) continue;
        if (items.length === limit) return { items, lastKey: items[items.length - 1]?.sortKey };
        items.push(entry);
      }
      return { items, lastKey: undefined };
    },

    named(status, folded) {
      const out: string[] = [];
      // A sort key is the folded name, a NUL and the id: the name's students come together, first
      // among the keys from the name alone on.
      for (const entry of sorted[status].after(folded)) {
        if (entry.folded !== folded) break;
        out.push(entry.studentId);
      }
      return out;
    },

    size: () => entries.size,

    visitors: () => [...visitorIds].flatMap((id) => entries.get(id) ?? []),
    get: (studentId) => entries.get(studentId),

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

/**
 * The import's matching (`StudentImportDeps.activeMatching`) on the embedded store, from the
 * directory: the active students named as a row, whatever their birth date, and the rows' own ids as
 * asked. A superset, as CouchDB's index answers: the import reads those records and compares them.
 * Reading the whole roll's records for every file instead took most of a late file's time (decision
 * 0068). Sound where the directory holds every acknowledged write, as the embedded store's does: this
 * process makes every write to its student records and projects each before answering it.
 */
export const directoryMatching =
  (directory: Pick<StudentDirectory, 'named'>) =>
  async (query: MatchQuery): Promise<string[]> => {
    const found = new Set(query.ids);
    for (const name of new Set(query.keys.map(([folded]) => folded)))
      for (const id of directory.named('ACTIVE', name)) found.add(id);
    return [...found];
  };
