/**
 * Whole databases read and written the way PouchDB's replicator moves them, for backup and restore
 * (decision 0022): a page of the changes feed names each document's winning revision, `bulkGet` with
 * `revs: true` reads it with its revision path, and `bulkDocs` with `new_edits: false` stores it under
 * the same revision, on the embedded store and on CouchDB alike. Design documents are left out: the
 * service installs its indexes and the events guard at start. No cache, guard or index of the running
 * service is involved, since a restore writes into a store no service has open.
 */
import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import { boundedFetch } from './boundedFetch.js';
import { type Database, PouchDB } from './pouch.js';
import { type DatabaseName, databaseAddress, type StoreLocation } from './store.js';
import { isNotFound } from './storeErrors.js';

/** A document as it travels: id, winning revision, its revision path and the body. */
export const StoredDoc = t.intersection([t.type({ _id: t.string, _rev: t.string }), t.UnknownRecord]);
export type StoredDoc = t.TypeOf<typeof StoredDoc>;

/** The embedded store's LevelDB is locked by the process that has it open (a running service). */
export class StoreInUseError extends Error {
  constructor(readonly database: string) {
    super(`the embedded database ${database} is open in another process`);
    this.name = 'StoreInUseError';
  }
}

const isFolder = (path: string): Promise<boolean> =>
  stat(path).then(
    (s) => s.isDirectory(),
    () => false,
  );

const isDesign = (id: string): boolean => id.startsWith('_design/');

const messageOf = (e: unknown): string => (e instanceof Error ? e.message : String(e));

export interface WholeDatabase {
  readonly name: DatabaseName;
  /** The sequence and live-document count at the time of the call (the backup records them). */
  info(): Promise<{ updateSeq: string | number; docCount: number }>;
  /** Documents other than design documents (deleted ones are not counted). */
  countDocuments(): Promise<number>;
  /** Pages of the winning revisions of the documents `keep` accepts, deletions included. */
  pages(keep: (id: string) => boolean, pageSize: number): AsyncGenerator<ReadonlyArray<StoredDoc>>;
  /** Stores documents under their own revisions. */
  load(docs: ReadonlyArray<StoredDoc>): Promise<void>;
  close(): Promise<void>;
}

const describeRefusal = (r: unknown): string => {
  const decoded = t
    .partial({ id: t.string, error: t.unknown, reason: t.string, message: t.string })
    .decode(r);
  if (E.isLeft(decoded)) return 'no detail';
  const { id, error, reason, message } = decoded.right;
  return [id, typeof error === 'string' ? error : undefined, reason ?? message].filter(Boolean).join(': ');
};

const wrap = (name: DatabaseName, db: Database, close: () => Promise<void>): WholeDatabase => ({
  name,
  async info() {
    const info = await db.info();
    return { updateSeq: info.update_seq, docCount: info.doc_count };
  },
  async countDocuments() {
    const [info, designs] = await Promise.all([
      db.info(),
      db.allDocs({ startkey: '_design/', endkey: '_design/\ufff0' }),
    ]);
    return info.doc_count - designs.rows.length;
  },
  async *pages(keep, pageSize) {
    let since: string | number = 0;
    for (;;) {
      const page: PouchDB.Core.ChangesResponse<object> = await db.changes({
        since,
        limit: pageSize,
        style: 'main_only',
      });
      if (page.results.length === 0) return;
      const wanted = page.results.flatMap((c) => {
        const rev = c.changes[0]?.rev;
        return rev === undefined || isDesign(c.id) || !keep(c.id) ? [] : [{ id: c.id, rev }];
      });
      if (wanted.length > 0) {
        const read = await db.bulkGet({ docs: wanted, revs: true, attachments: true });
        // A revision compacted away since the page was read has a newer one, which a later page of the
        // feed brings: the document is skipped here, not lost.
        const docs = read.results.flatMap((r) =>
          r.docs.flatMap((d) => {
            if (!('ok' in d)) return [];
            const decoded = StoredDoc.decode(d.ok);
            if (E.isLeft(decoded)) throw new Error(`${name}: ${r.id} was read without its id or revision`);
            return [decoded.right];
          }),
        );
        if (docs.length > 0) yield docs;
      }
      since = page.last_seq;
    }
  },
  async load(docs) {
    // With `new_edits: false` both adapters answer only the refusals (CouchDB's as `{ error, reason }`).
    const refused: ReadonlyArray<unknown> = await db.bulkDocs([...docs], { new_edits: false });
    if (refused.length > 0) {
      throw new Error(`${name}: ${refused.length} documents were refused (${describeRefusal(refused[0])})`);
    }
  },
  close,
});

/**
 * A database the running service holds open, read for a live backup (decision 0044). Closing it is
 * left to the service: on the embedded store a second handle on the same path shares one LevelDB
 * within the process, and closing that would close the service's own.
 */
export const openDatabaseOf = (name: DatabaseName, db: Database): WholeDatabase =>
  wrap(name, db, async () => undefined);

/**
 * Opens one database of the store. On the embedded store the first read tells a LevelDB lock held by
 * a running service (StoreInUseError) from any other failure.
 */
/** A backup's source must exist: an empty database made by a mistyped DATA_DIR or prefix would back up nothing. */
export class DatabaseMissingError extends Error {
  constructor(readonly database: string) {
    super(`the database ${database} does not exist`);
    this.name = 'DatabaseMissingError';
  }
}

const openChecked = async (
  location: StoreLocation,
  name: DatabaseName,
  mustExist: boolean,
): Promise<Database> => {
  const address = databaseAddress(location, name);
  const dbName = `${location.prefix}${name}`;
  if (location.kind === 'embedded') {
    if (mustExist && !(await isFolder(address))) throw new DatabaseMissingError(dbName);
    await mkdir(location.dataDir, { recursive: true });
  }
  // skip_setup: PouchDB's http adapter would otherwise create a missing database on the first call.
  // A call silent for a minute fails rather than hang a scheduled backup (a page of 500 documents
  // answers in well under a second; the service's own bound is 5 s, decision 0023).
  const db =
    location.kind === 'embedded'
      ? new PouchDB(address, { adapter: 'leveldb' })
      : new PouchDB(address, { skip_setup: mustExist, fetch: boundedFetch(60_000) });
  try {
    await db.info();
  } catch (e) {
    await db.close().catch(() => undefined);
    if (location.kind === 'embedded' && /\block\b/i.test(messageOf(e))) throw new StoreInUseError(dbName);
    if (mustExist && isNotFound(e)) throw new DatabaseMissingError(dbName);
    throw e;
  }
  return db;
};

/** `mustExist`: a backup's source; a restore's target is created when missing. */
export const openWholeDatabase = async (
  location: StoreLocation,
  name: DatabaseName,
  options: { readonly mustExist: boolean },
): Promise<WholeDatabase> => {
  const db = await openChecked(location, name, options.mustExist);
  return wrap(name, db, () => db.close());
};

/**
 * Removes one database (for a restore asked to replace the store). On the embedded store the index
 * databases pouchdb-find made beside it (`<name>-mrview-<hash>`) go too: one left behind would keep a
 * checkpoint past the new database's sequence and never index the restored documents.
 */
export const destroyDatabase = async (location: StoreLocation, name: DatabaseName): Promise<void> => {
  await (await openChecked(location, name, false)).destroy();
  if (location.kind !== 'embedded') return;
  const address = databaseAddress(location, name);
  const folder = dirname(address);
  const indexPrefix = `${basename(address)}-mrview-`;
  const entries = await readdir(folder).catch(() => []);
  await Promise.all(
    entries
      .filter((entry) => entry.startsWith(indexPrefix))
      .map((entry) => rm(join(folder, entry), { recursive: true, force: true })),
  );
};
