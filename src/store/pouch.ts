/** The PouchDB constructor used everywhere, with the plugins the store needs registered once. */

import PouchFind from 'pouchdb-find';
import PouchDB from 'pouchdb-node';

PouchDB.plugin(PouchFind);

export { PouchDB };
export type Database = PouchDB.Database;
