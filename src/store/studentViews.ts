/**
 * The student list and search as CouchDB answers them (decision 0056): JavaScript views of the private
 * database's student documents. `student-list` (decision 0073) is what a page reads:
 *
 * - `by-name`: one row a student, keyed `[status, key]`, where `key` is the student's sort key
 *   (`sortKeyOf`: folded name, NUL, id) written with `viewKeyOf` (decision 0061). CouchDB orders
 *   strings by ICU collation, not by code unit as the service's list does; the view key is made of
 *   characters that collate as their code units compare, in codes that order as the units do, so the
 *   view's order is the list's order and a cursor's sort key is a view key.
 * - `by-word`: a row per place in the folded name where three characters without a space begin, keyed
 *   by the rest of that word (as `by-suffix`, decision 0067) and then the list key (`BY_WORD_MAP`),
 *   with `_count`: a word's codes and counts choose how a search reads it, its range holds every
 *   student whose name holds the word, and each code's rows are in list order.
 *
 * The design documents before it stay installed and are read only while `student-list` is first
 * built (`student-directory`: `by-name` and `by-trigram`, a row per distinct trigram with `_count`;
 * `student-search`: `by-suffix`). The visitors and the import's matches have design documents of
 * their own.
 *
 * Each row's value is the class and what a list item shows (name, photo key, last change, and the
 * creation of a visitor), so a class filter reads no document, and neither does a page (decision
 * 0061). Whole records, 50 at once, took about 0.9 s at 10 concurrent pages on the loaded machine, a
 * name view's 51 rows 0.16 s (0056).
 *
 * The views read the folded name the service stores (`nameFolded`): CouchDB 3.4.3's QuickJS has no
 * `String.prototype.normalize`, so a view cannot fold as `foldName` does.
 *
 * CouchDB builds a design document's views when one is queried after writes. A request's query waits
 * for that (`fresh`, CouchDB's default `update=true`), so its answer holds every acknowledged write;
 * the service sets the indexing going after student writes (`refresh`), so a request rarely finds much
 * left to index.
 */
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import { StudentDoc } from '../domain/student.js';
import { patiently } from './boundedFetch.js';
import { getDoc } from './docs.js';
import type { Database } from './pouch.js';
import { isConflict, isStoreTimeout } from './storeErrors.js';

export const STUDENT_VIEWS_ID = '_design/student-directory';
export const VISITOR_VIEWS_ID = '_design/student-visitors';
export const MATCH_VIEWS_ID = '_design/student-matches';
export const SEARCH_VIEWS_ID = '_design/student-search';
/**
 * The list and the search since decision 0073: the name view and the words' view (`by-word`, the
 * suffix view's rows keyed with the list key too, with a `_count` reduction) in one design document,
 * indexed together, without the trigram view. `student-directory` and `student-search` stay installed, read only while this one's
 * index is being built (a roll's first start of the version that adds it).
 */
export const LIST_VIEWS_ID = '_design/student-list';

// Runs inside CouchDB's JavaScript engine (and PouchDB's, in tests): plain ES5, self-contained. The
// same code as `viewKeyOf` below: `s` coded into `key`. A view's signature is its functions' text, so
// the text of the name and trigram views must not change (CouchDB would rebuild them).
const CODE_OF_S = `var A = '0123456789abcdefghijklmnopqrstuvwxyz';
  var b36 = function (n, w) { var o = ''; for (var d = 0; d < w; d++) { o = A.charAt(n % 36) + o; n = Math.floor(n / 36); } return o; };
  var key = '';
  for (var i = 0; i < s.length; i++) {
    var u = s.charCodeAt(i);
    if (u >= 0x61 && u <= 0x7a) key += A.charAt(u - 0x5d);
    else if (u === 0x20) key += '1';
    else if (u < 0x20) key += '0' + A.charAt(u);
    else if (u <= 0x44) key += '2' + A.charAt(u - 0x21);
    else if (u <= 0x60) key += '3' + A.charAt(u - 0x45);
    else if (u <= 0x58a) key += 'u' + b36(u - 0x7b, 2);
    else key += 'v' + b36(u - 0x58b, 4);
  }`;
const ENTRY = `var entry = [doc.classId, doc.displayName, doc.photoRef, doc.updatedAt];
  if (doc.visitor === true) entry.push(doc.createdAt);`;
const VIEW_KEY = `var s = doc.nameFolded + String.fromCharCode(0) + doc.studentId;
  ${CODE_OF_S}
  ${ENTRY}`;

export const BY_NAME_MAP = `function (doc) {
  if (doc.docType !== 'student' || typeof doc.nameFolded !== 'string') return;
  ${VIEW_KEY}
  emit([doc.status, key], entry);
}`;

export const BY_TRIGRAM_MAP = `function (doc) {
  if (doc.docType !== 'student' || typeof doc.nameFolded !== 'string') return;
  ${VIEW_KEY}
  var f = doc.nameFolded;
  var seen = {};
  for (var j = 0; j + 3 <= f.length; j++) {
    var g = f.substr(j, 3);
    if (g.indexOf(' ') >= 0 || Object.prototype.hasOwnProperty.call(seen, g)) continue;
    seen[g] = true;
    emit([doc.status, g, key], entry);
  }
}`;

/**
 * Units of a name word a `by-suffix` key holds at most (`SUFFIX_UNITS`, below): a longer query word is
 * looked up by its first ones and every row read is checked against the whole query.
 */
export const SUFFIX_UNITS = 16;

/**
 * `by-suffix` (decision 0067): a row per place in the folded name where three characters without a
 * space begin, keyed `[status, code]`, `code` the rest of that word from there (at most
 * `SUFFIX_UNITS` units) in the view keys' codes (`viewKeyOf`), so the rows of the students whose name
 * holds a query word are one range of keys: those starting with the word's codes. The value is the
 * folded name and what a list item shows. A word few students hold (`043210`) is then one read of as
 * many rows as students hold it, where the trigram view's rows of its rarest trigram (`043`: some
 * thousand at 250,000 students) must all be read to find them. In a design document of its own, so
 * adding it rebuilt neither the directory's views nor the import's.
 */
export const BY_SUFFIX_MAP = `function (doc) {
  if (doc.docType !== 'student' || typeof doc.nameFolded !== 'string') return;
  var code = function (s) {
  ${CODE_OF_S}
  return key;
  };
  var f = doc.nameFolded;
  ${ENTRY}
  var value = [f, entry];
  for (var j = 0; j + 3 <= f.length; j++) {
    if (f.substr(j, 3).indexOf(' ') >= 0) continue;
    var end = f.indexOf(' ', j);
    var word = f.substring(j, end < 0 ? f.length : end);
    emit([doc.status, code(word.substr(0, ${SUFFIX_UNITS}))], value);
  }
}`;

/**
 * `by-word` (decision 0073): the suffix view's rows keyed `[status, code, key]`, `code` as in
 * `by-suffix` and `key` the student's view key as `by-name` keys it, with `_count`. The rows of the
 * students whose name holds a query word are one range (the codes that start with the word's); within
 * it, the rows of each code are in list order, so a page of a common word merges the few codes' rows
 * in list order, as the trigram view's rows were read, and a word's codes and their counts are one
 * grouped read. The value is what a list item shows; the folded name is the key's.
 */
export const BY_WORD_MAP = `function (doc) {
  if (doc.docType !== 'student' || typeof doc.nameFolded !== 'string') return;
  var code = function (s) {
  ${CODE_OF_S}
  return key;
  };
  var f = doc.nameFolded;
  ${ENTRY}
  var listKey = code(f + String.fromCharCode(0) + doc.studentId);
  for (var j = 0; j + 3 <= f.length; j++) {
    if (f.substr(j, 3).indexOf(' ') >= 0) continue;
    var end = f.indexOf(' ', j);
    var word = f.substring(j, end < 0 ? f.length : end);
    emit([doc.status, code(word.substr(0, ${SUFFIX_UNITS})), listKey], entry);
  }
}`;

export const VISITORS_MAP = `function (doc) {
  if (doc.docType === 'student' && doc.visitor === true) emit(doc.studentId, null);
}`;

/**
 * The active students by folded name and birth date: what an import matches a row without an external
 * id by (with the guardian, compared on the records read after). In a design document of its own, so
 * adding it did not make CouchDB build the directory's views again (decision 0064).
 */
export const BY_NAME_AND_BIRTH_MAP = `function (doc) {
  if (doc.docType !== 'student' || doc.status !== 'ACTIVE' || typeof doc.nameFolded !== 'string') return;
  emit([doc.nameFolded, typeof doc.birthDate === 'string' ? doc.birthDate : ''], null);
}`;

/** The design documents' views, by document id. */
export const STUDENT_DESIGNS = {
  [STUDENT_VIEWS_ID]: {
    'by-name': { map: BY_NAME_MAP },
    'by-trigram': { map: BY_TRIGRAM_MAP, reduce: '_count' },
  },
  [VISITOR_VIEWS_ID]: { all: { map: VISITORS_MAP } },
  [MATCH_VIEWS_ID]: { 'by-name-and-birth': { map: BY_NAME_AND_BIRTH_MAP } },
  [SEARCH_VIEWS_ID]: { 'by-suffix': { map: BY_SUFFIX_MAP } },
  [LIST_VIEWS_ID]: {
    'by-name': { map: BY_NAME_MAP },
    'by-word': { map: BY_WORD_MAP, reduce: '_count' },
  },
};

const ViewsDoc = t.intersection([
  t.type({ _id: t.string, _rev: t.string, views: t.unknown }),
  t.partial({ autoupdate: t.unknown }),
]);

/**
 * Installs or updates the design documents; concurrent starts of several instances are harmless.
 *
 * `autoupdate: false` keeps CouchDB's background indexer (ken) off these views (decision 0066): it
 * indexed them beside an import's writes, a few hundred students at a time, and took CouchDB's CPU a
 * row from about 3 to about 7 ms. The views' refresher (`viewRefresher`) sets their indexing going
 * once student writes pause, and a query that must be current waits for it, as before. CouchDB 3.4
 * reads the field at the top of the document (not under `options`, which is part of the views'
 * signature and would rebuild them); it is not part of the signature, so adding it rebuilds nothing.
 */
export const ensureStudentViews = async (db: Database): Promise<void> => {
  for (const [id, views] of Object.entries(STUDENT_DESIGNS)) {
    const current = await getDoc(db, ViewsDoc, id).catch(() => undefined);
    if (
      current !== undefined &&
      current.autoupdate === false &&
      JSON.stringify(current.views) === JSON.stringify(views)
    )
      continue;
    try {
      await db.put({
        _id: id,
        ...(current === undefined ? {} : { _rev: current._rev }),
        language: 'javascript',
        autoupdate: false,
        views,
      });
    } catch (e) {
      // Another instance installed it at the same moment.
      if (!isConflict(e)) throw e;
    }
  }
};

/**
 * Whether the database holds a student record at all (one `_all_docs` row, no view): an instance on a
 * database without students builds no index at its start (decision 0061); its first page or student
 * write does.
 */
export const holdsAnyStudent = async (db: Database): Promise<boolean> =>
  (await db.allDocs({ startkey: 'student:', endkey: 'student:\ufff0', limit: 1 })).rows.length > 0;

const DIGITS = '0123456789abcdefghijklmnopqrstuvwxyz';
const base36 = (n: number, width: number): string => n.toString(36).padStart(width, '0');

/**
 * A sort key as the views key it (decision 0061): CouchDB orders strings by ICU collation, not by code
 * unit as the list does; strings of `0-9a-z` alone collate as their code units compare. Each UTF-16
 * unit becomes a code of those characters, the codes ordered as the units are and none the start of
 * another, so the keys order as the sort keys do: one character for a lowercase letter (`4`-`t`) and
 * `1` for the space (most of a folded name), two for the other ASCII units (`0`, `2`, `3` and the
 * unit's place in its range), three up to U+058A (`u`), five above (`v`). A name of letters is a
 * quarter of the four hex digits a unit the views keyed before (a name and a UUID: about 86
 * characters instead of 228; the index at 10,000 students 33 MB instead of 47 MB).
 */
export const viewKeyOf = (sortKey: string): string => {
  let key = '';
  for (let i = 0; i < sortKey.length; i += 1) {
    const u = sortKey.charCodeAt(i);
    if (u >= 0x61 && u <= 0x7a) key += DIGITS.charAt(u - 0x5d);
    else if (u === 0x20) key += '1';
    else if (u < 0x20) key += `0${DIGITS.charAt(u)}`;
    else if (u <= 0x44) key += `2${DIGITS.charAt(u - 0x21)}`;
    else if (u <= 0x60) key += `3${DIGITS.charAt(u - 0x45)}`;
    else if (u <= 0x58a) key += `u${base36(u - 0x7b, 2)}`;
    else key += `v${base36(u - 0x58b, 4)}`;
  }
  return key;
};

/** The sort key a view key spells (`viewKeyOf` undone). */
export const sortKeyOfViewKey = (key: string): string => {
  let out = '';
  let i = 0;
  const take = (width: number) => {
    const n = Number.parseInt(key.slice(i + 1, i + 1 + width), 36);
    i += 1 + width;
    return n;
  };
  while (i < key.length) {
    const lead = key.charAt(i);
    const d = DIGITS.indexOf(lead);
    if (d >= 4 && d <= 29) {
      out += String.fromCharCode(d + 0x5d);
      i += 1;
    } else if (lead === '1') {
      out += ' ';
      i += 1;
    } else if (lead === '0') out += String.fromCharCode(take(1));
    else if (lead === '2') out += String.fromCharCode(take(1) + 0x21);
    else if (lead === '3') out += String.fromCharCode(take(1) + 0x45);
    else if (lead === 'u') out += String.fromCharCode(take(2) + 0x7b);
    else out += String.fromCharCode(take(4) + 0x58b);
  }
  return out;
};

/** What the name view holds of a student for a list item. */
export interface NameEntry {
  readonly displayName: string;
  /** The stored photo key: shown only while an image consent is active. */
  readonly photoRef: string | null;
  readonly updatedAt: string;
  /** A visitor's creation; null for any other student. */
  readonly visitorSince: string | null;
}

/** One student of a view, in list order, with what its list item shows. */
export interface ViewRow {
  readonly studentId: string;
  /** The row's key after its status (and trigram): `viewKeyOf` the student's sort key. */
  readonly viewKey: string;
  readonly classId: string;
  readonly entry: NameEntry;
}

/** One student a `by-suffix` read found, with its folded name (the row's key is the word's rest). */
export interface SuffixRow {
  readonly studentId: string;
  readonly folded: string;
  readonly classId: string;
  readonly entry: NameEntry;
}

/**
 * A `by-suffix` read: a row per place the word begins in a name (a student may come twice), in the
 * keys' order, not the list's; `complete` when the range held no more rows than were read.
 */
export interface SuffixBatch {
  readonly rows: SuffixRow[];
  readonly complete: boolean;
}

/** A code of `by-word` (the rest of a word from a place in a name, in view-key codes) and its rows. */
export interface WordCode {
  readonly code: string;
  readonly count: number;
}

/** A batch of a view's rows: `next` is where the next batch starts, undefined when none follows. */
export interface ViewBatch {
  readonly rows: ViewRow[];
  readonly next: string | undefined;
}

/**
 * The views of decisions 0061 and 0067 (`student-directory`: `by-name`, `by-trigram`; `student-search`:
 * `by-suffix`): what a search reads while `student-list` is being built (decision 0073).
 *
 * `fresh`: the answer waits for the index to hold every write (CouchDB's `update=true`); otherwise
 * it is the index as it stands (`stale=ok`), without waiting.
 */
export interface TrigramViews {
  /** Up to `limit` students of `status` whose view key is at or after `fromKey`, in list order. */
  byName(status: string, fromKey: string, limit: number, fresh: boolean): Promise<ViewBatch>;
  /** Up to `limit` students of `status` whose folded name holds `trigram`, from `fromKey` on. */
  byTrigram(
    status: string,
    trigram: string,
    fromKey: string,
    limit: number,
    fresh: boolean,
  ): Promise<ViewBatch>;
  /**
   * At most `limit` rows of the students of `status` whose folded name holds `word` (three units or
   * more, no space) at the start of a word's rest (`by-suffix`: a word longer than `SUFFIX_UNITS` is
   * looked up by its first ones).
   */
  bySuffix(status: string, word: string, limit: number, fresh: boolean): Promise<SuffixBatch>;
  /** How many students of `status` have `trigram` in their folded name. */
  trigramCount(status: string, trigram: string, fresh: boolean): Promise<number>;
  /** Every trigram's count among the students of `status` (one grouped read). */
  trigramCounts(status: string, fresh: boolean): Promise<ReadonlyMap<string, number>>;
}

/**
 * The list and the search (`student-list`, decision 0073), the visitors, and the views before it.
 * `fresh` as above.
 */
export interface StudentViews {
  /** Up to `limit` students of `status` whose view key is at or after `fromKey`, in list order. */
  byName(status: string, fromKey: string, limit: number, fresh: boolean): Promise<ViewBatch>;
  /**
   * At most `limit` rows of `by-word`: a row per place a word of a student's folded name holds `word`
   * at the start of its rest (as `by-suffix`; a word longer than `SUFFIX_UNITS` looked up by its
   * first ones), in the codes' order.
   */
  byWord(status: string, word: string, limit: number, fresh: boolean): Promise<SuffixBatch>;
  /**
   * The codes of `by-word` that start with `word`'s, each with its rows (places, not students: a name
   * may hold a word twice): one grouped read.
   */
  wordCodes(status: string, word: string, fresh: boolean): Promise<ReadonlyArray<WordCode>>;
  /** Up to `limit` students of `status` with a row of `code` in `by-word`, from `fromKey` on, in list order. */
  byWordCode(
    status: string,
    code: string,
    fromKey: string,
    limit: number,
    fresh: boolean,
  ): Promise<ViewBatch>;
  /** Answers once `student-list`'s index holds every write acknowledged before the call. */
  listIndexed(): Promise<void>;
  /**
   * Whether an instance found `student-list` built once (`markListBuilt`): from then on it is only
   * ever behind the last writes (an import), never missing the roll, and pages read it.
   */
  listMarkedBuilt(): Promise<boolean>;
  markListBuilt(): Promise<void>;
  /**
   * Every visitor's record: once the index holds every write acknowledged before the call, or
   * `asIndexed`, as the index stands (at once, even while CouchDB indexes an import's students).
   */
  visitors(options?: { readonly asIndexed?: boolean }): Promise<StudentDoc[]>;
  /**
   * Sets CouchDB indexing what was written since (a query of no rows with `stale=update_after`: it
   * answers at once and the index is brought up to date behind it, however long that takes); the
   * views before `student-list` only when `trigrams` (while a search reads them).
   */
  refresh(options?: { readonly trigrams?: boolean }): Promise<void>;
  /** The views before `student-list`. */
  readonly trigrams: TrigramViews;
}

/** A folded name and a birth date (`''` for none). */
export type NameAndBirth = readonly [nameFolded: string, birthDate: string];
/** One text for a name and birth date, to hold them in a set. */
export const nameAndBirthText = ([name, birth]: NameAndBirth): string => `${name}\u0000${birth}`;

/** Keys a matching query sends at once: one POST body of some tens of kilobytes. */
const MATCH_KEYS_AT_ONCE = 1_000;

const staleness = (fresh: boolean) => (fresh ? {} : { stale: 'ok' as const });

const NameKey = t.tuple([t.string, t.string]);
/**
 * A row's value: class, name, photo key, last change, and the creation for a visitor only (the longer
 * first: io-ts's tuple answers the first four of five).
 */
const EntryValue = t.union([
  t.tuple([t.string, t.string, t.union([t.string, t.null]), t.string, t.string]),
  t.tuple([t.string, t.string, t.union([t.string, t.null]), t.string]),
]);
/** A `by-suffix` row's value: the folded name and an entry as above. */
const SuffixValue = t.tuple([t.string, EntryValue]);
/** `by-trigram`'s and `by-word`'s keys: status, trigram or code, view key. */
const TrigramKey = t.tuple([t.string, t.string, t.string]);
const CountKey = t.tuple([t.string, t.string]);
const STUDENT_PREFIX = 'student:';

/**
 * The rows of a batch asked with `limit`; `keyOf` reads a row's view key and whether the row is one
 * the batch is about. The next batch starts at the last row's key (the caller skips what it has seen).
 */
const batchOf = (
  rows: ReadonlyArray<{ id: string; key: unknown; value: unknown }>,
  limit: number,
  keyOf: (key: unknown) => { readonly viewKey: string; readonly wanted: boolean } | undefined,
): ViewBatch => {
  let last: string | undefined;
  const out: ViewRow[] = [];
  for (const row of rows) {
    const read = keyOf(row.key);
    if (read === undefined) continue;
    last = read.viewKey;
    if (!read.wanted || !row.id.startsWith(STUDENT_PREFIX)) continue;
    const v = EntryValue.decode(row.value);
    if (E.isLeft(v)) continue;
    const [classId, displayName, photoRef, updatedAt, visitorSince] = v.right;
    out.push({
      studentId: row.id.slice(STUDENT_PREFIX.length),
      viewKey: read.viewKey,
      classId,
      entry: {
        displayName,
        photoRef,
        updatedAt,
        visitorSince: visitorSince ?? null,
      },
    });
  }
  return { rows: out, next: rows.length === limit ? last : undefined };
};

/** A `by-name` read of `design`'s view. */
const nameRows = async (
  db: Database,
  design: string,
  status: string,
  fromKey: string,
  limit: number,
  fresh: boolean,
): Promise<ViewBatch> => {
  const res = await db.query(`${design}/by-name`, {
    startkey: [status, fromKey],
    endkey: [status, {}],
    limit,
    ...staleness(fresh),
  });
  return batchOf(res.rows, limit, (key) => {
    const k = NameKey.decode(key);
    return E.isRight(k) ? { viewKey: k.right[1], wanted: true } : undefined;
  });
};

/** The keys of a suffix view whose code starts with `word`'s (`by-word`'s: past them, their list keys). */
const wordRange = (status: string, word: string) => {
  const code = viewKeyOf(word.slice(0, SUFFIX_UNITS));
  // Past every key that starts with the code: keys are of 0-9 and a-z alone.
  return { code, startkey: [status, code], endkey: [status, `${code}\ufff0`] };
};

/** A read of `by-suffix`. */
const suffixRows = async (
  db: Database,
  status: string,
  word: string,
  limit: number,
  fresh: boolean,
): Promise<SuffixBatch> => {
  const { code, startkey, endkey } = wordRange(status, word);
  const res = await db.query('student-search/by-suffix', { startkey, endkey, limit, ...staleness(fresh) });
  const rows: SuffixRow[] = [];
  for (const row of res.rows) {
    const k = NameKey.decode(row.key);
    const v = SuffixValue.decode(row.value);
    // ICU may collate distinct strings alike: a row of another word is not this one's.
    if (E.isLeft(k) || k.right[0] !== status || !k.right[1].startsWith(code) || E.isLeft(v)) continue;
    if (!row.id.startsWith(STUDENT_PREFIX)) continue;
    const [folded, [classId, displayName, photoRef, updatedAt, visitorSince]] = v.right;
    rows.push({
      studentId: row.id.slice(STUDENT_PREFIX.length),
      folded,
      classId,
      entry: { displayName, photoRef, updatedAt, visitorSince: visitorSince ?? null },
    });
  }
  return { rows, complete: res.rows.length < limit };
};

const trigramViews = (db: Database): TrigramViews => {
  const name = 'student-directory';
  return {
    byName: (status, fromKey, limit, fresh) => nameRows(db, name, status, fromKey, limit, fresh),
    async byTrigram(status, trigram, fromKey, limit, fresh) {
      const res = await db.query(`${name}/by-trigram`, {
        startkey: [status, trigram, fromKey],
        endkey: [status, trigram, {}],
        reduce: false,
        limit,
        ...staleness(fresh),
      });
      return batchOf(res.rows, limit, (key) => {
        const k = TrigramKey.decode(key);
        // ICU may collate distinct strings alike: a row of another trigram is not this one's.
        return E.isRight(k) ? { viewKey: k.right[2], wanted: k.right[1] === trigram } : undefined;
      });
    },
    bySuffix: (status, word, limit, fresh) => suffixRows(db, status, word, limit, fresh),
    async trigramCount(status, trigram, fresh) {
      const res = await db.query(`${name}/by-trigram`, {
        startkey: [status, trigram],
        endkey: [status, trigram, {}],
        reduce: true,
        ...staleness(fresh),
      });
      const value = res.rows[0]?.value;
      return typeof value === 'number' ? value : 0;
    },
    async trigramCounts(status, fresh) {
      const res = await db.query(`${name}/by-trigram`, {
        startkey: [status],
        endkey: [status, {}],
        reduce: true,
        group_level: 2,
        ...staleness(fresh),
      });
      const counts = new Map<string, number>();
      for (const row of res.rows) {
        const k = CountKey.decode(row.key);
        if (E.isRight(k) && k.right[0] === status && typeof row.value === 'number')
          counts.set(k.right[1], row.value);
      }
      return counts;
    },
  };
};

/** Where an instance notes that `student-list` was built (a `_local` document: not replicated, nor backed up). */
const LIST_BUILT_ID = '_local/student-list-built';
const ListBuiltDoc = t.type({ _id: t.string });

export const studentViews = (db: Database): StudentViews => {
  const list = 'student-list';
  return {
    byName: (status, fromKey, limit, fresh) => nameRows(db, list, status, fromKey, limit, fresh),
    async byWord(status, word, limit, fresh) {
      const { code, startkey, endkey } = wordRange(status, word);
      const res = await db.query(`${list}/by-word`, {
        startkey,
        endkey: [...endkey, {}],
        limit,
        reduce: false,
        ...staleness(fresh),
      });
      const rows: SuffixRow[] = [];
      for (const row of res.rows) {
        const k = TrigramKey.decode(row.key);
        const v = EntryValue.decode(row.value);
        // ICU may collate distinct strings alike: a row of another word is not this one's.
        if (E.isLeft(k) || k.right[0] !== status || !k.right[1].startsWith(code) || E.isLeft(v)) continue;
        if (!row.id.startsWith(STUDENT_PREFIX)) continue;
        const studentId = row.id.slice(STUDENT_PREFIX.length);
        const sortKey = sortKeyOfViewKey(k.right[2]);
        const [classId, displayName, photoRef, updatedAt, visitorSince] = v.right;
        rows.push({
          studentId,
          folded: sortKey.slice(0, sortKey.length - studentId.length - 1),
          classId,
          entry: { displayName, photoRef, updatedAt, visitorSince: visitorSince ?? null },
        });
      }
      return { rows, complete: res.rows.length < limit };
    },
    async wordCodes(status, word, fresh) {
      const { code, startkey, endkey } = wordRange(status, word);
      const res = await db.query(`${list}/by-word`, {
        startkey,
        endkey: [...endkey, {}],
        reduce: true,
        group_level: 2,
        ...staleness(fresh),
      });
      const codes: WordCode[] = [];
      for (const row of res.rows) {
        const k = CountKey.decode(row.key);
        if (
          E.isRight(k) &&
          k.right[0] === status &&
          k.right[1].startsWith(code) &&
          typeof row.value === 'number'
        )
          codes.push({ code: k.right[1], count: row.value });
      }
      return codes;
    },
    async byWordCode(status, code, fromKey, limit, fresh) {
      const res = await db.query(`${list}/by-word`, {
        startkey: [status, code, fromKey],
        endkey: [status, code, {}],
        reduce: false,
        limit,
        ...staleness(fresh),
      });
      return batchOf(res.rows, limit, (key) => {
        const k = TrigramKey.decode(key);
        // ICU may collate distinct strings alike: a row of another code is not this one's.
        return E.isRight(k) ? { viewKey: k.right[2], wanted: k.right[1] === code } : undefined;
      });
    },
    async listMarkedBuilt() {
      return (await getDoc(db, ListBuiltDoc, LIST_BUILT_ID)) !== undefined;
    },
    async markListBuilt() {
      try {
        await db.put({ _id: LIST_BUILT_ID, at: new Date().toISOString() });
      } catch (e) {
        // Another instance marked it first.
        if (!isConflict(e)) throw e;
      }
    },
    async listIndexed() {
      // CouchDB indexes a design document's views together; PouchDB each on its own.
      await db.query(`${list}/by-name`, { limit: 0 });
      await db.query(`${list}/by-word`, { limit: 0, reduce: false });
    },
    async visitors(options = {}) {
      const res = await db.query('student-visitors/all', {
        include_docs: true,
        ...(options.asIndexed === true ? { stale: 'ok' as const } : {}),
      });
      return res.rows.flatMap((row) => {
        const d = StudentDoc.decode(row.doc);
        return E.isRight(d) ? [d.right] : [];
      });
    },
    async refresh(options = {}) {
      await db.query(`${list}/by-name`, { limit: 0, stale: 'update_after' });
      await db.query('student-visitors/all', { limit: 0, stale: 'update_after' });
      await db.query('student-matches/by-name-and-birth', { limit: 0, stale: 'update_after' });
      if (options.trigrams !== true) return;
      await db.query('student-directory/by-name', { limit: 0, stale: 'update_after' });
      await db.query('student-search/by-suffix', { limit: 0, stale: 'update_after' });
    },
    trigrams: trigramViews(db),
  };
};

/** Tries of a query cut by the silence limit while CouchDB indexes (`whenIndexed`). */
const INDEX_ATTEMPTS = 6;

/**
 * A query that waits for CouchDB's index to hold every write, sent again when the silence limit cut
 * it: CouchDB goes on indexing after the query is dropped (the index's updater is a process of its
 * own), so each try waits for less. An import right after another file finds that file's writes still
 * being indexed: the query is silent until the index holds them, so it waits `patiently` (four times
 * the store's limit). At the store's own limit, five of six tries were cut once (a second file of
 * 10,000 rows on 10,000, one node): one more and the file answered 503. The request's deadline still
 * bounds the whole (decision 0046).
 */
const whenIndexed = async <A>(query: () => Promise<A>): Promise<A> => {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await patiently(query);
    } catch (e) {
      if (!isStoreTimeout(e) || attempt >= INDEX_ATTEMPTS) throw e;
    }
  }
};

/** What the import asks of the roll: the active students it may match. */
export interface MatchQuery {
  /** Folded name and birth date of each row. */
  readonly keys: ReadonlyArray<NameAndBirth>;
  /** The ids the rows would be stored under (derived from their external id or natural key). */
  readonly ids: ReadonlyArray<string>;
}

/**
 * A keyed read costs CouchDB about as much as 40 rows of a range read: on 3.4.3, one node, a file's
 * 20,000 keys (its names and its ids) took 13.7–27.4 s by key, the 50,000 rows of the index read whole
 * 0.9–2.8 s (`bench/matchProbe.ts`, decision 0064); `_all_docs` by key costs the same as the view by
 * key, one request or five at once. A match asks by key while its keys cost less than the index read
 * whole (a small file on a large roll), and reads the index whole (its rows, no document) otherwise.
 */
const KEYED_READ_IN_ROWS = 40;
/** Rows of the view read at once when it is read whole: about a megabyte. */
const MATCH_PAGE = 10_000;

const MatchKey = t.tuple([t.string, t.string]);

/**
 * The ids of the active students an import's rows may match: those whose folded name and birth date
 * (`''` for none) are one of `keys`, or whose id is one of `ids`, as the index holds them once it holds
 * every acknowledged write (CouchDB's `update=true`). A superset: ICU may collate distinct keys alike,
 * and a small file's `ids` are answered as asked (the caller reads the records, and compares them).
 *
 * Reading the roll's records whole took most of a late file's time on CouchDB (0.65 s a thousand
 * beside the import; 102 rows/s at 110,000 students, decision 0064): the view's rows are a fraction
 * of a record, and a small file reads only its own keys.
 */
export const activeMatching =
  (db: Database, options: { readonly pageSize?: number; readonly keyedReadInRows?: number } = {}) =>
  async (query: MatchQuery): Promise<string[]> => {
    const pageSize = options.pageSize ?? MATCH_PAGE;
    const view = 'student-matches/by-name-and-birth';
    // Waits for the index once (sent again while the silence limit cuts it); the reads after read it
    // as it stands, which holds every write acknowledged before this one.
    const head = await whenIndexed(() => db.query(view, { limit: 0 }));
    const keyedCost =
      (query.keys.length + query.ids.length) * (options.keyedReadInRows ?? KEYED_READ_IN_ROWS);
    if (keyedCost < head.total_rows) {
      const found = new Set(query.ids);
      for (let i = 0; i < query.keys.length; i += MATCH_KEYS_AT_ONCE) {
        const chunk = query.keys.slice(i, i + MATCH_KEYS_AT_ONCE).map((k) => [...k]);
        const res = await db.query(view, { keys: chunk, stale: 'ok' });
        for (const row of res.rows)
          if (row.id.startsWith(STUDENT_PREFIX)) found.add(row.id.slice(STUDENT_PREFIX.length));
      }
      return [...found];
    }
    const keys = new Set(query.keys.map(nameAndBirthText));
    const ids = new Set(query.ids);
    const found = new Set<string>();
    // Pages start at the last key read, past the rows read with that key (`skip`): PouchDB has no
    // `startkey_docid`, and a key's rows may straddle pages. Where ICU collates distinct keys alike a
    // row may be read twice, never missed; the set keeps it once.
    let from: { readonly key: unknown; readonly skip: number } | undefined;
    for (;;) {
      const res = await db.query(view, {
        limit: pageSize,
        stale: 'ok',
        ...(from === undefined ? {} : { startkey: from.key, skip: from.skip }),
      });
      for (const row of res.rows) {
        if (!row.id.startsWith(STUDENT_PREFIX)) continue;
        const studentId = row.id.slice(STUDENT_PREFIX.length);
        const key = MatchKey.decode(row.key);
        if (ids.has(studentId) || (E.isRight(key) && keys.has(nameAndBirthText(key.right))))
          found.add(studentId);
      }
      const last = res.rows[res.rows.length - 1];
      if (res.rows.length < pageSize || last === undefined) return [...found];
      const lastKey = JSON.stringify(last.key);
      let run = 0;
      while (run < res.rows.length && JSON.stringify(res.rows[res.rows.length - 1 - run]?.key) === lastKey)
        run += 1;
      // A page of one key only, the key it started at: the rows past it are further on.
      const same = from !== undefined && JSON.stringify(from.key) === lastKey && run === res.rows.length;
      from = { key: last.key, skip: same && from !== undefined ? from.skip + run : run };
    }
  };
