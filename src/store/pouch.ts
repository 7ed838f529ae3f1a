/** The PouchDB constructor used everywhere, with the plugins the store needs registered once. */

import PouchFind from 'pouchdb-find';
import PouchDB from 'pouchdb-node';
import { enterIndexCall } from './guardedLevel.js';
import { StoreClosingError } from './storeErrors.js';

PouchDB.plugin(PouchFind);

export { PouchDB };
export type Database = PouchDB.Database;

/**
 * The embedded store's databases answer `find` and `createIndex` (the calls that bring a pouchdb-find
 * index up to date) only while their index databases are open, and never with results from an index
 * whose update failed during the call: pouchdb-find swallows that failure and reads the stale index
 * (see `enterIndexCall`); and not once the store is closing. Other methods are the database's own.
 */
export const withIndexGate = (db: Database, closing: () => boolean): Database => {
  const find = db.find.bind(db);
  const createIndex = db.createIndex.bind(db);
  const gated = async <A>(run: () => Promise<A>): Promise<A> => {
    // The store waits for the calls under way before it closes (`indexCallsSettled`): no new ones.
    if (closing()) throw new StoreClosingError(db.name);
    const call = enterIndexCall(db.name);
    try {
      const result = await run();
      call.check();
      return result;
    } finally {
      call.leave();
    }
  };
  return Object.assign(db, {
    find: (request?: Parameters<typeof find>[0]) => gated(() => find(request)),
    createIndex: (index?: Parameters<typeof createIndex>[0]) => gated(() => createIndex(index)),
  });
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
