/**
 * The store: six databases, kept apart by what may leave the server and by how often they change.
 * - roster: what tablets may replicate (minimised student records, sessions of the day);
 * - events: the immutable event log, pushed to by tablets;
 * - private: users, sessions, full student records, students' photos (JPEG attachments, 0033),
 *   check-in records, secrets (never replicated);
 * - requests: what requests leave behind for a while, the idempotency ledger and rate-limit hits
 *   (never replicated; entries expire). Two to three writes a mutation: kept out of `private`,
 *   whose live change feed would otherwise read every one of them back;
 * - audit: the append-only audit log (never replicated);
 * - projections: what the event pipeline derives from the events (aspect values, conflict records,
 *   quarantined documents, its checkpoint); disposable, rebuilt from the events at will.
 * Embedded (leveldb under DATA_DIR) by default; on a CouchDB 3 server when a URL is given.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { withTimeout } from '../lib/timeouts.js';
import { boundedFetch } from './boundedFetch.js';
import { type EventsSecurity, ensureEventsSecurity, removeEventsGuard } from './eventsDesign.js';
import { defaultGuardedLevelDown, type LevelDownFactory, unhealthyDatabases } from './guardedLevel.js';
import {
  ensureIndexes,
  indexGroupOf,
  indexSpecs,
  moveIntoSharedDesign,
  retiredIndexes,
  settledAll,
} from './indexes.js';
import { type ClosingGate, closeIndexDatabases, type Database, PouchDB, withClosingGate } from './pouch.js';
import { withQuorumWrites } from './quorumWrites.js';

export const DATABASE_NAMES = ['roster', 'events', 'private', 'requests', 'audit', 'projections'] as const;
export type DatabaseName = (typeof DATABASE_NAMES)[number];

export type StoreLocation =
  | { readonly kind: 'embedded'; readonly dataDir: string; readonly prefix: string }
  | { readonly kind: 'couchdb'; readonly url: string; readonly prefix: string };

export interface Store {
  readonly backend: StoreLocation['kind'];
  readonly db: Readonly<Record<DatabaseName, Database>>;
  /** True when every database answers within `timeoutMs` and none has failed. Never rejects. */
  ping(timeoutMs?: number): Promise<boolean>;
  /**
   * The embedded databases that refuse writes after an I/O error until they are reopened (`events`,
   * or `events index` for one of its pouchdb-find indexes); empty on CouchDB.
   */
  failedDatabases(): ReadonlyArray<string>;
  /** What opening did to the events database on CouchDB (decision 0063), for the start to log. */
  readonly opening: StoreOpening;
  /**
   * On CouchDB, the databases whose indexes, laid out one a design document by an earlier version,
   * this start moves into their shared one (`moveIntoSharedDesign`), in the background: settles with
   * each one's outcome once the moves have ended (at once when there is none; never rejects).
   */
  readonly indexMoves: Promise<ReadonlyArray<IndexMove>>;
  close(): Promise<void>;
}

export type IndexMove =
  | { readonly database: DatabaseName; readonly outcome: 'moved' | 'stopped' }
  | { readonly database: DatabaseName; readonly outcome: 'failed'; readonly error: unknown };

export interface StoreOpening {
  /** This start removed the `validate_doc_update` guard an earlier version installed. */
  readonly eventsGuardRemoved: boolean;
  /** The events database's `_security` as the start left it; undefined on the embedded store. */
  readonly eventsSecurity: EventsSecurity | undefined;
}

/** The store the configuration names: CouchDB when a URL is set, else the embedded store. */
export const storeLocation = (config: {
  readonly couchdbUrl: string | undefined;
  readonly dataDir: string;
  readonly dbPrefix: string;
}): StoreLocation =>
  config.couchdbUrl === undefined
    ? { kind: 'embedded', dataDir: config.dataDir, prefix: config.dbPrefix }
    : { kind: 'couchdb', url: config.couchdbUrl, prefix: config.dbPrefix };

/** Where a database lives: a folder under DATA_DIR, or a URL on the CouchDB server. */
export const databaseAddress = (location: StoreLocation, name: DatabaseName): string => {
  const dbName = `${location.prefix}${name}`;
  if (location.kind === 'embedded') return join(location.dataDir, dbName);
  const base = location.url.endsWith('/') ? location.url : `${location.url}/`;
  return new URL(encodeURIComponent(dbName), base).toString();
};

export interface StoreOptions {
  /** The embedded store's guarded leveldown; tests give one with injected faults. */
  readonly levelDown?: LevelDownFactory;
  /** CouchDB: how long an answer may stay silent before the call fails as unavailable (`boundedFetch`). */
  readonly requestTimeoutMs?: number;
}

// The configuration's default too (STORE_TIMEOUT_MS); tests that open a store directly get the same.
const DEFAULT_STORE_TIMEOUT_MS = 5000;
/** How long `close` waits for the embedded store's calls under way before it closes the databases. */
const CLOSE_DRAIN_MS = 10_000;

export const openStore = async (location: StoreLocation, options: StoreOptions = {}): Promise<Store> => {
  if (location.kind === 'embedded') await mkdir(location.dataDir, { recursive: true });
  // leveldb keeps an 8 MiB block cache and a 4 MiB write buffer per database by default, and every
  // index is a database of its own (about twenty in all), so its caches are most of the process's
  // native memory, and they fill as the data grows: with 2 MiB and 1 MiB the process still grew by
  // 60 MB in four minutes of steady load (the soak row of the reliability battery), with 256 KiB and
  // 512 KiB by 26 MB at the same request rate. Blocks not cached are read from the operating system's
  // page cache, which the process's resident memory does not count. `db`: LevelDB behind the guard
  // that stops writing after an I/O error (guardedLevel.ts); the index databases inherit it with the
  // rest of these options.
  //
  // `auto_compaction`: PouchDB keeps the body of every revision of a document until the database is
  // compacted, and nothing compacted these; an aspect document is rewritten whole at each of its
  // events, so ten minutes of soak left `projections` at 184 MB (16 MB with it), which LevelDB kept
  // merging and whose table files it maps into the process to read them. With it, each write drops
  // the previous revision's body in the same batch, as CouchDB's compaction would: the revision ids
  // stay, so replication and compare-and-swap work as before, and nothing reads a superseded body.
  // The index databases already had it (pouchdb-abstract-mapreduce sets it on its own).
  const embedded = {
    adapter: 'leveldb',
    db: options.levelDown ?? defaultGuardedLevelDown,
    cacheSize: 256 * 2 ** 10,
    writeBufferSize: 512 * 2 ** 10,
    auto_compaction: true,
  };
  const remote = { fetch: boundedFetch(options.requestTimeoutMs ?? DEFAULT_STORE_TIMEOUT_MS) };
  const gates: ClosingGate[] = [];
  const gated = (database: Database): Database => {
    gates.push(withClosingGate(database, () => closed));
    return database;
  };
  const open = (name: DatabaseName): Database =>
    location.kind === 'embedded'
      ? gated(new PouchDB(databaseAddress(location, name), embedded))
      : name === 'audit'
        ? // Append-only, and a keyed entry is the same bytes whoever writes it (quorumWrites.ts).
          new PouchDB(databaseAddress(location, name), remote)
        : withQuorumWrites(
            new PouchDB(databaseAddress(location, name), remote),
            // A forked projection document is merged (decision 0038); one left with no live revision is lost.
            name === 'projections'
              ? { keep: 'winner' }
              : // Any stored copy of an event is as good as another.
                name === 'events'
                ? { keep: 'winner', withdrawBelow: true }
                : {},
          );
  const addresses = DATABASE_NAMES.map((name) => ({ name, address: databaseAddress(location, name) }));
  const failedDatabases = (): ReadonlyArray<string> => {
    if (location.kind !== 'embedded') return [];
    const failed = unhealthyDatabases(addresses.map((a) => a.address)).flatMap(({ location: l }) =>
      addresses.flatMap(({ name, address }) =>
        l === address ? [name] : l.startsWith(`${address}-mrview-`) ? [`${name} index`] : [],
      ),
    );
    return [...new Set(failed)].sort();
  };
  let closed = false;
  const db: Record<DatabaseName, Database> = {
    roster: open('roster'),
    events: open('events'),
    private: open('private'),
    requests: open('requests'),
    audit: open('audit'),
    projections: open('projections'),
  };
  let opening: StoreOpening = { eventsGuardRemoved: false, eventsSecurity: undefined };
  let movable: ReadonlyArray<DatabaseName> = [];
  try {
    // The databases are opened at once, each with its indexes: on a CouchDB cluster every step is a
    // round trip or a quorum write, and one after the other they took 1.4 s of a start (three nodes).
    // The events database's guard and `_security` come after, as before: set at once beside its
    // creation on a cluster, the `_security` of a fresh database was read back empty.
    const laidOut = await settledAll(
      DATABASE_NAMES.map((name) =>
        ensureIndexes(db[name], indexSpecs[name], retiredIndexes[name], indexGroupOf(name)),
      ),
    );
    movable = DATABASE_NAMES.filter((_, i) => laidOut[i] === true);
    if (location.kind === 'couchdb')
      opening = {
        eventsGuardRemoved: await removeEventsGuard(db.events),
        eventsSecurity: await ensureEventsSecurity(db.events),
      };
  } catch (e) {
    await Promise.allSettled(DATABASE_NAMES.map((n) => closeIndexDatabases(db[n])));
    await Promise.allSettled(DATABASE_NAMES.map((n) => db[n].close()));
    throw e;
  }
  const moving = new AbortController();
  const indexMoves = Promise.all(
    movable.map((name) =>
      moveIntoSharedDesign(
        db[name],
        indexSpecs[name],
        retiredIndexes[name],
        indexGroupOf(name),
        moving.signal,
      ).then(
        (moved): IndexMove => ({ database: name, outcome: moved ? 'moved' : 'stopped' }),
        (error: unknown): IndexMove => ({ database: name, outcome: 'failed', error }),
      ),
    ),
  );
  return {
    backend: location.kind,
    db,
    failedDatabases,
    opening,
    indexMoves,
    async ping(timeoutMs = 2000) {
      if (closed || failedDatabases().length > 0) return false;
      try {
        await withTimeout(Promise.all(DATABASE_NAMES.map((n) => db[n].info())), timeoutMs);
        return true;
      } catch {
        return false;
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      // A move under way stops at its next step; its call in flight is not waited for (a CouchDB
      // handle holds nothing to close).
      moving.abort();
      // The calls under way finish first: a write still queued in PouchDB's leveldb adapter when its
      // database closes never settles, and an index update still running would meet a closed
      // database in a save nothing awaits, and end the process (decision 0010). New calls are refused.
      await Promise.all(gates.map((g) => g.callsSettled(CLOSE_DRAIN_MS)));
      await Promise.all(DATABASE_NAMES.map((n) => closeIndexDatabases(db[n])));
      await Promise.all(DATABASE_NAMES.map((n) => db[n].close()));
    },
  };
};
