/**
 * Writing a backup (decision 0022): the databases that hold the record, each read page by page from
 * its changes feed and written as lines of `backupFormat.ts`, in an order that keeps what the backup
 * holds explainable when the service runs on CouchDB during it: the records the event pipeline derives
 * from events (check-in records and student fields in `private`, conflict entries in `audit`) are read
 * before the events they come from, so each has its events in the file, and the restored service
 * rebuilds them from those events anyway.
 */
import { Readable } from 'node:stream';
import { admissionExceptionDocId, quarantineDocId } from '../domain/projection.js';
import { CHECKPOINT_ID_PREFIX } from '../store/replicationCheckpoints.js';
import type { DatabaseName, Store, StoreLocation } from '../store/store.js';
import { openDatabaseOf, openWholeDatabase, type WholeDatabase } from '../store/wholeDatabases.js';
import { BACKUP_FORMAT, BACKUP_VERSION, type BackupLine } from './backupFormat.js';

export interface BackedUpDatabase {
  readonly name: DatabaseName;
  /** The documents of the database the backup keeps. */
  readonly keep: (id: string) => boolean;
}

const QUARANTINE_PREFIX = quarantineDocId('');
const ADMISSION_PREFIX = admissionExceptionDocId('');

/**
 * What a backup holds, in the order it is read. Left out: `requests` (the idempotency ledger and
 * rate-limit hits, which expire), the projections but the quarantine records and the admission rule's
 * exceptions (the rest is rebuilt from the events; a quarantine's detection time is the one thing a
 * rebuild cannot reproduce, and its audit entry is keyed by it; an exception is what the rule found on
 * an offline check-in's arrival, which no replay sees again), and the tablets' replication checkpoints (the restored databases have new sequences,
 * so every tablet must replicate from the start again). The roster is derived but kept: tablets hold
 * its documents under their revisions, and a rebuilt roster starting again at revision 1 would lose to
 * their stale copies.
 */
export const BACKED_UP: ReadonlyArray<BackedUpDatabase> = [
  { name: 'audit', keep: () => true },
  { name: 'private', keep: (id) => !id.startsWith(CHECKPOINT_ID_PREFIX) },
  { name: 'roster', keep: () => true },
  { name: 'projections', keep: (id) => id.startsWith(QUARANTINE_PREFIX) || id.startsWith(ADMISSION_PREFIX) },
  { name: 'events', keep: () => true },
];

export interface Progress {
  readonly database: DatabaseName;
  readonly documents: number;
  /** The database's live documents when it was opened (the backup's) or in the file (a restore's). */
  readonly expected: number;
  readonly done: boolean;
}

/**
 * Where a backup reads: a store no service holds (the command, decision 0022), or the databases the
 * running service has open (a live backup, decision 0044: a second process cannot open the embedded
 * store, and a second handle in the same process would share, and close, the service's LevelDB).
 */
export interface BackupSource {
  readonly backend: StoreLocation['kind'];
  open(name: DatabaseName): Promise<WholeDatabase>;
}

export const locationSource = (location: StoreLocation): BackupSource => ({
  backend: location.kind,
  open: (name) => openWholeDatabase(location, name, { mustExist: true }),
});

/**
 * A live backup's source (decision 0044). On the embedded store, the service's own handles (a second
 * handle would share, and close, its LevelDB); on CouchDB, handles of the backup's own, as the command
 * opens them, whose calls may take the minute a page of photos can need rather than the service's
 * bound on a request's store call (STORE_TIMEOUT_MS).
 */
export const liveSource = (store: Store, location: StoreLocation): BackupSource =>
  location.kind === 'couchdb'
    ? locationSource(location)
    : { backend: store.backend, open: async (name) => openDatabaseOf(name, store.db[name]) };

export interface BackupOptions {
  readonly source: BackupSource;
  readonly onProgress?: (p: Progress) => void;
  readonly pageSize?: number;
  readonly clock?: () => Date;
}

const line = (l: BackupLine): string => `${JSON.stringify(l)}\n`;

async function* backupLines(options: BackupOptions): AsyncGenerator<string> {
  const pageSize = options.pageSize ?? 500;
  // Every database is opened first: a missing one or a locked store fails before anything is written.
  const opened: Array<BackedUpDatabase & { readonly db: WholeDatabase }> = [];
  try {
    for (const d of BACKED_UP) opened.push({ ...d, db: await options.source.open(d.name) });
    yield line({
      kind: 'header',
      format: BACKUP_FORMAT,
      version: BACKUP_VERSION,
      createdAt: (options.clock ?? (() => new Date()))().toISOString(),
      backend: options.source.backend,
      databases: BACKED_UP.map((d) => d.name),
    });
    const totals: Record<string, number> = {};
    for (const { name, keep, db } of opened) {
      const info = await db.info();
      yield line({ kind: 'begin', database: name, updateSeq: info.updateSeq, docCount: info.docCount });
      let documents = 0;
      for await (const docs of db.pages(keep, pageSize)) {
        documents += docs.length;
        yield line({ kind: 'docs', database: name, docs: [...docs] });
        options.onProgress?.({ database: name, documents, expected: info.docCount, done: false });
      }
      totals[name] = documents;
      yield line({ kind: 'end', database: name, documents });
      options.onProgress?.({ database: name, documents, expected: info.docCount, done: true });
    }
    yield line({ kind: 'complete', documents: totals });
  } finally {
    await Promise.allSettled(opened.map((o) => o.db.close()));
  }
}

/** The backup as a stream of text lines; opening or reading a database fails the stream. */
export const backupStream = (options: BackupOptions): Readable => Readable.from(backupLines(options));
