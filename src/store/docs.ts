/** Reading and writing documents through their codecs, so nothing from the store is trusted undecoded. */
import DataLoader from 'dataloader';
import * as E from 'fp-ts/lib/Either.js';
import type * as t from 'io-ts';
import { detached, untilDeadline } from '../lib/deadline.js';
import type { Database } from './pouch.js';
import { isNotFound, isStoreUnavailable } from './storeErrors.js';

export class UndecodableDocument extends Error {
  constructor(readonly id: string) {
    super(`undecodable document ${id}`);
    this.name = 'UndecodableDocument';
  }
}

/** A database behind the http adapter (CouchDB), as PouchDB names its adapter on every instance. */
export const isRemote = (db: Database): boolean => 'adapter' in db && db.adapter === 'http';

export const decodeDoc = <C extends t.Mixed>(codec: C, id: string, doc: unknown): t.TypeOf<C> => {
  const decoded = codec.decode(doc);
  if (E.isLeft(decoded)) throw new UndecodableDocument(id);
  return decoded.right;
};

/** The most documents one batched read asks for (the request body stays small). */
const READ_BATCH = 200;

type AllDocs = PouchDB.Core.AllDocsResponse<object>;
const isAllDocsResponse = (v: unknown): v is AllDocs =>
  typeof v === 'object' && v !== null && 'rows' in v && Array.isArray(v.rows);

/** One document as `db.get` reads it: undefined when absent or deleted, the failure as a value. */
const readAlone = (db: Database, id: string, conflicts: boolean): Promise<unknown> =>
  db.get(id, conflicts ? { conflicts } : {}).then(
    (doc): unknown => doc,
    (e: unknown) => (isNotFound(e) ? undefined : e instanceof Error ? e : new Error(String(e))),
  );

/**
 * On CouchDB, the single-document reads issued in the same turn of the event loop go as one
 * `_all_docs` request with their keys (DataLoader's batching; nothing is cached: each read is answered
 * by the store as it is now). A request reads its session and its user at once, and fifty concurrent
 * requests read theirs in the same few ticks: two requests each became a share of one (decision 0019,
 * twelfth round). CouchDB answers each key of such a request with a quorum read of its own, as it does
 * a `GET` (`fabric_view_all_docs`: `fabric:open_doc` per key), so nothing reads a copy a `GET` would
 * not.
 */
const batchedReads = new WeakMap<Database, Map<boolean, DataLoader<string, unknown>>>();
/** `conflicts`: each document then carries `_conflicts` (a loader of its own: the request differs). */
const batchedReadsOf = (db: Database, conflicts = false): DataLoader<string, unknown> => {
  let loaders = batchedReads.get(db);
  if (loaders === undefined) {
    loaders = new Map();
    batchedReads.set(db, loaders);
  }
  const held = loaders.get(conflicts);
  if (held !== undefined) return held;
  const loader = new DataLoader<string, unknown>(
    async (ids) => {
      const res = await db
        .allDocs({ keys: [...ids], include_docs: true, ...(conflicts ? { conflicts } : {}) })
        .catch((e: unknown) => e);
      if (!isAllDocsResponse(res)) {
        // The store away fails every read alike, and at once: reading each alone would only double
        // the wait of a frozen node's timeout.
        if (isStoreUnavailable(res)) throw res;
        // One key CouchDB cannot open ends the whole answer: each is read alone, and only its own
        // failure is its own.
        return Promise.all(ids.map((id) => readAlone(db, id, conflicts)));
      }
      // One row per key, in the keys' order: absent and deleted documents answer without a body.
      return ids.map((id, i) => {
        const row = res.rows[i];
        if (row === undefined || row.key !== id) return new Error(`no row for ${id} in a batched read`);
        if ('error' in row)
          return row.error === 'not_found' ? undefined : new Error(`reading ${id}: ${row.error}`);
        const doc: unknown = row.doc;
        return doc ?? undefined;
      });
    },
    // After the I/O callbacks of this turn of the event loop, not only this tick's: concurrent
    // requests reach their reads from separate socket callbacks. The batch is theirs together, so it
    // runs outside the first one's deadline; each stops waiting at its own (`getDoc`).
    {
      cache: false,
      maxBatchSize: READ_BATCH,
      batchScheduleFn: (run) => setImmediate(() => detached(run)),
    },
  );
  loaders.set(conflicts, loader);
  return loader;
};

export const getDoc = async <C extends t.Mixed>(
  db: Database,
  codec: C,
  id: string,
): Promise<t.TypeOf<C> | undefined> => {
  // `_local` and design documents are not in `_all_docs`.
  const doc: unknown =
    isRemote(db) && !id.startsWith('_')
      ? await untilDeadline(batchedReadsOf(db).load(id))
      : await db.get(id).catch((e: unknown) => {
          if (isNotFound(e)) return undefined;
          throw e;
        });
  return doc === undefined ? undefined : decodeDoc(codec, id, doc);
};

/**
 * Every document of one `docType`, decoded. Every id is `<docType>:<key>`, so range reads of the
 * primary index find them: on 10,000 students that is several times faster than a `find` through the
 * by-docType index, which reads the index and then fetches each document by key. The range is read as
 * four parts at once, split on the key's first character: each document body is a separate read, and
 * parallel parts keep the store's I/O threads busy when the data is not in the page cache. The keys
 * are UUIDs, so the parts are even; any other key still falls in exactly one part. (The split used
 * to come from a first pass over the range's ids, which parsed every document's metadata once more:
 * 0.3 s of a 2 s cold start with 10,000 students.)
 */
export const listDocs = async <C extends t.Mixed>(
  db: Database,
  codec: C,
  docType: string,
): Promise<Array<t.TypeOf<C>>> => {
  const prefix = `${docType}:`;
  // On CouchDB each part is an HTTP round trip of its own and the parts win nothing on the client:
  // one range there (issue #23 counted four `_all_docs` per listing, 16 per roster pass).
  const splits = isRemote(db) ? [] : LIST_SPLITS;
  const bounds = [prefix, ...splits.map((c) => `${prefix}${c}`), `${prefix}\ufff0`];
  const pages = await Promise.all(
    bounds.slice(1).map((endkey, i) =>
      db.allDocs({
        startkey: bounds[i],
        endkey,
        // Each inner bound starts the next part; only the last part ends inclusively.
        inclusive_end: i === bounds.length - 2,
        include_docs: true,
      }),
    ),
  );
  return pages.flatMap((res) =>
    res.rows.flatMap((row) => {
      const doc: unknown = row.doc;
      // Another type that happens to share the prefix is not this one's to decode.
      return typeof doc === 'object' && doc !== null && 'docType' in doc && doc.docType === docType
        ? [decodeDoc(codec, row.id, doc)]
        : [];
    }),
  );
};
/**
 * Every document of one `docType`, decoded, `pageSize` at a time in id order: `visit` has each page
 * before the next is read, so a listing of the whole roll never holds more than a page of it. A page
 * starts just after the last id of the one before (keyset, not an offset: a document added meanwhile
 * shifts nothing).
 */
export const eachDocPage = async <C extends t.Mixed>(
  db: Database,
  codec: C,
  docType: string,
  pageSize: number,
  /** `last`: no page follows (it may be empty). */
  visit: (page: Array<t.TypeOf<C>>, last: boolean) => Promise<void> | void,
): Promise<void> => {
  const prefix = `${docType}:`;
  let startkey = prefix;
  for (;;) {
    const res = await db.allDocs({
      startkey,
      endkey: `${prefix}\ufff0`,
      include_docs: true,
      limit: pageSize,
    });
    const page = res.rows.flatMap((row) => {
      const doc: unknown = row.doc;
      return typeof doc === 'object' && doc !== null && 'docType' in doc && doc.docType === docType
        ? [decodeDoc(codec, row.id, doc)]
        : [];
    });
    const lastRow = res.rows.at(-1);
    const last = lastRow === undefined || res.rows.length < pageSize;
    await visit(page, last);
    if (last) return;
    // The smallest id after the last one read.
    startkey = `${lastRow.id}\u0000`;
  }
};

/** Where the parts of a listing meet: the lowercase hexadecimal digits of a UUID, in quarters. */
const LIST_SPLITS = ['4', '8', 'c'];

/**
 * The documents among `ids` that exist, decoded; absent and deleted ids are left out.
 *
 * On CouchDB, one `_all_docs` request with the keys, shared with the other reads of the same turn of
 * the event loop (`batchedReadsOf`). On the embedded store, one `get` per id at once:
 * PouchDB answers `allDocs({ keys })` there with a one-key range query per key (an iterator, its
 * end, a document-count read and the document), where `get` costs the metadata and the body; on a
 * sync batch of 500 events that was a third of the store's CPU time (decision 0019).
 */
export const getDocs = async <C extends t.Mixed>(
  db: Database,
  codec: C,
  ids: ReadonlyArray<string>,
  /** Each document then carries `_conflicts`, its other live leaves, when it has any. */
  options: { readonly conflicts?: boolean } = {},
): Promise<Array<t.TypeOf<C>>> => {
  const conflicts = options.conflicts === true ? { conflicts: true } : {};
  const out: Array<t.TypeOf<C>> = [];
  // PouchDB reads every key of one call at once: thousands of keys in one call cost a burst of native
  // memory that the process keeps afterwards, so large reads go a chunk at a time.
  const chunkSize = isRemote(db) ? REMOTE_GET_CHUNK : GET_CHUNK;
  for (let i = 0; i < ids.length; i += chunkSize) {
    const chunk = ids.slice(i, i + chunkSize);
    if (isRemote(db)) {
      // Batched with the other reads of this turn (`batchedReadsOf`).
      const docs = await untilDeadline(batchedReadsOf(db, options.conflicts === true).loadMany(chunk));
      docs.forEach((doc, k) => {
        if (doc instanceof Error) throw doc;
        const id = chunk[k];
        if (doc !== undefined && id !== undefined) out.push(decodeDoc(codec, id, doc));
      });
      continue;
    }
    const docs = await Promise.all(
      chunk.map((id) =>
        db.get(id, conflicts).then(
          (doc): unknown => doc,
          (e: unknown) => {
            if (isNotFound(e)) return undefined;
            throw e;
          },
        ),
      ),
    );
    docs.forEach((doc, k) => {
      const id = chunk[k];
      if (doc !== undefined && id !== undefined) out.push(decodeDoc(codec, id, doc));
    });
  }
  return out;
};
const GET_CHUNK = 250;
/**
 * On CouchDB a chunk goes as `READ_BATCH`-key requests at once (five): an import's 10,000 keyed reads
 * were 50 round trips one after the other, each waiting on a store busy with the import's writes.
 */
const REMOTE_GET_CHUNK = 5 * READ_BATCH;
