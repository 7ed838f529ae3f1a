/**
 * The student list and search as CouchDB answers them (decision 0056): two JavaScript views of the
 * private database's student documents, and a third, in a design document of its own, of the visitors.
 *
 * - `by-name`: one row a student, keyed `[status, hex]`, where `hex` is the student's sort key
 *   (`sortKeyOf`: folded name, NUL, id) written as four hex digits per UTF-16 unit. CouchDB orders
 *   strings by ICU collation, not by code unit as the service's list does; strings of `0-9a-f` of the
 *   same unit width collate as their code units compare, so the view's order is the list's order and a
 *   cursor's sort key is a view key.
 * - `by-trigram`: a row per distinct trigram (three characters, no space) of the folded name, keyed
 *   `[status, trigram, hex]`, with `_count`: the counts choose a query's rarest trigram, and its rows,
 *   in list order, hold every student a query word contains.
 * A trigram row's value is the student's class, so a class filter reads no document; a name row's is
 * the class and what a list item shows (name, photo key, last change, visitor, creation), so a page
 * reads no document either (whole records, 50 at once, took about 0.9 s at 10 concurrent pages on the
 * loaded machine, a name view's 51 rows 0.16 s).
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
import { getDoc } from './docs.js';
import type { Database } from './pouch.js';
import { isConflict } from './storeErrors.js';

export const STUDENT_VIEWS_ID = '_design/student-directory';
export const VISITOR_VIEWS_ID = '_design/student-visitors';

// Runs inside CouchDB's JavaScript engine (and PouchDB's, in tests): plain ES5, self-contained.
const HEX_KEY = `var s = doc.nameFolded + String.fromCharCode(0) + doc.studentId;
  var hex = '';
  for (var i = 0; i < s.length; i++) {
    var h = s.charCodeAt(i).toString(16);
    hex += '0000'.slice(h.length) + h;
  }`;

export const BY_NAME_MAP = `function (doc) {
  if (doc.docType !== 'student' || typeof doc.nameFolded !== 'string') return;
  ${HEX_KEY}
  emit([doc.status, hex], { c: doc.classId, n: doc.displayName, p: doc.photoRef, u: doc.updatedAt,
    v: doc.visitor === true, t: doc.createdAt });
}`;

export const BY_TRIGRAM_MAP = `function (doc) {
  if (doc.docType !== 'student' || typeof doc.nameFolded !== 'string') return;
  ${HEX_KEY}
  var f = doc.nameFolded;
  var seen = {};
  for (var j = 0; j + 3 <= f.length; j++) {
    var g = f.substr(j, 3);
    if (g.indexOf(' ') >= 0 || Object.prototype.hasOwnProperty.call(seen, g)) continue;
    seen[g] = true;
    emit([doc.status, g, hex], doc.classId);
  }
}`;

export const VISITORS_MAP = `function (doc) {
  if (doc.docType === 'student' && doc.visitor === true) emit(doc.studentId, null);
}`;

const designs = {
  [STUDENT_VIEWS_ID]: {
    'by-name': { map: BY_NAME_MAP },
    'by-trigram': { map: BY_TRIGRAM_MAP, reduce: '_count' },
  },
  [VISITOR_VIEWS_ID]: { all: { map: VISITORS_MAP } },
};

const ViewsDoc = t.type({ _id: t.string, _rev: t.string, views: t.unknown });

/** Installs or updates the design documents; concurrent starts of several instances are harmless. */
export const ensureStudentViews = async (db: Database): Promise<void> => {
  for (const [id, views] of Object.entries(designs)) {
    const current = await getDoc(db, ViewsDoc, id).catch(() => undefined);
    if (current !== undefined && JSON.stringify(current.views) === JSON.stringify(views)) continue;
    try {
      await db.put({
        _id: id,
        ...(current === undefined ? {} : { _rev: current._rev }),
        language: 'javascript',
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

/** A sort key as the views key it (four hex digits a UTF-16 unit). */
export const hexOfSortKey = (sortKey: string): string => {
  let hex = '';
  for (let i = 0; i < sortKey.length; i += 1) hex += sortKey.charCodeAt(i).toString(16).padStart(4, '0');
  return hex;
};

/** The sort key a view key's hex spells. */
export const sortKeyOfHex = (hex: string): string => {
  let out = '';
  for (let i = 0; i + 4 <= hex.length; i += 4)
    out += String.fromCharCode(Number.parseInt(hex.slice(i, i + 4), 16));
  return out;
};

/** What the name view holds of a student for a list item. */
export interface NameEntry {
  readonly displayName: string;
  /** The stored photo key: shown only while an image consent is active. */
  readonly photoRef: string | null;
  readonly updatedAt: string;
  readonly visitor: boolean;
  readonly createdAt: string;
}

/** One student of a view, in list order; `entry` on the name view's rows. */
export interface ViewRow {
  readonly studentId: string;
  readonly hex: string;
  readonly classId: string;
  readonly entry?: NameEntry;
}

/** A batch of a view's rows: `next` is where the next batch starts, undefined when none follows. */
export interface ViewBatch {
  readonly rows: ViewRow[];
  readonly next: string | undefined;
}

/**
 * `fresh`: the answer waits for the index to hold every write (CouchDB's `update=true`); otherwise
 * it is the index as it stands (`stale=ok`), without waiting.
 */
export interface StudentViews {
  /** Up to `limit` students of `status` whose key is at or after `fromHex`, in list order. */
  byName(status: string, fromHex: string, limit: number, fresh: boolean): Promise<ViewBatch>;
  /** Up to `limit` students of `status` whose folded name holds `trigram`, from `fromHex` on. */
  byTrigram(
    status: string,
    trigram: string,
    fromHex: string,
    limit: number,
    fresh: boolean,
  ): Promise<ViewBatch>;
  /** How many students of `status` have `trigram` in their folded name. */
  trigramCount(status: string, trigram: string, fresh: boolean): Promise<number>;
  /** The name view's rows of these keys (the students of a search's page), in list order. */
  entries(status: string, hexes: ReadonlyArray<string>, fresh: boolean): Promise<ViewRow[]>;
  /** Every visitor's record. */
  visitors(): Promise<StudentDoc[]>;
  /**
   * Sets CouchDB indexing what was written since (a query of no rows with `stale=update_after`: it
   * answers at once and the index is brought up to date behind it, however long that takes).
   */
  refresh(): Promise<void>;
}

const staleness = (fresh: boolean) => (fresh ? {} : { stale: 'ok' as const });

const NameKey = t.tuple([t.string, t.string]);
const NameValue = t.type({
  c: t.string,
  n: t.string,
  p: t.union([t.string, t.null]),
  u: t.string,
  v: t.boolean,
  t: t.string,
});
const TrigramKey = t.tuple([t.string, t.string, t.string]);
const STUDENT_PREFIX = 'student:';

/**
 * The rows of a batch asked with `limit`; `hexOf` reads a row's hex and whether the row is one the
 * batch is about. The next batch starts at the last row's key (the caller skips what it has seen).
 */
const batchOf = (
  rows: ReadonlyArray<{ id: string; key: unknown; value: unknown }>,
  limit: number,
  hexOf: (key: unknown) => { readonly hex: string; readonly wanted: boolean } | undefined,
): ViewBatch => {
  let last: string | undefined;
  const out: ViewRow[] = [];
  for (const row of rows) {
    const read = hexOf(row.key);
    if (read === undefined) continue;
    last = read.hex;
    if (!read.wanted || !row.id.startsWith(STUDENT_PREFIX)) continue;
    const studentId = row.id.slice(STUDENT_PREFIX.length);
    if (typeof row.value === 'string') out.push({ studentId, hex: read.hex, classId: row.value });
    else {
      const v = NameValue.decode(row.value);
      if (E.isLeft(v)) continue;
      const { c, n, p, u, v: visitor, t: createdAt } = v.right;
      out.push({
        studentId,
        hex: read.hex,
        classId: c,
        entry: { displayName: n, photoRef: p, updatedAt: u, visitor, createdAt },
      });
    }
  }
  return { rows: out, next: rows.length === limit ? last : undefined };
};

export const studentViews = (db: Database): StudentViews => {
  const name = 'student-directory';
  return {
    async byName(status, fromHex, limit, fresh) {
      const res = await db.query(`${name}/by-name`, {
        startkey: [status, fromHex],
        endkey: [status, {}],
        limit,
        ...staleness(fresh),
      });
      return batchOf(res.rows, limit, (key) => {
        const k = NameKey.decode(key);
        return E.isRight(k) ? { hex: k.right[1], wanted: true } : undefined;
      });
    },
    async byTrigram(status, trigram, fromHex, limit, fresh) {
      const res = await db.query(`${name}/by-trigram`, {
        startkey: [status, trigram, fromHex],
        endkey: [status, trigram, {}],
        reduce: false,
        limit,
        ...staleness(fresh),
      });
      return batchOf(res.rows, limit, (key) => {
        const k = TrigramKey.decode(key);
        // ICU may collate distinct strings alike: a row of another trigram is not this one's.
        return E.isRight(k) ? { hex: k.right[2], wanted: k.right[1] === trigram } : undefined;
      });
    },
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
    async entries(status, hexes, fresh) {
      if (hexes.length === 0) return [];
      const res = await db.query(`${name}/by-name`, {
        keys: hexes.map((hex) => [status, hex]),
        ...staleness(fresh),
      });
      return batchOf(res.rows, Number.POSITIVE_INFINITY, (key) => {
        const k = NameKey.decode(key);
        return E.isRight(k) ? { hex: k.right[1], wanted: true } : undefined;
      }).rows;
    },
    async visitors() {
      const res = await db.query('student-visitors/all', { include_docs: true });
      return res.rows.flatMap((row) => {
        const d = StudentDoc.decode(row.doc);
        return E.isRight(d) ? [d.right] : [];
      });
    },
    async refresh() {
      await db.query(`${name}/by-name`, { limit: 0, stale: 'update_after' });
      await db.query('student-visitors/all', { limit: 0, stale: 'update_after' });
    },
  };
};
