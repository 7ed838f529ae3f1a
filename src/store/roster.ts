/**
 * The roster database holds exactly the documents `rules/roster.ts` computes: reconciling writes the
 * ones that differ, adds the new ones and deletes the ones no longer wanted (a deletion replicates to
 * tablets as such). Design documents (indexes) are left alone.
 */
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import { type RosterDoc, RosterDoc as RosterDocC, RosterFamily } from '../domain/roster.js';
import { type BoundedCache, boundedCache } from '../lib/boundedCache.js';
import { isRemote } from './docs.js';
import type { Database } from './pouch.js';
import { isConflict, isNotFound, isStored } from './storeErrors.js';

/** The ids from `from` (inclusive) up to `to` (exclusive; undefined: to the last id). */
export interface RosterRange {
  readonly from: string;
  readonly to: string | undefined;
}

export const inRosterRange = (id: string, range: RosterRange): boolean =>
  id >= range.from && (range.to === undefined || id < range.to);

export interface RosterStore {
  reconcile(desired: ReadonlyArray<RosterDoc>): Promise<{ written: number; deleted: number }>;
  /**
   * The same, limited to the ids in `range`: what is there and not in `desired` is deleted, and
   * `desired` holds only ids in the range. The full pass reconciles the roster a range at a time, so
   * neither the roster nor what it should be is ever held whole.
   */
  reconcileRange(
    range: RosterRange,
    desired: ReadonlyArray<RosterDoc>,
  ): Promise<{ written: number; deleted: number }>;
  /**
   * The same, limited to `ids`: each is written as `desired` has it, or deleted when it has none.
   * `read`: what a `stored` of some of the ids gave (an id it found absent maps to undefined), taken
   * for them in place of a first read; a write over a revision since replaced reads again.
   */
  reconcileSome(
    ids: ReadonlyArray<string>,
    desired: ReadonlyArray<RosterDoc>,
    read?: ReadonlyMap<string, StoredRosterDoc | undefined>,
  ): Promise<{ written: number; deleted: number }>;
  /** The family document of `familyKey` as tablets have it (0049); undefined when there is none. */
  family(familyKey: string): Promise<RosterFamily | undefined>;
  /**
   * The stored documents among `ids` and their revisions (absent or deleted: left out; one that is
   * not a roster document: its revision alone, so a `replaceAsRead` of it still replaces it).
   */
  stored(ids: ReadonlyArray<string>): Promise<Map<string, StoredRosterDoc>>;
  /**
   * Writes each document as wanted (`doc` undefined: deleted) over the revision it was read at
   * (`read` undefined: it was read absent). `CONFLICT` when any was written meanwhile: whoever wrote it may
   * have read what this writer has not, so what was computed from the read no longer stands.
   */
  replaceAsRead(
    writes: ReadonlyArray<{
      readonly id: string;
      readonly read: StoredRosterDoc | undefined;
      readonly doc: RosterDoc | undefined;
    }>,
  ): Promise<{ written: number; deleted: number } | 'CONFLICT'>;
  /**
   * Keeps, in the database, what `reconcileRange` knows of `ranges` (a full pass's), so the first pass
   * of the next start, or of another instance on the same CouchDB, checks them by their revisions too.
   */
  keepRangeMemos(ranges: ReadonlyArray<RosterRange>): Promise<void>;
}

export interface StoredRosterDoc {
  readonly rev: string;
  /** Undefined when what is stored is not a roster document. */
  readonly doc: RosterDoc | undefined;
  /** The stored content without its revision, canonical: what a write compares with. */
  readonly content: string | undefined;
}

const CHUNK = 500;

const contentOf = (doc: { readonly _rev?: string }): string | undefined => {
  const { _rev: _r, ...rest } = doc;
  return canonicalize(rest);
};

interface Current {
  readonly rev: string;
  readonly content: string | undefined;
  readonly doc: object;
}

/**
 * The live documents among `ids` (absent or deleted: undefined). On leveldb, `allDocs({ keys })`
 * opens a range iterator per key, which a read by id does not; a check-in reconciles a few roster
 * documents of its child this way, so this is on the check-in path. CouchDB answers every key in one
 * request.
 */
const currentOf = async (
  db: Database,
  ids: ReadonlyArray<string>,
): Promise<Map<string, Current | undefined>> => {
  // In the order asked for, whatever order the reads complete in.
  const out = new Map<string, Current | undefined>(ids.map((id) => [id, undefined]));
  if (isRemote(db)) {
    const res = await db.allDocs({ keys: [...ids], include_docs: true });
    for (const row of res.rows) {
      if ('error' in row || row.value.deleted === true || row.doc === undefined || row.doc === null) continue;
      out.set(row.key, { rev: row.value.rev, content: contentOf(row.doc), doc: row.doc });
    }
    return out;
  }
  await Promise.all(
    ids.map(async (id) => {
      try {
        const doc = await db.get(id);
        out.set(id, { rev: doc._rev, content: contentOf(doc), doc });
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
    }),
  );
  return out;
};

/**
 * What a range held after the last reconcile that left it as wanted: a digest of what was wanted
 * (each id and its document as built) and a digest of the revisions it was left at (each id and its
 * revision).
 */
const RangeMemo = t.type({ wanted: t.string, revisions: t.string });
type RangeMemo = t.TypeOf<typeof RangeMemo>;

/**
 * The memos of the last full pass's ranges, by range key: a local document (never replicated, not in
 * the feed, so tablets never see it), shared by every instance on the database. A memo only says
 * which revisions hold which wanted documents, so one written by another instance, or before a
 * restart, is as good as one's own: a range whose revisions differ is read whole all the same.
 */
const MEMOS_DOC = '_local/roster-range-memos';
const StoredMemos = t.type({ ranges: t.record(t.string, RangeMemo) });

/**
 * Ranges remembered per roster database: a full pass reconciles about two per 2,500 students and one
 * per 2,500 families (some 250 at 250,000 students); a range whose bounds moved (students added
 * before its end) is not asked again and ages out.
 */
const RANGE_MEMOS_HELD = 4_096;

const rangeKey = (range: RosterRange): string => `${range.from}\u0000${range.to ?? ''}`;

/** A digest of `[key, value]` pairs, whatever order they come in. */
const digestOf = (pairs: Iterable<readonly [string, string | undefined]>): string => {
  const sorted = [...pairs].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const hash = createHash('sha256');
  for (const [key, value] of sorted) hash.update(`${key}\u0000${value ?? ''}\u0001`);
  return hash.digest('base64');
};

/** The range's rows, with their documents or their revisions alone. */
const readRange = (db: Database, range: RosterRange, includeDocs: boolean) =>
  db.allDocs({
    include_docs: includeDocs,
    ...(range.from === '' ? {} : { startkey: range.from }),
    ...(range.to === undefined ? {} : { endkey: range.to, inclusive_end: false }),
  });

/**
 * `RosterStore.reconcileRange`: read the range, write the difference, again on a conflict.
 *
 * A range wanted as it was at its last reconcile, whose revisions are still the ones that reconcile
 * left, holds what is wanted: its revisions alone are read (ids and revisions, not the documents), and
 * nothing is written. Reading every roster document's body was a third of a full pass's time on a
 * steady roll (at 100,000 students on the embedded store, 8.8 s of 25 s: the bodies took five times
 * what their revisions took), and a full pass runs every ten minutes and after each change of a
 * consent or a pickup list. Any write to the range since (a students' pass, a check-in's aspect,
 * another instance, a tablet) leaves a revision the memo does not have, and the range is read whole.
 */
const reconcileRange = async (
  db: Database,
  memos: BoundedCache<RangeMemo>,
  range: RosterRange,
  desired: ReadonlyArray<RosterDoc>,
): Promise<{ written: number; deleted: number }> => {
  const key = rangeKey(range);
  // Each document as its producer built it: the same inputs build the same keys in the same order, so
  // an equal text is an equal document; an equal document built otherwise only costs a whole read
  // (canonical texts took a tenth of a pass, and the comparison below needs them only when it runs).
  const wanted = digestOf(desired.map((d) => [d._id, JSON.stringify(d)]));
  const memo = memos.get(key);
  if (memo !== undefined && memo.wanted === wanted) {
    const revisions = await readRange(db, range, false);
    const held = digestOf(
      revisions.rows.filter((row) => !row.id.startsWith('_design/')).map((row) => [row.id, row.value.rev]),
    );
    if (held === memo.revisions) return { written: 0, deleted: 0 };
  }
  memos.delete(key);
  const wantedContent = new Map<string, string | undefined>(desired.map((d) => [d._id, canonicalize(d)]));
  // What every attempt stored, not the last one's plan: on a cluster the first read may miss a
  // document a copy has not received yet, and the attempt after its conflict writes the rest.
  let written = 0;
  let deleted = 0;
  for (let attempt = 0; attempt < 5; attempt += 1) {
    const all = await readRange(db, range, true);
    const current = new Map<string, { rev: string; content: string | undefined }>();
    for (const row of all.rows) {
      if (row.id.startsWith('_design/') || row.doc === undefined || row.doc === null) continue;
      current.set(row.id, { rev: row.value.rev, content: contentOf(row.doc) });
    }
    const writes: Array<Record<string, unknown>> = [];
    for (const doc of desired) {
      const have = current.get(doc._id);
      if (have !== undefined && have.content === wantedContent.get(doc._id)) continue;
      writes.push({ ...doc, ...(have === undefined ? {} : { _rev: have.rev }) });
    }
    for (const [id, have] of current) {
      if (wantedContent.has(id)) continue;
      writes.push({ _id: id, _rev: have.rev, _deleted: true });
    }
    // The revisions the range is left at, if no write conflicts.
    const left = new Map<string, string>([...current].map(([id, have]) => [id, have.rev]));
    let conflicted = false;
    for (let i = 0; i < writes.length; i += CHUNK) {
      const chunk = writes.slice(i, i + CHUNK);
      const results = await db.bulkDocs(chunk);
      results.forEach((r, k) => {
        if (isStored(r)) {
          if (chunk[k]?._deleted === true) {
            deleted += 1;
            left.delete(r.id);
          } else {
            written += 1;
            left.set(r.id, r.rev);
          }
        } else if (isConflict(r)) conflicted = true;
        else throw new Error(`roster write failed: ${r.name ?? 'unknown'}`);
      });
    }
    // Another instance reconciled the same documents meanwhile: read again and converge.
    if (!conflicted) {
      memos.set(key, { wanted, revisions: digestOf(left) });
      return { written, deleted };
    }
  }
  throw new Error('the roster stayed contended');
};

export const rosterStore = (db: Database): RosterStore => {
  const memos = boundedCache<RangeMemo>({ maxEntries: RANGE_MEMOS_HELD });
  /** The kept memos and their document's revision; none kept: undefined (undecodable: none held). */
  const storedMemos = async () => {
    try {
      const doc = await db.get(MEMOS_DOC);
      const decoded = StoredMemos.decode(doc);
      return { rev: doc._rev, memos: E.isRight(decoded) ? decoded.right.ranges : {} };
    } catch (e) {
      if (isNotFound(e)) return undefined;
      throw e;
    }
  };
  /** Read once, before the first reconcile of a range (again after a failed read). */
  let loaded: Promise<void> | undefined;
  const loadMemos = () => {
    loaded ??= storedMemos().then(
      (stored) => {
        for (const [key, memo] of Object.entries(stored?.memos ?? {}))
          if (!memos.has(key)) memos.set(key, memo);
      },
      () => {
        // Without them every range is read whole, as on a first start; the next reconcile asks again.
        loaded = undefined;
      },
    );
    return loaded;
  };
  return {
    async reconcileSome(ids, desired, read) {
      const wanted = new Map(desired.map((d) => [d._id, d]));
      for (let attempt = 0; attempt < 5; attempt += 1) {
        const unique = [...new Set(ids)];
        const known = attempt === 0 ? read : undefined;
        // Only the revision and the content are compared: what `stored` gave serves as a read.
        const current: Map<string, Pick<Current, 'rev' | 'content'> | undefined> = await currentOf(
          db,
          known === undefined ? unique : unique.filter((id) => !known.has(id)),
        );
        if (known !== undefined) for (const id of unique) if (known.has(id)) current.set(id, known.get(id));
        const writes: Array<Record<string, unknown>> = [];
        let deleted = 0;
        for (const [id, have] of current) {
          const want = wanted.get(id);
          if (want === undefined) {
            if (have !== undefined) {
              writes.push({ _id: id, _rev: have.rev, _deleted: true });
              deleted += 1;
            }
          } else if (have === undefined) {
            // A deleted document is recreated on top of its tombstone (PouchDB and CouchDB take a
            // write without a revision over a deleted document as its next revision).
            writes.push({ ...want });
          } else if (have.content !== canonicalize(want)) {
            writes.push({ ...want, _rev: have.rev });
          }
        }
        if (writes.length === 0) return { written: 0, deleted: 0 };
        const results = await db.bulkDocs(writes);
        if (!results.some((r) => !isStored(r) && isConflict(r))) {
          for (const r of results) {
            if (!isStored(r)) throw new Error(`roster write failed: ${r.name ?? 'unknown'}`);
          }
          return { written: writes.length - deleted, deleted };
        }
      }
      throw new Error('the roster stayed contended');
    },
    async family(familyKey) {
      try {
        const decoded = RosterFamily.decode(await db.get(`family:${familyKey}`));
        return E.isRight(decoded) ? decoded.right : undefined;
      } catch (e) {
        if (isNotFound(e)) return undefined;
        throw e;
      }
    },
    async stored(ids) {
      const out = new Map<string, StoredRosterDoc>();
      for (const [id, have] of await currentOf(db, [...new Set(ids)])) {
        if (have === undefined) continue;
        const decoded = RosterDocC.decode(have.doc);
        out.set(id, {
          rev: have.rev,
          doc: E.isRight(decoded) ? decoded.right : undefined,
          content: have.content,
        });
      }
      return out;
    },
    async replaceAsRead(writes) {
      const docs: Array<Record<string, unknown>> = [];
      let deleted = 0;
      for (const { read, doc, id } of writes) {
        if (doc === undefined) {
          if (read === undefined) continue;
          docs.push({ _id: id, _rev: read.rev, _deleted: true });
          deleted += 1;
        } else if (read === undefined) docs.push({ ...doc });
        else if (read.content !== canonicalize(doc)) docs.push({ ...doc, _rev: read.rev });
      }
      if (docs.length === 0) return { written: 0, deleted: 0 };
      const results = await db.bulkDocs(docs);
      let conflicted = false;
      for (const r of results) {
        if (isStored(r)) continue;
        if (isConflict(r)) conflicted = true;
        else throw new Error(`roster write failed: ${r.name ?? 'unknown'}`);
      }
      return conflicted ? 'CONFLICT' : { written: docs.length - deleted, deleted };
    },
    async reconcile(desired) {
      await loadMemos();
      return reconcileRange(db, memos, { from: '', to: undefined }, desired);
    },
    async reconcileRange(range, desired) {
      await loadMemos();
      return reconcileRange(db, memos, range, desired);
    },
    async keepRangeMemos(ranges) {
      const kept: Record<string, RangeMemo> = {};
      for (const range of ranges) {
        const key = rangeKey(range);
        const memo = memos.get(key);
        if (memo !== undefined) kept[key] = memo;
      }
      const stored = await storedMemos();
      if (stored !== undefined && canonicalize(stored.memos) === canonicalize(kept)) return;
      try {
        await db.put({ _id: MEMOS_DOC, ...(stored === undefined ? {} : { _rev: stored.rev }), ranges: kept });
      } catch (e) {
        // Another instance kept its own meanwhile: as good as these.
        if (!isConflict(e)) throw e;
      }
    },
  };
};
