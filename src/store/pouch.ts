/** The PouchDB constructor used everywhere, with the plugins the store needs registered once. */

import { AsyncLocalStorage } from 'node:async_hooks';
import PouchFind from 'pouchdb-find';
import PouchDB from 'pouchdb-node';
import { waitAtMost } from '../lib/timeouts.js';
import { enterIndexCall } from './guardedLevel.js';
import { StoreClosingError } from './storeErrors.js';

PouchDB.plugin(PouchFind);

export { PouchDB };
export type Database = PouchDB.Database;

/** A database's calls that answer a promise once, and so can be waited for before it closes. */
const SETTLING_CALLS = [
  'allDocs',
  'bulkDocs',
  'bulkGet',
  'compact',
  'deleteIndex',
  'explain',
  'get',
  'getAttachment',
  'getIndexes',
  'info',
  'post',
  'put',
  'putAttachment',
  'query',
  'remove',
  'removeAttachment',
  'revsDiff',
  'viewCleanup',
] as const;
/** The calls that bring a pouchdb-find index up to date. */
const INDEX_CALLS = ['find', 'createIndex'] as const;

export interface ClosingGate {
  /** Resolves once no call made through the gate is under way, or after `timeoutMs`. */
  callsSettled(timeoutMs: number): Promise<void>;
}

/**
 * Set through a call made through a gate. pouchdb-find and PouchDB itself call the database's methods
 * from inside a call (a `find` reads its design document with `get`, a `put` is a `bulkDocs`): those
 * are part of the call under way, which the store lets finish, not new calls to refuse.
 */
const withinCall = new AsyncLocalStorage<true>();

const isThenable = (v: unknown): v is PromiseLike<unknown> =>
  typeof v === 'object' && v !== null && 'then' in v && typeof v.then === 'function';

/**
 * The embedded store's databases behind a gate its `close` shuts:
 * - once the store is closing, every new call is refused with `StoreClosingError` (answered 503)
 *   instead of reaching PouchDB (a call made from inside one under way is part of it: `withinCall`).
 *   PouchDB's leveldb adapter queues its writes, and a write still queued when the database closes
 *   never settles: 20 of 30 writes a round were left pending in a reproduction, and a caller awaiting
 *   one (the audit writer's `close`) hung with them;
 * - the calls under way are counted, so that `close` waits for them before it closes the databases:
 *   each is then answered, and a write acknowledged is on disk;
 * - `find` and `createIndex` answer only while their index databases are open, and never with results
 *   from an index whose update failed during the call: pouchdb-find swallows that failure and reads
 *   the stale index (see `enterIndexCall`).
 * `changes` is the database's own: a live feed never settles, and the feeds are ended before the store
 * closes.
 */
export const withClosingGate = (db: Database, closing: () => boolean): ClosingGate => {
  let underWay = 0;
  const idle: Array<() => void> = [];
  const left = (): void => {
    underWay -= 1;
    if (underWay === 0) for (const wake of idle.splice(0)) wake();
  };
  const refused = (args: ReadonlyArray<unknown>): Promise<never> => {
    const e = new StoreClosingError(db.name);
    const callback = args.at(-1);
    const answer = Promise.reject(e);
    // PouchDB's own calls answer a callback and a promise alike; whoever passed the callback awaits
    // nothing else, so the promise's rejection is theirs through it.
    if (typeof callback === 'function') {
      answer.catch(() => undefined);
      queueMicrotask(() => Reflect.apply(callback, undefined, [e]));
    }
    return answer;
  };
  const gate = (name: string, around: (run: () => unknown) => unknown): void => {
    const original: unknown = Reflect.get(db, name);
    if (typeof original !== 'function') return;
    Reflect.set(db, name, (...args: unknown[]): unknown => {
      if (closing() && withinCall.getStore() === undefined) return refused(args);
      underWay += 1;
      let answer: unknown;
      try {
        answer = withinCall.run(true, () => around(() => Reflect.apply(original, db, args)));
      } catch (e) {
        left();
        throw e;
      }
      if (isThenable(answer)) answer.then(left, left);
      else left();
      return answer;
    });
  };
  for (const name of SETTLING_CALLS) gate(name, (run) => run());
  for (const name of INDEX_CALLS)
    gate(name, async (run) => {
      const call = enterIndexCall(db.name);
      try {
        const result: unknown = await run();
        call.check();
        return result;
      } finally {
        call.leave();
      }
    });
  return {
    async callsSettled(timeoutMs) {
      if (underWay === 0) return;
      let wake: () => void = () => undefined;
      const settled = new Promise<void>((resolve) => {
        wake = resolve;
        idle.push(resolve);
      });
      try {
        await waitAtMost(settled, timeoutMs);
      } finally {
        const at = idle.indexOf(wake);
        if (at >= 0) idle.splice(at, 1);
      }
    },
  };
};

const hasClose = (v: unknown): v is { close: () => Promise<void> } =>
  typeof v === 'object' && v !== null && 'close' in v && typeof v.close === 'function';

/**
 * Closes the databases pouchdb-find opened for `db`'s indexes. PouchDB's leveldb adapter means to
 * close them with their source, but looks them up under a prefixed name they are not stored under,
 * so every index database stayed open after `close()`: in the test process, which opens hundreds of
 * stores, their files ran the process out of descriptors ("Too many open files"), and LevelDB 1.20
 * opens its files without close-on-exec, so every child process started from it inherited them too.
 * The views are read from `_cachedViews`, where PouchDB keeps the promise of each index it opened.
 */
export const closeIndexDatabases = async (db: Database): Promise<void> => {
  const cached: unknown = Reflect.get(db, '_cachedViews');
  if (typeof cached !== 'object' || cached === null) return;
  const views = await Promise.allSettled(Object.values(cached));
  await Promise.allSettled(
    views.map((v) => {
      const index: unknown = v.status === 'fulfilled' ? Reflect.get(Object(v.value), 'db') : undefined;
      return hasClose(index) ? index.close() : undefined;
    }),
  );
};

/**
 * PouchDB's instance id of a database (its `id()`, which the typings lack): kept with the database,
 * so a database removed and made again has another.
 */
export const instanceIdOf = async (db: Database): Promise<string> => {
  const id: unknown = Reflect.get(db, 'id');
  if (typeof id !== 'function') throw new Error('this PouchDB database has no id()');
  const value: unknown = await Reflect.apply(id, db, []);
  if (typeof value !== 'string') throw new Error('PouchDB id() answered no string');
  return value;
};
