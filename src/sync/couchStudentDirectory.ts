/**
 * The roll as CouchDB serves it (decision 0056): list pages and search read the private database's
 * student views (`src/store/studentViews.ts`), so an instance holds no copy of the roll and starts
 * without reading it. What stays in memory is small: the image consents (the photo shown on each
 * entry, the admission rule's count) and the visitors (their report), both kept as the in-memory
 * directory keeps them, by this process's writes and by the private change feed.
 *
 * A page answers what the in-memory directory's does: the students of a status whose folded name
 * holds every word of the query, after the cursor's sort key, in sort-key order. It reads
 * `student-list` (decision 0073): a list is the name view read in order; a search counts its words of
 * three letters or more in `by-word` (one grouped read each: the word's codes, the rests of the
 * words that start with it, and their rows) and takes the rarest. A rare word's rows are read whole
 * (they hold every match); a common word's few codes are read in list order, merged, each row
 * checked against the query until a page is found, as the trigram view's rows were read (0061). A
 * common word of many codes (three letters) reads the name view in list order for at most as many
 * rows as it has, then, where that did not fill the page, its range whole. The items are the rows
 * read (each row carries what its item shows).
 *
 * While `student-list` is being built (a roll's first start of the version that adds it), a page is
 * answered from the views before it (`trigramSearch.ts`).
 */
import * as E from 'fp-ts/lib/Either.js';
import type { Subscription } from 'rxjs';
import { ConsentDoc } from '../domain/consent.js';
import { type StudentDoc, StudentDoc as StudentDocC, type StudentStatus } from '../domain/student.js';
import { waitAtMost } from '../lib/timeouts.js';
import { foldName, queryMatcher } from '../rules/students.js';
import {
  type StudentViews,
  SUFFIX_UNITS,
  type SuffixBatch,
  type SuffixRow,
  sortKeyOfViewKey,
  type ViewRow,
  viewKeyOf,
  type WordCode,
} from '../store/studentViews.js';
import type { DirectoryPort } from './directoryPort.js';
import type { DirectoryEntry, DirectoryPage, StudentDirectory } from './studentDirectory.js';
import { type TrigramSearchDeps, trigramSearch } from './trigramSearch.js';
import { answerWithin, entryOfRow, FRESH_WAIT_MS, LATE, MAX_BATCH, pageOfWordRows } from './viewPages.js';

/**
 * A word with at most this many rows in `by-word` is read whole (one query, some hundred kilobytes);
 * past it, a page of the word read in list order (its codes merged) reads about the page's worth of
 * rows a code where its matches are spread, fewer than the word's own rows (decision 0073).
 */
const WHOLE_UP_TO = 1_000;
/**
 * A common word of at most this many codes (the rests of words that start with it: `maria`, `mariana`,
 * … a handful) is read as its codes' rows merged in list order, one query a code at once.
 */
const MERGE_AT_MOST = 16;
/**
 * A common word of more codes (a query of three letters: `mar`) reads the name view first; its range
 * is read whole, after the name view did not fill the page, only up to this many rows (some
 * megabytes); past it the name view is read on to the page's end.
 */
const WHOLE_AT_MOST = 50_000;
/** How long a word's count is reused to choose the rarest word (a count of none never is). */
const COUNTS_FOR_MS = 60_000;
/** Words' counts held at most (a kiosk's typing makes many): past it, they are forgotten at once. */
const COUNTS_HELD = 2_000;
/** How long after `student-list` was found being built it is asked again (its build goes on meanwhile). */
const BUILD_ASKED_EVERY_MS = 30_000;

type View = 'name' | 'word';

export interface CouchDirectoryDeps {
  readonly views: StudentViews;
  /** Holds the consents and the visitors (loaded by the caller), never the rest of the roll. */
  readonly held: StudentDirectory;
  /**
   * Settles once `held` holds every visitor stored before the start (read from an index that may lag
   * an import at the start); the visitors' report waits for it. Already, when not given.
   */
  readonly visitorsHeld?: Promise<unknown>;
  /** Told of each student write the private feed brings (to keep the views current). */
  readonly onStudentWrite?: () => void;
  /** Rows read in a page's first batch (tests set a small one to page through several). */
  readonly firstBatch?: number;
  /** A word read whole at or under this count (tests set 0, or a large one). */
  readonly wholeUpTo?: number;
  /** A common word of at most this many codes is read as their rows merged (tests set 0, or a large one). */
  readonly mergeAtMost?: number;
  /** A common word's range read whole up to this many rows (tests set a small one). */
  readonly wholeAtMost?: number;
  /** How long a word's count is reused (tests set 0); the clock it is timed by. */
  readonly countsForMs?: number;
  readonly now?: () => number;
  /** How long a page's first query waits for the index to catch up before the page reads it as it stands. */
  readonly freshWaitMs?: number;
  /** The search of the views before `student-list`, tuned (tests). */
  readonly trigrams?: Omit<TrigramSearchDeps, 'views' | 'held'>;
}

/** The port, and whether its pages read the views before `student-list` (their refresh is then due). */
export interface CouchDirectory extends DirectoryPort {
  readsTrigrams(): boolean;
}

/** The distinct words of a folded query a `by-word` key can hold: three units or more, cut to its length. */
export const queryWords = (foldedQuery: string): string[] => [
  ...new Set(
    foldedQuery
      .split(' ')
      .filter((w) => w.length >= 3)
      .map((w) => w.slice(0, SUFFIX_UNITS)),
  ),
];

export const couchStudentDirectory = (deps: CouchDirectoryDeps): CouchDirectory => {
  const { views, held } = deps;
  const now = deps.now ?? (() => Date.now());
  const countsForMs = deps.countsForMs ?? COUNTS_FOR_MS;
  const freshWaitMs = deps.freshWaitMs ?? FRESH_WAIT_MS;
  const trigrams = trigramSearch({ ...deps.trigrams, views: views.trigrams, held });

  // Student writes this instance has seen (its own, as it makes them; others', as its private feed
  // tells them), and how many of them each view's index was known to hold: as many as were seen when a
  // waiting (`update=true`) query began that then answered. While none was seen since, a page reads
  // the index as it stands (`stale=ok`, about half the time at 10 concurrent pages, decision 0056):
  // it holds every write this instance made, and others' once the feed told them, as the in-memory
  // directory did. Per view: CouchDB indexes a design document's views together, PouchDB (the tests'
  // embedded variant) each on its own.
  let writesSeen = 0;
  const indexHolds: Record<View, number> = { name: -1, word: -1 };

  // Whether `student-list` was once found holding every write, by this instance or another (the
  // database's mark): then it is read for good — behind an import, as it stands. Until then it may be
  // being built (the roll's first start of the version that adds it: the views before it hold the
  // roll, it holds a part), and pages read the views before it while it is asked again now and then.
  let listBuilt = false;
  let markRead: Promise<boolean> | undefined;
  let listAsked: Promise<void> | undefined;
  let listFoundBehind = false;
  let listAskedAgainAt = Number.NEGATIVE_INFINITY;
  const listReady = async (): Promise<boolean> => {
    if (listBuilt) return true;
    // Read once; a failed read is taken for no mark (the wait below decides).
    markRead ??= views.listMarkedBuilt().catch(() => false);
    if (await markRead) {
      listBuilt = true;
      return true;
    }
    if (listAsked === undefined && now() >= listAskedAgainAt) {
      const seenBefore = writesSeen;
      const asked = views.listIndexed().then(
        async () => {
          listBuilt = true;
          indexHolds.name = Math.max(indexHolds.name, seenBefore);
          indexHolds.word = Math.max(indexHolds.word, seenBefore);
          // For the next starts and the other instances: a failed mark is made by a later start.
          await views.markListBuilt().catch(() => undefined);
        },
        // The store's silence limit cut the wait: CouchDB goes on building it.
        () => {
          listFoundBehind = true;
          listAskedAgainAt = now() + BUILD_ASKED_EVERY_MS;
        },
      );
      listAsked = asked.finally(() => {
        listAsked = undefined;
      });
    }
    // Once it was found behind, a page does not wait for it: the views before it answer at once.
    if (listAsked !== undefined && !listFoundBehind) {
      await waitAtMost(listAsked, freshWaitMs);
      if (!listBuilt) listFoundBehind = true;
    }
    return listBuilt;
  };

  // Words' counts (their codes' rows, above none), and when read: a count only chooses which word's
  // rows a search reads and how, and every row read is checked against the query, so a count from a
  // moment ago costs at most a longer read, never a wrong answer. A count of none ends a search, so
  // it is never reused (a student written since would not be found). The codes a merge reads are
  // reused only while no student write was seen since they were read from an index that held every
  // write seen (a code written since would be missed), as a page reads the index as it stands: a
  // first name's page then reads its rows alone (its codes took 5.9 ms of CouchDB's CPU at 50,000).
  const heldCounts = new Map<
    string,
    {
      readonly at: number;
      readonly count: number;
      /** The word's codes, and the writes seen when they were read, where the index held them all. */
      readonly codes: { readonly seen: number; readonly codes: ReadonlyArray<WordCode> } | undefined;
    }
  >();

  const entryOf = (
    row: Pick<ViewRow, 'studentId' | 'classId' | 'entry'>,
    status: StudentStatus,
    sortKey: string,
  ): DirectoryEntry => entryOfRow(held, row, status, sortKey);

  // Only a visitor (or one that was) is held: the report reads them, a check-in finds them at once.
  const upsertStudent = (doc: StudentDoc) => {
    writesSeen += 1;
    trigrams.sawWrite();
    if (doc.visitor || held.get(doc.studentId) !== undefined) held.upsertStudent(doc);
  };

  const listPage = async ({
    status,
    q,
    classId,
    afterKey,
    limit,
  }: Parameters<DirectoryPort['page']>[0]): Promise<DirectoryPage> => {
    // A query of a view behind the writes seen waits for the index to hold them for at most
    // `freshWaitMs`; past that (the index behind a bulk write: an import), the page reads the index
    // as it stands, so it answers, without the last students indexing has not reached.
    let waited = true;
    const ask = async <A>(view: View, run: (fresh: boolean) => Promise<A>): Promise<A> => {
      if (!waited || writesSeen === indexHolds[view]) return run(false);
      const seenBefore = writesSeen;
      const waiting = run(true).then((answer) => {
        indexHolds[view] = Math.max(indexHolds[view], seenBefore);
        return answer;
      });
      const first = await answerWithin(waiting, freshWaitMs);
      if (first !== LATE) return first;
      waited = false;
      return run(false);
    };
    // A word's codes read by this page, to merge them without reading them again.
    const readNow = new Map<string, ReadonlyArray<WordCode>>();
    const codesOf = async (word: string): Promise<ReadonlyArray<WordCode>> => {
      const seenBefore = writesSeen;
      const codes = await ask('word', (f) => views.wordCodes(status, word, f));
      readNow.set(word, codes);
      const count = codes.reduce((sum, c) => sum + c.count, 0);
      const key = `${status}\u0000${word}`;
      if (count > 0) {
        if (heldCounts.size >= COUNTS_HELD) heldCounts.clear();
        const current = indexHolds.word >= seenBefore;
        heldCounts.set(key, { at: now(), count, codes: current ? { seen: seenBefore, codes } : undefined });
      } else heldCounts.delete(key);
      return codes;
    };
    // The word's codes held, where no student write was seen since they were read.
    const heldCodesOf = (word: string): ReadonlyArray<WordCode> | undefined => {
      const kept = heldCounts.get(`${status}\u0000${word}`);
      if (kept?.codes === undefined || now() - kept.at >= countsForMs) return undefined;
      return kept.codes.seen === writesSeen ? kept.codes.codes : undefined;
    };
    const countOf = async (word: string): Promise<number> => {
      const kept = heldCounts.get(`${status}\u0000${word}`);
      if (kept !== undefined && now() - kept.at < countsForMs) return kept.count;
      return (await codesOf(word)).reduce((sum, c) => sum + c.count, 0);
    };

    const folded = foldName(q);
    const matches = queryMatcher(folded);
    const rangeRead = (word: string, cap: number): Promise<SuffixBatch> =>
      ask('word', (f) => views.byWord(status, word, cap + 1, f));
    const pageOfRange = (rows: readonly SuffixRow[]): DirectoryPage =>
      pageOfWordRows(rows, { matches, classId, afterKey, limit }, (row, sortKey) =>
        entryOf(row, status, sortKey),
      );

    // The name view in list order from the cursor, resumable: `scan(budget)` reads at most `budget`
    // more rows and answers whether the page is decided (filled, or the view ended).
    let seen = afterKey === undefined ? undefined : viewKeyOf(afterKey);
    let from = seen ?? '';
    let n = deps.firstBatch ?? limit + 1;
    let ended = false;
    const found: Array<{ readonly row: ViewRow; readonly sortKey: string }> = [];
    const scan = async (budget: number): Promise<boolean> => {
      let left = budget;
      while (!ended && found.length <= limit && left > 0) {
        const take = Math.min(n, left);
        const batch = await ask('name', (f) => views.byName(status, from, take, f));
        left -= take;
        for (const row of batch.rows) {
          if (seen !== undefined && row.viewKey <= seen) continue;
          const sortKey = sortKeyOfViewKey(row.viewKey);
          const name = sortKey.slice(0, sortKey.length - row.studentId.length - 1);
          if (!matches(name) || (classId !== undefined && row.classId !== classId)) continue;
          found.push({ row, sortKey });
          if (found.length > limit) break;
        }
        if (batch.next === undefined) ended = true;
        else {
          seen = batch.next;
          from = batch.next;
          n = Math.min(n * 2, MAX_BATCH);
        }
      }
      return ended || found.length > limit;
    };
    const pageOfScan = (): DirectoryPage => {
      const page = found.slice(0, limit);
      return {
        items: page.map((f) => entryOf(f.row, status, f.sortKey)),
        lastKey: found.length > limit ? page[page.length - 1]?.sortKey : undefined,
      };
    };

    // The rows of `codes` in list order, merged, each checked, until a page and one more match (or
    // their end): each code's rows are in list order in `by-word`, as a trigram's were.
    const merge = async (codes: ReadonlyArray<WordCode>): Promise<DirectoryPage> => {
      const readers = codes.map((c) => ({
        code: c.code,
        rows: [] as ViewRow[],
        at: 0,
        // Rows at or before it were read (the cursor's, or the last batch's end).
        after: seen,
        n: deps.firstBatch ?? limit + 1,
        done: false,
      }));
      // Until the reader has a row not read before, or its code's rows end: a batch may hold only
      // rows read already (a name holding the word twice is two rows of one key).
      const fill = async (r: (typeof readers)[number]) => {
        while (r.at >= r.rows.length && !r.done) {
          const batch = await ask('word', (f) => views.byWordCode(status, r.code, r.after ?? '', r.n, f));
          const after = r.after;
          r.rows = batch.rows.filter((row) => after === undefined || row.viewKey > after);
          r.at = 0;
          r.done = batch.next === undefined;
          if (batch.next !== undefined) r.after = batch.next;
          r.n = Math.min(r.n * 2, MAX_BATCH);
        }
      };
      const ids = new Set<string>();
      for (;;) {
        await Promise.all(readers.map(fill));
        let next: (typeof readers)[number] | undefined;
        for (const r of readers) {
          const row = r.rows[r.at];
          if (row !== undefined && (next === undefined || row.viewKey < (next.rows[next.at]?.viewKey ?? '')))
            next = r;
        }
        const row = next?.rows[next.at];
        if (next === undefined || row === undefined) break;
        next.at += 1;
        // A name may hold the word in two places (two rows, one code or two).
        if (ids.has(row.studentId)) continue;
        ids.add(row.studentId);
        const sortKey = sortKeyOfViewKey(row.viewKey);
        const name = sortKey.slice(0, sortKey.length - row.studentId.length - 1);
        if (!matches(name) || (classId !== undefined && row.classId !== classId)) continue;
        found.push({ row, sortKey });
        if (found.length > limit) break;
      }
      return pageOfScan();
    };

    const words = queryWords(folded);
    if (words.length === 0) {
      await scan(Number.POSITIVE_INFINITY);
      return pageOfScan();
    }
    const counts = await Promise.all(words.map(countOf));
    let rarest = 0;
    for (let i = 1; i < counts.length; i += 1) if ((counts[i] ?? 0) < (counts[rarest] ?? 0)) rarest = i;
    const word = words[rarest];
    const fewest = counts[rarest] ?? 0;
    if (word === undefined || fewest === 0) return { items: [], lastKey: undefined };
    const wholeUpTo = deps.wholeUpTo ?? WHOLE_UP_TO;
    if (fewest <= wholeUpTo) {
      // Read with room: the count may be from a moment ago.
      const batch = await rangeRead(word, 2 * wholeUpTo);
      if (batch.complete) return pageOfRange(batch.rows);
    }
    const current = readNow.get(word) ?? heldCodesOf(word) ?? (await codesOf(word));
    if (current.length <= (deps.mergeAtMost ?? MERGE_AT_MOST)) return merge(current);
    if (await scan(fewest)) return pageOfScan();
    const batch = await rangeRead(word, deps.wholeAtMost ?? WHOLE_AT_MOST);
    if (batch.complete) return pageOfRange(batch.rows);
    await scan(Number.POSITIVE_INFINITY);
    return pageOfScan();
  };

  return {
    upsertStudent,
    upsertConsent: (doc) => held.upsertConsent(doc),
    activeConsents: (id) => held.activeConsents(id),
    consentsRecorded: (id) => held.consentsRecorded(id),
    async visitors() {
      await deps.visitorsHeld;
      return held.visitors();
    },
    // Visitors only: every other caller reads the record from the store when it is not held here.
    get: (id) => held.get(id),
    readsTrigrams: () => !listBuilt && listFoundBehind,

    async page(query) {
      return (await listReady()) ? listPage(query) : trigrams.page(query);
    },

    follow(changes, onUndecodable): Subscription {
      return changes.subscribe((change) => {
        if (change.deleted || change.doc === undefined) return;
        if (change.id.startsWith('student:')) {
          const d = StudentDocC.decode(change.doc);
          if (E.isRight(d)) upsertStudent(d.right);
          else {
            writesSeen += 1;
            trigrams.sawWrite();
            onUndecodable(change.id);
          }
          deps.onStudentWrite?.();
        } else if (change.id.startsWith('imageConsent:')) {
          const d = ConsentDoc.decode(change.doc);
          if (E.isRight(d)) held.upsertConsent(d.right);
          else onUndecodable(change.id);
        }
      });
    },
  };
};
