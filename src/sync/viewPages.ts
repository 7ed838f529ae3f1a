/**
 * What the CouchDB directory's searches share (`couchStudentDirectory.ts`, and `trigramSearch.ts`
 * while it is kept): a list item from a view's row, and a page of rows read in their view's order
 * rather than the list's.
 */
import type { StudentStatus } from '../domain/student.js';
import { photosAllowed } from '../rules/students.js';
import type { SuffixRow, ViewRow } from '../store/studentViews.js';
import type { DirectoryEntry, DirectoryPage, StudentDirectory } from './studentDirectory.js';

/**
 * A page's first batch is its size and one (a list's rows all match; 200 rows of long keys took 0.9 s
 * at 10 concurrent pages on the loaded machine, 51 rows 0.16 s); each further batch doubles, to at most
 * `MAX_BATCH`.
 */
export const MAX_BATCH = 2_000;
/**
 * How long a page's query waits for the index to hold the writes seen before the page reads it as it
 * stands: well inside the request's 6 s deadline and the store's 5 s silence limit.
 */
export const FRESH_WAIT_MS = 2_000;
export const LATE: unique symbol = Symbol('late');

/** `answer`, or `LATE` once `ms` have passed: the answer, or its failure, then comes to nobody. */
export const answerWithin = async <A>(answer: Promise<A>, ms: number): Promise<A | typeof LATE> => {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<typeof LATE>((resolve) => {
    timer = setTimeout(() => resolve(LATE), ms);
  });
  try {
    const first = await Promise.race([answer, late]);
    if (first === LATE) answer.catch(() => undefined);
    return first;
  } finally {
    clearTimeout(timer);
  }
};

/** A list item from a view's row: the photo shown only while an image consent is active. */
export const entryOfRow = (
  held: Pick<StudentDirectory, 'activeConsents'>,
  row: Pick<ViewRow, 'studentId' | 'classId' | 'entry'>,
  status: StudentStatus,
  sortKey: string,
): DirectoryEntry => ({
  studentId: row.studentId,
  displayName: row.entry.displayName,
  folded: sortKey.slice(0, sortKey.length - row.studentId.length - 1),
  sortKey,
  status,
  photoRef: photosAllowed(held.activeConsents(row.studentId)) ? row.entry.photoRef : null,
  updatedAt: row.entry.updatedAt,
  classId: row.classId,
  visitor: row.entry.visitorSince !== null,
  visitorSince: row.entry.visitorSince,
});

/**
 * The page after `afterKey` of a word's rows read whole (every match holds the word, so every match
 * is among them): the matches of the query and class, once each, sorted in list order.
 */
export const pageOfWordRows = (
  rows: readonly SuffixRow[],
  query: {
    readonly matches: (folded: string) => boolean;
    readonly classId: string | undefined;
    readonly afterKey: string | undefined;
    readonly limit: number;
  },
  entryOf: (row: SuffixRow, sortKey: string) => DirectoryEntry,
): DirectoryPage => {
  const { matches, classId, afterKey, limit } = query;
  const found = new Map<string, { readonly row: SuffixRow; readonly sortKey: string }>();
  for (const row of rows) {
    if (found.has(row.studentId) || !matches(row.folded)) continue;
    if (classId !== undefined && row.classId !== classId) continue;
    const sortKey = `${row.folded}\u0000${row.studentId}`;
    if (afterKey !== undefined && sortKey <= afterKey) continue;
    found.set(row.studentId, { row, sortKey });
  }
  const sorted = [...found.values()].sort((a, b) => (a.sortKey < b.sortKey ? -1 : 1));
  const page = sorted.slice(0, limit);
  return {
    items: page.map((f) => entryOf(f.row, f.sortKey)),
    lastKey: sorted.length > limit ? page[page.length - 1]?.sortKey : undefined,
  };
};
