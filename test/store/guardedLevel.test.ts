/**
 * The embedded store's guard after an I/O error (`src/store/guardedLevel.ts`): real LevelDB in a temp
 * directory, with faults injected between the guard and LevelDB (a write answered LevelDB's "IO
 * error … No space left on device" without being written, an open that fails, a reopen that finds
 * another database) and the free space of the filesystem faked. The real full disk is the stress row
 * (`test/stress/diskFull.stress.ts`).
 */
import { join } from 'node:path';
import { expect } from 'chai';
import leveldown from 'leveldown';
import {
  type DatabaseEvent,
  enterIndexCall,
  type GuardOptions,
  guardedLevelDown,
  onDatabaseState,
  unhealthyDatabases,
} from '../../src/store/guardedLevel.js';
import { openStore, type Store } from '../../src/store/store.js';
import {
  isIndexWriteRefusal,
  isStoreFailure,
  isStoreUnavailable,
  StoreFailedError,
} from '../../src/store/storeErrors.js';
import { makeTempDir, removeDir } from '../support/tempDir.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const until = async (what: string, probe: () => boolean, ms = 5000): Promise<void> => {
  const deadline = Date.now() + ms;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await sleep(10);
  }
};

const ioError = (location: string) => new Error(`IO error: ${location}/000005.log: No space left on device`);

/** LevelDB with switchable faults, counting what reaches it. */
const faultyLevel = () => {
  const faults = {
    /** Writes to these locations are answered with an I/O error and not written. */
    failWrites: (_location: string) => false,
    failOpen: (_location: string) => false,
    /** Where the n-th instance of a location really opens (a reopen can be sent to an empty one). */
    redirect: (location: string, _instance: number) => location,
  };
  const instances = new Map<string, number>();
  const writes: string[] = [];
  const open = (location: string): leveldown.LevelDown => {
    const n = (instances.get(location) ?? 0) + 1;
    instances.set(location, n);
    const real = leveldown(faults.redirect(location, n));
    const write = (run: (done: leveldown.Callback) => void, callback: leveldown.Callback) => {
      writes.push(location);
      if (faults.failWrites(location)) process.nextTick(callback, ioError(location));
      else run(callback);
    };
    return {
      location,
      get status() {
        return real.status;
      },
      open: (options, callback) =>
        faults.failOpen(location)
          ? process.nextTick(callback, ioError(location))
          : real.open(options, callback),
      close: (callback) => real.close(callback),
      get: (key, options, callback) => real.get(key, options, callback),
      put: (key, value, options, callback) => write((done) => real.put(key, value, options, done), callback),
      del: (key, options, callback) => write((done) => real.del(key, options, done), callback),
      batch: (ops, options, callback) => write((done) => real.batch(ops, options, done), callback),
      clear: (options, callback) => write((done) => real.clear(options, done), callback),
      iterator: (options) => real.iterator(options),
    };
  };
  return { faults, instances, writes, open };
};

const fakeDisk = () => {
  const disk = { free: 2 ** 30 };
  const options: Partial<GuardOptions> = {
    freeBytes: async () => disk.free,
    minFreeBytes: 2 ** 20,
    probeDelaysMs: [5, 10, 20],
    drainMs: 200,
  };
  return { disk, options };
};

const callback =
  <A = void>(resolve: (a: A) => void, reject: (e: Error) => void, pick: (v: unknown) => A) =>
  (e?: Error | null, v?: unknown) =>
    e ? reject(e) : resolve(pick(v));

/** A LevelDB that fails as told, on a disk with no room left. */
const aFullDisk = () => {
  const level = faultyLevel();
  const { disk, options } = fakeDisk();
  disk.free = 0;
  return { level, disk, options };
};

describe('the guard of a LevelDB database after an I/O error', () => {
  let dir: string;
  const events: DatabaseEvent[] = [];
  let unsubscribe: () => void = () => undefined;
  beforeEach(async () => {
    dir = await makeTempDir('guard');
    events.length = 0;
    unsubscribe = onDatabaseState((e) => events.push(e));
  });
  afterEach(async () => {
    unsubscribe();
    await removeDir(dir);
  });

  /** One guarded database used directly, as levelup uses it. */
  const guarded = async (level: ReturnType<typeof faultyLevel>, options: Partial<GuardOptions>) => {
    const location = join(dir, 'db');
    const g = guardedLevelDown({ ...options, open: level.open })(location);
    await new Promise<void>((resolve, reject) =>
      g.open(
        {},
        callback(resolve, reject, () => undefined),
      ),
    );
    const put = (key: string, value: string) =>
      new Promise<void>((resolve, reject) =>
        g.put(
          key,
          value,
          {},
          callback(resolve, reject, () => undefined),
        ),
      );
    const get = (key: string) =>
      new Promise<string | undefined>((resolve, reject) =>
        g.get(key, { asBuffer: false }, (e, v) =>
          e ? (/notfound/i.test(e.message) ? resolve(undefined) : reject(e)) : resolve(String(v)),
        ),
      );
    const batch = (ops: ReadonlyArray<leveldown.Operation>) =>
      new Promise<void>((resolve, reject) =>
        g.batch(
          ops,
          {},
          callback(resolve, reject, () => undefined),
        ),
      );
    const close = () =>
      new Promise<void>((resolve, reject) => g.close(callback(resolve, reject, () => undefined)));
    const state = () => unhealthyDatabases([location])[0]?.state ?? 'open';
    return { location, g, put, get, batch, close, state };
  };

  /** A guarded store over a LevelDB that fails as told, on a disk with no room left; closed after `use`. */
  const onAFullDisk = async (
    use: (t: {
      readonly level: ReturnType<typeof faultyLevel>;
      readonly disk: ReturnType<typeof fakeDisk>['disk'];
      readonly db: Awaited<ReturnType<typeof guarded>>;
    }) => Promise<void>,
  ): Promise<void> => {
    const { level, disk, options } = aFullDisk();
    const db = await guarded(level, options);
    try {
      await use({ level, disk, db });
    } finally {
      await db.close();
    }
  };

  it('refuses the write that met the error and every later one, without reaching LevelDB; reads go on', () =>
    onAFullDisk(async ({ level, db }) => {
      await db.put('a', '1');
      level.faults.failWrites = () => true;
      const first = await db.put('b', '2').then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(first).to.be.instanceOf(StoreFailedError);
      expect(isStoreUnavailable(first), 'answered 503').to.equal(true);
      expect(first instanceof Error && first.cause instanceof Error ? first.cause.message : '').to.match(
        /No space left on device/,
      );
      // LevelDB 1.20 would take (and later drop) the next write: it must not be asked.
      level.faults.failWrites = () => false;
      const reached = level.writes.length;
      for (const k of ['c', 'd', 'e'])
        expect(
          await db.put(k, 'x').then(
            () => 'stored',
            (e: unknown) => (isStoreFailure(e) ? 'refused' : String(e)),
          ),
        ).to.equal('refused');
      expect(level.writes.length, 'writes that reached LevelDB after the failure').to.equal(reached);
      expect(await db.get('a')).to.equal('1');
      expect(await db.get('b')).to.equal(undefined);
      expect(db.state()).to.equal('failed');
      expect(events.map((e) => e.state)).to.deep.equal(['failed']);
      expect(events[0]?.detail).to.match(/No space left on device/);
    }));

  it('never acknowledges a write issued while the failing one was under way', () =>
    onAFullDisk(async ({ level, db }) => {
      await db.put('a', '1');
      let failing = true;
      level.faults.failWrites = () => {
        // Only the first write meets the error; LevelDB would accept the ones after it.
        const now = failing;
        failing = false;
        return now;
      };
      const results = await Promise.all(
        Array.from({ length: 5 }, (_, i) =>
          db.batch([{ type: 'put', key: `k${i}`, value: String(i) }]).then(
            () => 'acknowledged',
            (e: unknown) => (isStoreFailure(e) ? 'refused' : String(e)),
          ),
        ),
      );
      expect(results).to.deep.equal(['refused', 'refused', 'refused', 'refused', 'refused']);
      expect(level.writes.filter((l) => l === db.location)).to.have.length(2);
    }));

  it('passes on errors that are not I/O errors without failing the database', async () => {
    const level = faultyLevel();
    const db = await guarded(level, fakeDisk().options);
    try {
      const e = await new Promise<unknown>((resolve) => db.g.put('', 'x', {}, (error) => resolve(error)));
      expect(e).to.be.instanceOf(Error);
      expect(isStoreFailure(e)).to.equal(false);
      expect(db.state()).to.equal('open');
      await db.put('a', '1');
    } finally {
      await db.close();
    }
  });

  it('reopens on a new LevelDB instance once there is room again, keeping every acknowledged write', () =>
    onAFullDisk(async ({ level, disk, db }) => {
      for (let i = 0; i < 20; i += 1) await db.put(`before-${i}`, String(i));
      await db.batch([
        { type: 'put', key: 'last', value: 'acknowledged' },
        { type: 'del', key: 'before-0' },
      ]);
      level.faults.failWrites = () => true;
      await db.put('lost', 'x').catch(() => undefined);
      level.faults.failWrites = () => false;
      // No room: the probe does not reopen it.
      await sleep(100);
      expect(db.state()).to.equal('failed');
      expect(level.instances.get(db.location)).to.equal(1);
      disk.free = 2 ** 30;
      await until('reopened', () => db.state() === 'open');
      expect(level.instances.get(db.location), 'LevelDB instances opened').to.equal(2);
      expect(events.map((e) => e.state)).to.deep.equal(['failed', 'open']);
      await db.put('after', 'y');
      expect(await db.get('last')).to.equal('acknowledged');
      expect(await db.get('before-0')).to.equal(undefined);
      expect(await db.get('before-19')).to.equal('19');
      expect(await db.get('lost')).to.equal(undefined);
      expect(await db.get('after')).to.equal('y');
    }));

  it('stays down while the reopen cannot open the database, and probes again', async () => {
    const level = faultyLevel();
    const { options } = fakeDisk();
    const db = await guarded(level, options);
    try {
      await db.put('a', '1');
      let opens = 0;
      level.faults.failOpen = () => {
        opens += 1;
        return opens <= 2;
      };
      level.faults.failWrites = () => true;
      await db.put('b', '2').catch(() => undefined);
      level.faults.failWrites = () => false;
      await until('reopened after two failed opens', () => db.state() === 'open');
      expect(events.map((e) => e.state)).to.deep.equal(['failed', 'down', 'down', 'open']);
      expect(await db.get('a')).to.equal('1');
    } finally {
      await db.close();
    }
  });

  it('marks the database lost, refusing writes, when the reopened one lacks the last acknowledged write', async () => {
    const { level, disk, options } = aFullDisk();
    // The reopen opens an empty database: as if LevelDB had dropped the acknowledged writes.
    level.faults.redirect = (location, n) => (n === 1 ? location : `${location}-elsewhere`);
    const db = await guarded(level, options);
    try {
      await db.put('a', '1');
      level.faults.failWrites = () => true;
      await db.put('b', '2').catch(() => undefined);
      level.faults.failWrites = () => false;
      disk.free = 2 ** 30;
      await until('reopened', () => db.state() !== 'failed' && db.state() !== 'reopening');
      expect(db.state()).to.equal('lost');
      expect(events.at(-1)?.detail).to.match(/1 of the 1 keys of the last acknowledged write/);
      expect(
        await db.put('c', '3').then(
          () => 'stored',
          (e: unknown) => (isStoreFailure(e) ? 'refused' : String(e)),
        ),
      ).to.equal('refused');
      await sleep(100);
      expect(db.state(), 'no further reopen').to.equal('lost');
    } finally {
      await db.close();
    }
  });

  it('lets reads issued during a reopen wait for the new instance', () =>
    onAFullDisk(async ({ level, disk, db }) => {
      await db.put('a', '1');
      level.faults.failWrites = () => true;
      await db.put('b', '2').catch(() => undefined);
      level.faults.failWrites = () => false;
      disk.free = 2 ** 30;
      const reads: Array<Promise<string | undefined>> = [];
      while (db.state() !== 'open') {
        reads.push(db.get('a'));
        await new Promise((r) => setImmediate(r));
      }
      expect(new Set(await Promise.all(reads))).to.deep.equal(new Set(['1']));
    }));
});

describe('the embedded store with a failed database', () => {
  let dir: string;
  let store: Store | undefined;
  const prefix = 'g_';
  beforeEach(async () => {
    dir = await makeTempDir('guarded-store');
  });
  afterEach(async () => {
    await store?.close();
    store = undefined;
    await removeDir(dir);
  });

  const open = async (level: ReturnType<typeof faultyLevel>, options: Partial<GuardOptions>) => {
    const s = await openStore(
      { kind: 'embedded', dataDir: dir, prefix },
      { levelDown: guardedLevelDown({ ...options, open: level.open }) },
    );
    store = s;
    return s;
  };

  it('answers writes 503, health reports it, and all is well again after the reopen', async () => {
    const { level, disk, options } = aFullDisk();
    const s = await open(level, options);
    await s.db.events.put({ _id: 'event:1', docType: 'event' });
    const events = join(dir, `${prefix}events`);
    level.faults.failWrites = (l) => l === events;
    const e = await s.db.events.put({ _id: 'event:2', docType: 'event' }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(isStoreUnavailable(e), String(e)).to.equal(true);
    level.faults.failWrites = () => false;
    expect(s.failedDatabases()).to.deep.equal(['events']);
    expect(await s.ping()).to.equal(false);
    // The other databases still take writes.
    await s.db.roster.put({ _id: 'r', docType: 'x' });
    const refused = await s.db.events.put({ _id: 'event:3', docType: 'event' }).then(
      () => 'stored',
      (error: unknown) => (isStoreUnavailable(error) ? '503' : String(error)),
    );
    expect(refused).to.equal('503');
    disk.free = 2 ** 30;
    await until('healthy again', () => s.failedDatabases().length === 0);
    expect(await s.ping()).to.equal(true);
    await s.db.events.put({ _id: 'event:4', docType: 'event' });
    const ids = (await s.db.events.allDocs({ startkey: 'event:', endkey: 'event:\uffff' })).rows.map(
      (r) => r.id,
    );
    expect(ids).to.deep.equal(['event:1', 'event:4']);
    // What the next start reads.
    await s.close();
    store = await openStore({ kind: 'embedded', dataDir: dir, prefix });
    const again = (await store.db.events.allDocs({ startkey: 'event:', endkey: 'event:\uffff' })).rows;
    expect(again.map((r) => r.id)).to.deep.equal(['event:1', 'event:4']);
  });

  it('survives an index update failing where pouchdb-find does not await it, answers 503, then catches the index up', async () => {
    const { level, disk, options } = aFullDisk();
    const s = await open(level, options);
    const roster = join(dir, `${prefix}roster`);
    const find = () =>
      s.db.roster.find({ selector: { docType: 'student' }, use_index: 'idx-by-docType', limit: 1000 });
    // More than one batch of pouchdb-find's update (50 changes): the case where a save is not awaited.
    await s.db.roster.bulkDocs(Array.from({ length: 130 }, (_, i) => ({ _id: `s${i}`, docType: 'student' })));
    const unhandled: unknown[] = [];
    const record = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', record);
    try {
      level.faults.failWrites = (l) => l.startsWith(`${roster}-mrview-`);
      const first = await find().then(
        (r) => `${r.docs.length} docs`,
        (e: unknown) => (isStoreUnavailable(e) ? '503' : String(e)),
      );
      expect(first, 'an answer from an index whose update failed').to.equal('503');
      await sleep(50);
      expect(unhandled.length, 'rejections nothing awaited').to.be.greaterThan(0);
      expect(unhandled.every(isIndexWriteRefusal), unhandled.map(String).join('; ')).to.equal(true);
    } finally {
      process.off('unhandledRejection', record);
      level.faults.failWrites = () => false;
    }
    expect(s.failedDatabases()).to.deep.equal(['roster index']);
    // Refused up front while the index database is failed.
    const before = level.writes.length;
    expect(
      await find().then(
        () => 'answered',
        (e: unknown) => (isStoreUnavailable(e) ? '503' : String(e)),
      ),
    ).to.equal('503');
    expect(level.writes.length).to.equal(before);
    disk.free = 2 ** 30;
    await until('index database reopened', () => s.failedDatabases().length === 0);
    // Caught up from its last complete update: no document is missing from it.
    expect((await find()).docs).to.have.length(130);
    await s.db.roster.put({ _id: 's-late', docType: 'student' });
    expect((await find()).docs).to.have.length(131);
  });

  it('closes only once the index calls under way have finished', async () => {
    const s = await open(faultyLevel(), fakeDisk().options);
    await s.db.roster.bulkDocs(Array.from({ length: 260 }, (_, i) => ({ _id: `s${i}`, docType: 'student' })));
    const unhandled: unknown[] = [];
    const record = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', record);
    try {
      const running = s.db.roster.find({
        selector: { docType: 'student' },
        use_index: 'idx-by-docType',
        limit: 1000,
      });
      await new Promise((r) => setImmediate(r));
      await s.close();
      store = undefined;
      expect((await running).docs).to.have.length(260);
      await sleep(50);
      expect(unhandled.map(String)).to.deep.equal([]);
      const late = await s.db.roster.find({ selector: { docType: 'student' } }).then(
        () => 'answered',
        (e: unknown) => (isStoreUnavailable(e) ? '503' : String(e)),
      );
      expect(late, 'a call made once the store is closing').to.equal('503');
    } finally {
      process.off('unhandledRejection', record);
    }
  });

  it('does not reopen an index database while an index call of its source is under way', async () => {
    const { level, disk, options } = aFullDisk();
    const s = await open(level, options);
    const audit = join(dir, `${prefix}audit`);
    const find = () =>
      s.db.audit.find({ selector: { created_at: { $gt: '' } }, use_index: 'idx-by-created_at' });
    await s.db.audit.put({ _id: 'a1', created_at: '2026-01-01' });
    // A call under way when the index database fails (it started while all was well).
    const call = enterIndexCall(audit);
    try {
      level.faults.failWrites = (l) => l.startsWith(`${audit}-mrview-`);
      await find().catch(() => undefined);
      level.faults.failWrites = () => false;
      expect(s.failedDatabases()).to.deep.equal(['audit index']);
      disk.free = 2 ** 30;
      await sleep(150);
      expect(s.failedDatabases(), 'reopened under a running index call').to.deep.equal(['audit index']);
    } finally {
      call.leave();
    }
    await until('reopened once the call ended', () => s.failedDatabases().length === 0);
    expect((await find()).docs).to.have.length(1);
  });
});

describe('store failure errors', () => {
  const refusal = new StoreFailedError('chamada_events');
  const indexRefusal = new StoreFailedError('chamada_roster-mrview-0123abcd');
  // levelup wraps what the leveldown answered in a WriteError that keeps it as `cause`.
  const wrapped = (cause: unknown) =>
    Object.assign(new Error('the message copied'), { name: 'WriteError', cause });
  const cases: ReadonlyArray<[string, unknown, { failure: boolean; index: boolean; unavailable: boolean }]> =
    [
      ['a refusal', refusal, { failure: true, index: false, unavailable: true }],
      ['a refusal inside WriteError', wrapped(refusal), { failure: true, index: false, unavailable: true }],
      [
        'an index refusal inside WriteError',
        wrapped(indexRefusal),
        { failure: true, index: true, unavailable: true },
      ],
      [
        'an I/O error that is not ENOSPC, refused',
        wrapped(new StoreFailedError('chamada_events', new Error('IO error: x: Input/output error'))),
        { failure: true, index: false, unavailable: true },
      ],
      ['a bug', new TypeError('x is undefined'), { failure: false, index: false, unavailable: false }],
      [
        'a bug wrapping a bug',
        wrapped(new TypeError('y')),
        { failure: false, index: false, unavailable: false },
      ],
      ['not an error', 'IO error', { failure: false, index: false, unavailable: false }],
    ];
  for (const [name, e, expected] of cases)
    it(name, () =>
      expect({
        failure: isStoreFailure(e),
        index: isIndexWriteRefusal(e),
        unavailable: isStoreUnavailable(e),
      }).to.deep.equal(expected),
    );

  it('a cyclic cause chain ends', () => {
    const a: { cause?: unknown } = {};
    a.cause = a;
    expect(isStoreFailure(a)).to.equal(false);
  });
});
