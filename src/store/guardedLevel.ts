/**
 * The embedded store's LevelDB databases behind a guard: after the first I/O error a database answers
 * no further write until it has been closed and opened again, and it is reopened (a new LevelDB
 * instance on the same files) once the filesystem has room, without a restart of the process.
 *
 * Why: LevelDB 1.20 (leveldown 6) reports a failed log write (ENOSPC, EIO) to that write only and goes
 * on accepting later ones, but its log writer has already counted the bytes it could not write
 * (`log::Writer::EmitPhysicalRecord` advances `block_offset_` whatever `Append` and `Flush` returned),
 * so every later record lies at a wrong offset: served from memory while the process lives, dropped
 * by the next open (checksum mismatch). A failed compaction is kept as a background error that refuses
 * every write until the database is reopened. Records written before the failed one are intact: the
 * log reader returns them before it meets the torn record.
 *
 * Hence:
 * - writes to one database run one at a time, so no write can be acknowledged after one that failed
 *   (PouchDB's adapter already serialises them per database; here it is an invariant, not a hope);
 * - the first write that fails with an I/O error marks the database failed; every later write is
 *   refused with `StoreFailedError` (answered 503) without reaching LevelDB; reads go on, since what
 *   LevelDB holds is exactly what was acknowledged;
 * - a probe with back-off waits until the filesystem has room, closes the instance, opens a new one,
 *   checks that the last acknowledged write is there, and lets writes through again. An index database
 *   is reopened only while no index call of its source is under way (see `enterIndexCall`).
 * Every database is guarded on its own, pouchdb-find's index databases (`<name>-mrview-<hash>`)
 * included: PouchDB opens them with the options of their source, this factory among them.
 */
import { statfs } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import leveldown from 'leveldown';
import { waitAtMost } from '../lib/timeouts.js';
import { isLevelDbIoError, StoreFailedError } from './storeErrors.js';

type LevelDown = leveldown.LevelDown;
type Operation = leveldown.Operation;
type Callback = leveldown.Callback;

/**
 * - `open`: serving reads and writes;
 * - `failed`: an I/O error was met; reads are served, writes refused, a probe waits to reopen it;
 * - `reopening`: closing the instance and opening a new one (reads wait a moment, writes are refused);
 * - `down`: the new instance could not be opened; everything is refused and the probe goes on;
 * - `lost`: reopened, but without the last acknowledged write: reads are served, writes refused until
 *   an operator has looked (a restart), and health says so.
 */
export type DatabaseState = 'open' | 'failed' | 'reopening' | 'down' | 'lost';

export interface DatabaseEvent {
  /** The database's directory name, such as `chamada_events` or `chamada_events-mrview-<hash>`. */
  readonly database: string;
  readonly state: DatabaseState;
  /** LevelDB's message for a failure (a file path and an errno text, never document content). */
  readonly detail?: string;
}

export interface GuardOptions {
  /** A new LevelDB instance for a location: one at the first open, another at every reopen. */
  readonly open: (location: string) => LevelDown;
  /** Bytes free for an unprivileged writer on the filesystem that holds `location`. */
  readonly freeBytes: (location: string) => Promise<number>;
  /** Below this, a failed database is not reopened: its recovery writes a table and a new log. */
  readonly minFreeBytes: number;
  /** Delays between probes; the last one repeats. */
  readonly probeDelaysMs: ReadonlyArray<number>;
  /** How long a reopen waits for iterators opened on the old instance to end before closing it. */
  readonly drainMs: number;
}

const MRVIEW = '-mrview-';

/** The database an index database belongs to, if `location` is one (PouchDB names them so). */
const indexSourceOf = (location: string): string | undefined => {
  const at = location.lastIndexOf(MRVIEW);
  return at < 0 ? undefined : location.slice(0, at);
};

const guards = new Map<string, GuardedLevelDown>();
const listeners = new Set<(event: DatabaseEvent) => void>();
/** Index calls (`find`, `createIndex`) under way, by source database location. */
const indexCalls = new Map<string, number>();
/** How many times an index database of a source has failed, by source location. */
const indexFailures = new Map<string, number>();

const emit = (event: DatabaseEvent): void => {
  for (const listener of listeners) listener(event);
};

/** Follows the state changes of every guarded database of the process; returns the unsubscribe. */
export const onDatabaseState = (listener: (event: DatabaseEvent) => void): (() => void) => {
  listeners.add(listener);
  return () => {
    listeners.delete(listener);
  };
};

/** The guarded databases at these locations, and their index databases, that are not open. */
export const unhealthyDatabases = (
  locations: ReadonlyArray<string>,
): ReadonlyArray<{ readonly location: string; readonly state: DatabaseState }> => {
  const out: Array<{ location: string; state: DatabaseState }> = [];
  for (const [location, guard] of guards) {
    const state = guard.state();
    // Only open (or once open) databases are registered; `new` and `closed` are listed for the types.
    if (state === 'open' || state === 'new' || state === 'closed') continue;
    const owner = indexSourceOf(location) ?? location;
    if (locations.includes(owner)) out.push({ location, state });
  }
  return out;
};

export interface IndexCall {
  /** Throws `StoreFailedError` if an index database of the source failed while the call ran. */
  check(): void;
  leave(): void;
}

/**
 * Registers a `find` or `createIndex` on `source` (a database location). It is refused while an
 * index database of `source` is not open: pouchdb-find would answer from an index it could not bring
 * up to date (it swallows the failure of the update), that is, with stale results. And the index
 * database is not reopened while calls are under way: pouchdb-find saves an update batch by batch,
 * each batch with the index's checkpoint, so a batch saved after a reopen would move the checkpoint
 * past a batch that failed before it, and those documents would be missing from the index for good
 * (apache/pouchdb#9265).
 */
export const enterIndexCall = (source: string): IndexCall => {
  for (const [location, guard] of guards) {
    if (indexSourceOf(location) === source && guard.state() !== 'open')
      throw new StoreFailedError(basename(location));
  }
  indexCalls.set(source, (indexCalls.get(source) ?? 0) + 1);
  const failuresAtStart = indexFailures.get(source) ?? 0;
  let left = false;
  return {
    check() {
      if ((indexFailures.get(source) ?? 0) !== failuresAtStart)
        throw new StoreFailedError(`${basename(source)} (an index)`);
    },
    leave() {
      if (left) return;
      left = true;
      const remaining = (indexCalls.get(source) ?? 1) - 1;
      if (remaining > 0) indexCalls.set(source, remaining);
      else indexCalls.delete(source);
    },
  };
};

const asError = (e: unknown): Error => (e instanceof Error ? e : new Error(String(e)));

const openDb = (db: LevelDown, options: object): Promise<void> =>
  new Promise((resolve, reject) => db.open(options, (e) => (e ? reject(e) : resolve())));

const closeDb = (db: LevelDown): Promise<void> =>
  new Promise((resolve, reject) => db.close((e) => (e ? reject(e) : resolve())));

/** A value as LevelDB stores it (leveldown keeps buffers and stores anything else as `String(value)`). */
const stored = (value: unknown): Buffer => (Buffer.isBuffer(value) ? value : Buffer.from(String(value)));
const keyId = (key: unknown): string =>
  Buffer.isBuffer(key) ? `b${key.toString('hex')}` : `s${String(key)}`;

/** What a write leaves under each of its keys (the last operation on a key wins; `undefined`: deleted). */
const outcome = (ops: ReadonlyArray<Operation>): Map<string, { key: unknown; value: Buffer | undefined }> => {
  const out = new Map<string, { key: unknown; value: Buffer | undefined }>();
  for (const op of ops)
    out.set(keyId(op.key), { key: op.key, value: op.type === 'put' ? stored(op.value) : undefined });
  return out;
};

const readStored = (db: LevelDown, key: unknown): Promise<Buffer | undefined> =>
  new Promise((resolve, reject) =>
    db.get(key, { asBuffer: true }, (e, value) => {
      if (e) {
        if (/notfound/i.test(e.message)) resolve(undefined);
        else reject(e);
      } else resolve(stored(value));
    }),
  );

const same = (a: Buffer | undefined, b: Buffer | undefined): boolean =>
  a === undefined || b === undefined ? a === b : a.equals(b);

interface PendingWrite {
  /** `undefined` for a write whose result cannot be checked after a reopen (a range `clear`). */
  readonly ops: ReadonlyArray<Operation> | undefined;
  readonly run: (db: LevelDown, done: Callback) => void;
  readonly callback: Callback;
}

/** A leveldown as levelup (through deferred-leveldown) uses one. */
class GuardedLevelDown {
  status = 'new';
  // No `approximateSize` or `compactRange`: deferred-leveldown forwards what is declared here.
  readonly supports = {
    bufferKeys: true,
    snapshots: true,
    permanence: true,
    seek: true,
    clear: true,
    createIfMissing: true,
    errorIfExists: true,
    additionalMethods: {},
  };

  private current: DatabaseState | 'new' | 'closed' = 'new';
  private db: LevelDown | undefined;
  private openOptions: object = {};
  private readonly writes: PendingWrite[] = [];
  private writing = false;
  private lastAcknowledged: ReadonlyArray<Operation> | undefined;
  /** The write that met the error: it may or may not be in the log a reopen reads. */
  private lastFailed: ReadonlyArray<Operation> | undefined;
  /** While the instances are swapped, reads wait here. */
  private holding = false;
  private held: Array<() => void> = [];
  private iterators = 0;
  private idle: Array<() => void> = [];
  private probeTimer: NodeJS.Timeout | undefined;
  private probes = 0;
  private reopening: Promise<void> | undefined;
  private readonly name: string;

  constructor(
    readonly location: string,
    private readonly options: GuardOptions,
  ) {
    this.name = basename(location);
  }

  state(): DatabaseState | 'new' | 'closed' {
    return this.current;
  }

  open(options: object, callback: Callback): void {
    this.openOptions = options;
    this.status = 'opening';
    const db = this.options.open(this.location);
    db.open(options, (e) => {
      if (e) {
        this.status = 'closed';
        callback(e);
        return;
      }
      this.db = db;
      this.current = 'open';
      this.status = 'open';
      guards.set(this.location, this);
      callback();
    });
  }

  close(callback: Callback): void {
    this.status = 'closing';
    // Through nextTick, so that a throwing callback is an uncaught exception, not a lost rejection.
    this.shutdown().then(
      () => process.nextTick(callback),
      (e: unknown) => process.nextTick(callback, asError(e)),
    );
  }

  get(key: unknown, options: object, callback: leveldown.ValueCallback): void {
    this.read((db) => db.get(key, options, callback), callback);
  }

  put(key: unknown, value: unknown, options: object, callback: Callback): void {
    this.write([{ type: 'put', key, value }], (db, done) => db.put(key, value, options, done), callback);
  }

  del(key: unknown, options: object, callback: Callback): void {
    this.write([{ type: 'del', key }], (db, done) => db.del(key, options, done), callback);
  }

  batch(operations: ReadonlyArray<Operation>, options: object, callback: Callback): void {
    this.write(operations, (db, done) => db.batch(operations, options, done), callback);
  }

  clear(options: object, callback: Callback): void {
    this.write(undefined, (db, done) => db.clear(options, done), callback);
  }

  iterator(options: object): leveldown.Iterator {
    this.iterators += 1;
    let it: leveldown.Iterator | undefined;
    let from: LevelDown | undefined;
    let ended = false;
    let seekTo: { readonly target: unknown } | undefined;
    const withIterator = (use: (i: leveldown.Iterator) => void, refuse: (e: Error) => void): void => {
      if (it !== undefined) {
        use(it);
        return;
      }
      this.read((db) => {
        let made: leveldown.Iterator;
        try {
          made = db.iterator(options);
        } catch (e) {
          refuse(asError(e));
          return;
        }
        it = made;
        from = db;
        if (seekTo !== undefined) made.seek(seekTo.target);
        use(made);
      }, refuse);
    };
    // Made at once when it can be, so that its snapshot is taken when it was asked for (as leveldown
    // does); during a reopen, at the first `next`. Should making it throw, that `next` says so.
    if (!this.holding && this.db !== undefined)
      withIterator(
        () => undefined,
        () => undefined,
      );
    const finished = () => {
      this.iterators -= 1;
      if (this.iterators === 0) for (const wake of this.idle.splice(0)) wake();
    };
    return {
      next: (callback) => {
        if (ended) {
          process.nextTick(callback, new Error('cannot call next() after end()'));
          return;
        }
        withIterator(
          (i) =>
            i.next((e, key, value) => {
              // An iterator outliving a reopen was ended by the close of its instance.
              if (e && from !== this.db && this.current !== 'closed') callback(this.refusal(e));
              else callback(e, key, value);
            }),
          callback,
        );
      },
      end: (callback) => {
        if (ended) {
          process.nextTick(callback, new Error('end() already called on iterator'));
          return;
        }
        ended = true;
        if (it === undefined) {
          finished();
          process.nextTick(callback);
          return;
        }
        it.end((e) => {
          finished();
          callback(from === this.db ? e : undefined);
        });
      },
      seek: (target) => {
        if (it !== undefined) it.seek(target);
        else seekTo = { target };
      },
    };
  }

  private refusal(cause?: unknown): StoreFailedError {
    return new StoreFailedError(this.name, cause);
  }

  private read(run: (db: LevelDown) => void, refuse: (e: Error) => void): void {
    if (this.holding) {
      this.held.push(() => this.read(run, refuse));
      return;
    }
    const db = this.db;
    if (db === undefined) process.nextTick(refuse, this.refusal());
    else run(db);
  }

  private write(ops: PendingWrite['ops'], run: PendingWrite['run'], callback: Callback): void {
    this.writes.push({ ops, run, callback });
    this.nextWrite();
  }

  private nextWrite(): void {
    while (!this.writing) {
      const w = this.writes.shift();
      if (w === undefined) return;
      const db = this.db;
      if (this.current !== 'open' || db === undefined) {
        process.nextTick(w.callback, this.refusal());
        continue;
      }
      this.writing = true;
      w.run(db, (e) => {
        this.writing = false;
        if (!e) {
          this.lastAcknowledged = w.ops;
          w.callback();
        } else if (isLevelDbIoError(e)) {
          // Marked before the caller hears of it, so that nothing it does next is written.
          this.fail(e, w.ops);
          w.callback(this.refusal(e));
        } else w.callback(e);
        this.nextWrite();
      });
    }
  }

  private fail(e: Error, ops: PendingWrite['ops']): void {
    if (this.current !== 'open') return;
    this.current = 'failed';
    this.lastFailed = ops;
    const source = indexSourceOf(this.location);
    if (source !== undefined) indexFailures.set(source, (indexFailures.get(source) ?? 0) + 1);
    emit({ database: this.name, state: 'failed', detail: e.message });
    this.probes = 0;
    this.scheduleProbe();
  }

  private scheduleProbe(): void {
    if (this.current === 'closed' || this.probeTimer !== undefined) return;
    const delays = this.options.probeDelaysMs;
    const delay = delays[Math.min(this.probes, delays.length - 1)] ?? 1000;
    this.probes += 1;
    this.probeTimer = setTimeout(() => {
      this.probeTimer = undefined;
      const probing = this.probe();
      this.reopening = probing;
      void probing.finally(() => {
        if (this.reopening === probing) this.reopening = undefined;
      });
    }, delay);
    // A failed database must not keep a stopping process alive.
    this.probeTimer.unref();
  }

  /** Never rejects (nothing awaits it): every outcome is a state. */
  private async probe(): Promise<void> {
    if (this.current !== 'failed' && this.current !== 'down') return;
    try {
      const room = await this.options.freeBytes(this.location).then(
        (free) => free >= this.options.minFreeBytes,
        () => false,
      );
      const source = indexSourceOf(this.location);
      if (!room || (source !== undefined && (indexCalls.get(source) ?? 0) > 0)) {
        this.scheduleProbe();
        return;
      }
      await this.reopen();
    } catch (e) {
      this.current = this.db === undefined ? 'down' : 'failed';
      emit({ database: this.name, state: this.current, detail: asError(e).message });
      this.scheduleProbe();
    }
  }

  private async reopen(): Promise<void> {
    const old = this.db;
    this.current = 'reopening';
    // Readers of iterators opened on the old instance may still issue gets: those go through until
    // the iterators end (or the wait does), then reads wait for the new instance.
    await this.drained();
    this.holding = true;
    try {
      if (old !== undefined) {
        try {
          await closeDb(old);
        } catch (e) {
          // Still open, or not: keep it for reads and try again later.
          this.current = 'failed';
          emit({
            database: this.name,
            state: 'failed',
            detail: `close before reopening: ${asError(e).message}`,
          });
          this.scheduleProbe();
          return;
        }
      }
      this.db = undefined;
      const fresh = this.options.open(this.location);
      let missing: string | undefined;
      try {
        await openDb(fresh, this.openOptions);
      } catch (e) {
        this.current = 'down';
        emit({ database: this.name, state: 'down', detail: asError(e).message });
        this.scheduleProbe();
        return;
      }
      try {
        missing = await this.missingAcknowledged(fresh);
      } catch (e) {
        // Unreadable right after opening: treat it like a failed open. The close's own error adds nothing.
        await closeDb(fresh).catch(() => undefined);
        this.current = 'down';
        emit({ database: this.name, state: 'down', detail: asError(e).message });
        this.scheduleProbe();
        return;
      }
      this.db = fresh;
      this.lastFailed = undefined;
      if (missing !== undefined) {
        this.current = 'lost';
        emit({ database: this.name, state: 'lost', detail: missing });
        return;
      }
      this.current = 'open';
      this.probes = 0;
      emit({ database: this.name, state: 'open' });
    } finally {
      this.holding = false;
      for (const resume of this.held.splice(0)) resume();
      this.nextWrite();
    }
  }

  private async drained(): Promise<void> {
    if (this.iterators === 0) return;
    const idle = new Promise<void>((resolve) => {
      this.idle.push(resolve);
    });
    await waitAtMost(idle, this.options.drainMs);
  }

  /**
   * A check, not a proof: the keys of the last acknowledged write hold what it wrote (or what the
   * write that failed after it would have: that one may be in the log or not). LevelDB replays its log
   * in order, so the last write being there means the ones before it are too, unless a record in the
   * middle is torn, which only a write after a failed one could cause, and none is made.
   */
  private async missingAcknowledged(db: LevelDown): Promise<string | undefined> {
    const acknowledged = this.lastAcknowledged;
    if (acknowledged === undefined) return undefined;
    const failed = outcome(this.lastFailed ?? []);
    const expected = outcome(acknowledged);
    let missing = 0;
    for (const [id, { key, value }] of expected) {
      const found = await readStored(db, key);
      const alternative = failed.get(id);
      if (!same(found, value) && (alternative === undefined || !same(found, alternative.value))) missing += 1;
    }
    return missing === 0
      ? undefined
      : `${missing} of the ${expected.size} keys of the last acknowledged write do not hold what it wrote`;
  }

  private async shutdown(): Promise<void> {
    if (this.probeTimer !== undefined) clearTimeout(this.probeTimer);
    this.probeTimer = undefined;
    if (this.reopening !== undefined) await this.reopening;
    this.current = 'closed';
    if (guards.get(this.location) === this) guards.delete(this.location);
    const db = this.db;
    this.db = undefined;
    this.holding = false;
    for (const resume of this.held.splice(0)) resume();
    this.nextWrite();
    if (db !== undefined) await closeDb(db);
    this.status = 'closed';
  }
}

const defaultOptions: GuardOptions = {
  open: (location) => leveldown(location),
  freeBytes: async (location) => {
    const s = await statfs(dirname(location));
    return s.bavail * s.bsize;
  },
  minFreeBytes: 8 * 2 ** 20,
  probeDelaysMs: [100, 250, 500, 1000],
  drainMs: 2000,
};

/** What PouchDB's leveldb adapter takes as its `db` option: a leveldown-like factory. */
export interface LevelDownFactory {
  (location: string): GuardedLevelDown;
  destroy(location: string, callback: Callback): void;
}

/** A guarded leveldown factory; tests give it a faulty `open` or a fake `freeBytes`. */
export const guardedLevelDown = (options: Partial<GuardOptions> = {}): LevelDownFactory => {
  const settings: GuardOptions = { ...defaultOptions, ...options };
  // PouchDB keys its cache of open databases by this function's name, and `destroy` by its property.
  const factory = function openGuardedLevelDown(location: string): GuardedLevelDown {
    return new GuardedLevelDown(location, settings);
  };
  return Object.assign(factory, {
    destroy: (location: string, callback: Callback) => leveldown.destroy(location, callback),
  });
};

/** The factory the store uses. */
export const defaultGuardedLevelDown = guardedLevelDown();
