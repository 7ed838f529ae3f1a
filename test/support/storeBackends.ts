/**
 * The two kinds of store a store module must answer alike on: the embedded LevelDB and a
 * CouchDB-protocol server (express-pouchdb from npm). A host serves one suite; each test opens a
 * database of its own on it.
 */
import { type Database, PouchDB } from '../../src/store/pouch.js';
import { startCouchServer } from './couchServer.js';
import { makeTempDir, removeDir } from './tempDir.js';

export interface StoreHost {
  open(name: string): Database;
  dispose(): Promise<void>;
}

export const storeBackends = (label: string): ReadonlyArray<[string, () => Promise<StoreHost>]> => [
  [
    'embedded leveldb',
    async () => {
      const dir = await makeTempDir(label);
      return { open: (name) => new PouchDB(`${dir}/${name}`), dispose: () => removeDir(dir) };
    },
  ],
  [
    'CouchDB protocol (express-pouchdb)',
    async () => {
      const server = await startCouchServer();
      return { open: (name) => new PouchDB(`${server.url}/${name}`), dispose: () => server.dispose() };
    },
  ],
];
