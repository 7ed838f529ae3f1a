/**
 * The search of decisions 0061 and 0067, read while the list's design document of decision 0073
 * (`student-list`) is being built: a roll's first start of the version that adds it, minutes at
 * 250,000 students. `couchStudentDirectory.ts` answers from it until then; a later version removes it
 * with the views it reads (`student-directory`, `student-search`).
 *
 * A page answers what the in-memory directory's does: the students of a status whose folded name
 * holds every word of the query, after the cursor's sort key, in sort-key order. Where a query word
 * has three letters or more, the rows of its rarest trigram (the view's counts choose it) hold every
 * match, in list order; otherwise the name view is read in order. Either is read in batches until a
 * page and one more match are found, each row checked against the query with the folded name its key
 * spells; the items are the rows read (each row carries what its item shows), so no record is read
 * and a page of either kind is usually one query (decision 0061).
 */
import type { StudentStatus } from '../domain/student.js';
import { waitAtMost } from '../lib/timeouts.js';
import { foldName, queryMatcher } from '../rules/students.js';
import {
  sortKeyOfViewKey,
  type TrigramViews,
  type ViewBatch,
  type ViewRow,
  viewKeyOf,
} from '../store/studentViews.js';
import type { PageQuery } from './directoryPort.js';
import type { DirectoryEntry, DirectoryPage, StudentDirectory } from './studentDirectory.js';
import { answerWithin, entryOfRow, FRESH_WAIT_MS, LATE, MAX_BATCH, pageOfWordRows } from './viewPages.js';

/** How long the trigrams' counts read at once are reused. */
const COUNTS_FOR_MS = 60_000;
/**
 * How long a search waits for the grouped read of every trigram's count before it asks its own
 * trigrams' counts alone (decision 0072): that read took 5.4–5.9 s beside an import at 50,000
 * students, past the store's silence limit, where one trigram's count took 20–60 ms.
 */
const COUNTS_WAIT_MS = 500;
/**
 * A search whose rarest trigram more students hold than this reads its most selective word's range
 * of `by-suffix` first (decision 0067); at or under it, the trigram's rows are few and in list order.
 */
const SUFFIX_ABOVE = 100;
/**
 * The rows a `by-suffix` read takes at most: past them the word is common, its rows are not in list
 * order, and the trigram's serve (a page of 50 of a tenth of the roll). A read cut at the cap is the
 * price of finding that out: the word is then not tried again while the counts are held.
 */
const SUFFIX_CAP = 100;
/** How long a suffix index found behind is left to its build before a search waits for it again. */
const SUFFIX_BEHIND_MS = 30_000;
/** Common words remembered at most (a kiosk's typing makes many): past it, they are forgotten at once. */
const COMMON_WORDS_HELD = 1_000;

export interface TrigramSearchDeps {
  readonly views: TrigramViews;
  /** Holds the consents (a photo is shown while one is active). */
  readonly held: Pick<StudentDirectory, 'activeConsents'>;
  /** Rows read in a page's first batch (tests set a small one to page through several). */
  readonly firstBatch?: number;
  /** How long a trigram's count is reused (tests set 0); the clock it is timed by. */
  readonly countsForMs?: number;
  /** How long a search waits for every trigram's count before it asks its own alone. */
  readonly countsWaitMs?: number;
  readonly now?: () => number;
  /** The rarest trigram's count above which a search tries `by-suffix` (tests set 0 or a large one). */
  readonly suffixAbove?: number;
  /** The rows a `by-suffix` read takes at most (tests set a small one to see the trigrams take over). */
  readonly suffixCap?: number;
  /** How long a page's first query waits for the index to catch up before the page reads it as it stands. */
  readonly freshWaitMs?: number;
}

type View = 'name' | 'trigram' | 'suffix';

/** The distinct trigrams of the query's words of three letters or more. */
export const queryTrigrams = (foldedQuery: string): string[] => {
  const out = new Set<string>();
  for (const word of foldedQuery.split(' '))
    for (let i = 0; i + 3 <= word.length; i += 1) out.add(word.slice(i, i + 3));
  return [...out];
};

/** A page of the roll, and what it is told of the student writes it must find. */
export interface TrigramSearch {
  page(query: PageQuery): Promise<DirectoryPage>;
  /** A student write this instance made or its private feed told (`writesSeen`, below). */
  sawWrite(): void;
}

export const trigramSearch = (deps: TrigramSearchDeps): TrigramSearch => {
  const { views, held } = deps;
  const countsForMs = deps.countsForMs ?? COUNTS_FOR_MS;
  const now = deps.now ?? (() => Date.now());
  // A count (above none) only chooses which trigram's rows a search reads: every row read is checked
  // against the query, so a count from a moment ago costs at most a longer read, never a wrong
  // answer. Every trigram's count of a status is read at once (one grouped read of the view, some
  // thousands of rows) and reused for `countsForMs`, so a search asks CouchDB for its rows alone,
  // whichever names it holds, instead of one count a trigram not asked for lately (seven for `maria
  // 043210`; decision 0061). A trigram the held counts lack is asked alone, each time: a count of
  // none ends the search with no match, so it is never from a moment ago, or a student written since
  // would not be found.
  interface HeldCounts {
    readonly at: number;
    readonly counts: Promise<ReadonlyMap<string, number>>;
    /** The counts once read. */
    read: ReadonlyMap<string, number> | undefined;
  }
  const heldCounts = new Map<StudentStatus, HeldCounts>();
  // The held counts of `status` once read; a read under way is waited for at most `countsWaitMs`
  // (undefined past it, or when it failed): the grouped read grows with the roll and with CouchDB's
  // load, and a search does not wait on it when its own trigrams can be asked alone (decision 0072).
  // A read started here goes on behind the search and serves the next ones.
  const countsOf = async (
    status: StudentStatus,
    ask: <A>(view: View, run: (fresh: boolean) => Promise<A>) => Promise<A>,
  ): Promise<ReadonlyMap<string, number> | undefined> => {
    let held = heldCounts.get(status);
    if (held === undefined || now() - held.at >= countsForMs) {
      // One read for the searches that ask meanwhile; a failed one is not kept.
      const entry: HeldCounts = {
        at: now(),
        counts: ask('trigram', (f) => views.trigramCounts(status, f)),
        read: undefined,
      };
      heldCounts.set(status, entry);
      entry.counts.then(
        (counts) => {
          entry.read = counts;
        },
        () => {
          if (heldCounts.get(status) === entry) heldCounts.delete(status);
        },
      );
      held = entry;
    }
    // The handler that keeps the counts was attached first, so it has run once the wait is over.
    if (held.read === undefined)
      await waitAtMost(
        held.counts.catch(() => undefined),
        deps.countsWaitMs ?? COUNTS_WAIT_MS,
      );
    return held.read;
  };
  const countOf = async (
    status: StudentStatus,
    trigram: string,
    ask: <A>(view: View, run: (fresh: boolean) => Promise<A>) => Promise<A>,
  ): Promise<number> => {
    const n = (await countsOf(status, ask))?.get(trigram);
    if (n !== undefined && n > 0) return n;
    return ask('trigram', (f) => views.trigramCount(status, trigram, f));
  };

  // Words whose `by-suffix` range held more rows than a read takes, and when: not tried again for
  // `countsForMs`. A word taken for common wrongly (students renamed since) costs the trigram's read,
  // which answers the same page.
  const commonWords = new Map<string, number>();
  // Until when the suffix view is taken for behind (its index being built): see `askSuffix`.
  let suffixBehindUntil = Number.NEGATIVE_INFINITY;
  const isCommon = (key: string): boolean => {
    const at = commonWords.get(key);
    if (at === undefined) return false;
    if (now() - at < countsForMs) return true;
    commonWords.delete(key);
    return false;
  };

  const entryOf = (
    row: Pick<ViewRow, 'studentId' | 'classId' | 'entry'>,
    status: StudentStatus,
    sortKey: string,
  ): DirectoryEntry => entryOfRow(held, row, status, sortKey);

  // Student writes this instance has seen (its own, as it makes them; others', as its private feed
  // tells them), and how many of them the index was known to hold: as many as were seen when a
  // waiting (`update=true`) query began that then answered. While none was seen since, a page reads
  // the index as it stands (`stale=ok`, about half the time at 10 concurrent pages, decision 0056):
  // it holds every write this instance made, and others' once the feed told them, as the in-memory
  // directory did.
  let writesSeen = 0;
  // Per view: CouchDB indexes a design document's views together, PouchDB (the tests' embedded
  // variant) each on its own.
  const indexHolds: Record<View, number> = { name: -1, trigram: -1, suffix: -1 };

  const search: TrigramSearch = {
    sawWrite() {
      writesSeen += 1;
    },

    async page({ status, q, classId, afterKey, limit }) {
      // A query of a view behind the writes seen waits for the index to hold them for at most
      // `freshWaitMs`; past that (the index behind a bulk write: an import), the page reads the index
      // as it stands, so it answers, without the last students indexing has not reached.
      let waited = true;
      // The answer of a query that waits for the index, or LATE past `freshWaitMs`: the page then
      // reads every view as it stands, without waiting again.
      const fresh = async <A>(view: View, run: (fresh: boolean) => Promise<A>): Promise<A | typeof LATE> => {
        const seenBefore = writesSeen;
        const waiting = run(true).then((answer) => {
          indexHolds[view] = Math.max(indexHolds[view], seenBefore);
          return answer;
        });
        const first = await answerWithin(waiting, deps.freshWaitMs ?? FRESH_WAIT_MS);
        if (first !== LATE) return first;
        waited = false;
        return LATE;
      };
      const ask = async <A>(view: View, run: (fresh: boolean) => Promise<A>): Promise<A> => {
        if (!waited || writesSeen === indexHolds[view]) return run(false);
        const answer = await fresh(view, run);
        return answer === LATE ? run(false) : answer;
      };
      // The suffix view's answer, or none where the page should read the trigrams instead: while
      // its index is being built (a roll's first start of this version: the whole roll missing from
      // it for minutes, where the trigram view holds it), its rows as they stand would find nobody.
      // It is read as it stands only once it was known to hold this instance's writes; behind, it is
      // not asked again for `SUFFIX_BEHIND_MS`.
      const askSuffix = async <A>(run: (fresh: boolean) => Promise<A>): Promise<A | undefined> => {
        if (now() < suffixBehindUntil) return undefined;
        if (writesSeen === indexHolds.suffix) return run(false);
        if (!waited) return indexHolds.suffix >= 0 ? run(false) : undefined;
        const answer = await fresh('suffix', run);
        if (answer !== LATE) return answer;
        suffixBehindUntil = now() + SUFFIX_BEHIND_MS;
        return undefined;
      };
      const folded = foldName(q);
      const matches = queryMatcher(folded);
      const trigrams = queryTrigrams(folded);
      // Rows at or before `seen` were answered already (the cursor's, or the last batch's end).
      let seen = afterKey === undefined ? undefined : viewKeyOf(afterKey);
      let read: (fromKey: string, n: number) => Promise<ViewBatch>;
      if (trigrams.length > 0) {
        const counts = await Promise.all(trigrams.map((g) => countOf(status, g, ask)));
        let rarest = 0;
        for (let i = 1; i < counts.length; i += 1) if ((counts[i] ?? 0) < (counts[rarest] ?? 0)) rarest = i;
        const trigram = trigrams[rarest];
        const fewest = counts[rarest] ?? 0;
        if (trigram === undefined || fewest === 0) return { items: [], lastKey: undefined };
        // The word that holds the rarest trigram: every match holds it whole, and its range of
        // `by-suffix` holds no more students than that trigram's rows.
        const word = folded.split(' ').find((w) => w.includes(trigram)) ?? trigram;
        const wordKey = `${status}\u0000${word}`;
        if (fewest > (deps.suffixAbove ?? SUFFIX_ABOVE) && !isCommon(wordKey)) {
          const cap = deps.suffixCap ?? SUFFIX_CAP;
          const batch = await askSuffix((f) => views.bySuffix(status, word, cap + 1, f));
          // None: its index is behind, and the trigram's rows serve.
          if (batch !== undefined && !batch.complete) {
            if (commonWords.size >= COMMON_WORDS_HELD) commonWords.clear();
            commonWords.set(wordKey, now());
          } else if (batch !== undefined) {
            return pageOfWordRows(batch.rows, { matches, classId, afterKey, limit }, (row, sortKey) =>
              entryOf(row, status, sortKey),
            );
          }
        }
        read = (fromKey, n) => ask('trigram', (f) => views.byTrigram(status, trigram, fromKey, n, f));
      } else read = (fromKey, n) => ask('name', (f) => views.byName(status, fromKey, n, f));

      let from = seen ?? '';
      let n = deps.firstBatch ?? limit + 1;
      const found: Array<{ readonly row: ViewRow; readonly sortKey: string }> = [];
      scan: for (;;) {
        const batch = await read(from, n);
        for (const row of batch.rows) {
          if (seen !== undefined && row.viewKey <= seen) continue;
          const sortKey = sortKeyOfViewKey(row.viewKey);
          const name = sortKey.slice(0, sortKey.length - row.studentId.length - 1);
          if (!matches(name) || (classId !== undefined && row.classId !== classId)) continue;
          found.push({ row, sortKey });
          if (found.length > limit) break scan;
        }
        if (batch.next === undefined) break;
        seen = batch.next;
        from = batch.next;
        n = Math.min(n * 2, MAX_BATCH);
      }
      const page = found.slice(0, limit);
      const items = page.map((f) => entryOf(f.row, status, f.sortKey));
      return { items, lastKey: found.length > limit ? page[page.length - 1]?.sortKey : undefined };
    },
  };
  return search;
};
