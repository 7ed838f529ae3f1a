/**
 * `put` for the stores on the hot paths (idempotency ledger, events, check-ins, students, rate
 * limits), written through one batch writer per database: under load, the puts of concurrent
 * requests and of the pipeline's write-through go to the store as one `bulkDocs` instead of queueing
 * one by one behind its write lock. At rest a put is written at once (see `src/lib/batchWriter.ts`).
 *
 * Semantics are those of `put`: each document succeeds or fails alone, a stale `_rev` fails with 409
 * (`isConflict`), and two creates of one id in one batch leave the second with 409, as if it had come
 * second. `_local/` documents are not replicated and not in `bulkDocs`' remit; they go straight to `put`.
 */
import { type BatchWriter, batchWriter, type ItemResult } from '../lib/batchWriter.js';
import type { Database } from './pouch.js';

export interface PutDoc {
  readonly _id: string;
  readonly _rev?: string;
}

/**
 * A document the store refused, with the status PouchDB gave it (409 for a conflict); `cause` is the
 * store's own result, so what it was (a write short of its quorum, say) can still be told.
 */
export class PutRefused extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    readonly docId: string,
    cause?: unknown,
  ) {
    super(`the store refused ${docId}: ${reason}`, { cause });
    this.name = 'PutRefused';
  }
}

const statusOf = (r: object): number => ('status' in r && typeof r.status === 'number' ? r.status : 500);
const reasonOf = (r: object): string =>
  'name' in r && typeof r.name === 'string'
    ? r.name
    : 'message' in r && typeof r.message === 'string'
      ? r.message
      : 'unknown';

const writers = new WeakMap<Database, BatchWriter<PutDoc, string>>();

const writerOf = (db: Database): BatchWriter<PutDoc, string> => {
  const known = writers.get(db);
  if (known !== undefined) return known;
  const writer = batchWriter<PutDoc, string>(async (docs) => {
    const results = await db.bulkDocs(docs.map((d) => ({ ...d })));
    return docs.map((d, i): ItemResult<string> => {
      const r = results[i];
      if (r !== undefined && 'ok' in r && r.ok === true && typeof r.rev === 'string')
        return { ok: true, value: r.rev };
      return {
        ok: false,
        error: new PutRefused(
          r === undefined ? 500 : statusOf(r),
          r === undefined ? 'no result' : reasonOf(r),
          d._id,
          r,
        ),
      };
    });
  });
  writers.set(db, writer);
  return writer;
};

/** Stores `doc` like `db.put`, batched with the other puts in flight on the same database. */
export const putBatched = async <D extends PutDoc>(
  db: Database,
  doc: D,
): Promise<{ readonly rev: string }> => {
  if (doc._id.startsWith('_local/')) return { rev: (await db.put(doc)).rev };
  return { rev: await writerOf(db).submit(doc) };
};
