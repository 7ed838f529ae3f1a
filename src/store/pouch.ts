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
