/**
 * Rewriting or removing many documents by compare-and-swap, as retention does (decision 0045): each
 * document is read with its revision, changed (or removed) on that revision, and read again when a
 * concurrent writer got there first, a few times. A document absent or deleted meanwhile is done.
 */
import * as t from 'io-ts';
import { getDocs } from './docs.js';
import type { Database } from './pouch.js';
import { isConflict, isStored } from './storeErrors.js';

/** Rounds of read-then-write before a document that keeps changing is left for the next run. */
const ATTEMPTS = 5;
/** Documents per read and per write. */
const BATCH = 200;

type Body = Record<string, unknown> & { readonly _id: string; readonly _rev: string };

const isBody = (u: unknown): u is Body =>
  typeof u === 'object' &&
  u !== null &&
  typeof Reflect.get(u, '_id') === 'string' &&
  typeof Reflect.get(u, '_rev') === 'string';

/**
 * The live documents among `ids`, with their bodies and revisions: read as `getDocs` reads (one
 * `_all_docs` on CouchDB, a `get` per id on the embedded store, where `allDocs` with keys is a range
 * query per key).
 */
const liveDocs = async (db: Database, ids: ReadonlyArray<string>): Promise<Body[]> =>
  ids.length === 0 ? [] : (await getDocs(db, t.UnknownRecord, ids)).filter(isBody);

/**
 * Writes `change(doc)` over each live document of `ids` whose change is not `undefined`; answers how
 * many were written. A change that keeps losing to other writers for every attempt throws: the run
 * that asked fails and the next one tries again.
 */
export const rewriteEach = async (
  db: Database,
  ids: ReadonlyArray<string>,
  change: (doc: Readonly<Record<string, unknown>>) => Record<string, unknown> | undefined,
): Promise<number> => {
  let written = 0;
  for (let i = 0; i < ids.length; i += BATCH) {
    let pending = [...new Set(ids.slice(i, i + BATCH))];
    for (let attempt = 0; pending.length > 0; attempt += 1) {
      if (attempt === ATTEMPTS) throw new Error(`${pending.length} documents kept changing under a rewrite`);
      const next = (await liveDocs(db, pending)).flatMap((doc) => {
        const changed = change(doc);
        return changed === undefined ? [] : [{ ...changed, _id: doc._id, _rev: doc._rev }];
      });
      if (next.length === 0) break;
      const results = await db.bulkDocs(next);
      const retry: string[] = [];
      results.forEach((r, k) => {
        const id = next[k]?._id;
        if (id === undefined) return;
        if (isStored(r)) written += 1;
        else if (isConflict(r)) retry.push(id);
        else throw new Error(`a rewrite was refused: ${r.name ?? 'unknown'} ${r.message ?? ''}`);
      });
      pending = retry;
    }
  }
  return written;
};

/**
 * Removes each live document of `ids`; `tombstone` is what its deletion carries besides `_deleted`
 * (the pipeline reports an event's deletion that is not marked, decision 0063). Answers how many it
 * removed; one gone already is not counted.
 */
export const removeEach = (
  db: Database,
  ids: ReadonlyArray<string>,
  tombstone: Readonly<Record<string, unknown>> = {},
): Promise<number> => rewriteEach(db, ids, () => ({ ...tombstone, _deleted: true }));
