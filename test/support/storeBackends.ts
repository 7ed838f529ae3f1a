/**
 * The two kinds of store a store module must answer alike on: the embedded LevelDB and a
 * CouchDB server (express-pouchdb from npm, or a real CouchDB under npm run test:couchdb). A host serves one suite; each test opens a
 * database of its own on it.
 */
import { randomUUID } from 'node:crypto';
import { type Database, PouchDB } from '../../src/store/pouch.js';
import { openStore, type Store } from '../../src/store/store.js';
import { type CouchServer, couchServerLabel, startCouchServer, untilCopiesAgree } from './couchServer.js';
import { fixture, type Scope } from './hooks.js';
import { makeTempDir, removeDir } from './tempDir.js';

export interface StoreHost {
  open(name: string): Database;
  dispose(): Promise<void>;
  /**
   * Until every copy holds what was written (a cluster's internal replication has caught up): a
   * write a test makes by hand, such as a second leaf, may be acknowledged by fewer copies than a
   * later read asks. Nothing to wait for on one node or the embedded store.
   */
  copiesAgree(): Promise<void>;
}

export const storeBackends = (label: string): ReadonlyArray<[string, () => Promise<StoreHost>]> => [
  [
    'embedded leveldb',
    async () => {
      const dir = await makeTempDir(label);
      return {
        open: (name) => new PouchDB(`${dir}/${name}`),
        dispose: () => removeDir(dir),
        copiesAgree: async () => {},
      };
    },
  ],
  [
    couchServerLabel(),
    async () => {
      const server = await startCouchServer();
      return {
        open: (name) => new PouchDB(`${server.url}/${name}`),
        dispose: () => server.dispose(),
        copiesAgree: async () => {
          await untilCopiesAgree(server);
        },
      };
    },
  ],
];

/**
 * An embedded store (every database and index, as the service opens them) in a temp dir, opened in the
 * enclosing `describe`'s hooks: fresh for each test (`'test'`) or one for the suite (`'file'`), closed
 * and removed after it; the returned function gives the current one.
 */
export const embeddedStore = (label: string, scope: Scope = 'test', prefix = 'chamada_'): (() => Store) => {
  const current = fixture(
    scope,
    async () => {
      const dir = await makeTempDir(label);
      return { dir, store: await openStore({ kind: 'embedded', dataDir: dir, prefix }) };
    },
    async ({ dir, store }) => {
      await store.close();
      await removeDir(dir);
    },
  );
  return () => current().store;
};

/** A fresh embedded store for each test of the suite that calls this (`embeddedStore(label, 'test')`). */
export const embeddedStorePerTest = (label: string): (() => Store) => embeddedStore(label, 'test');

/**
 * Within a `describe`: one host for the suite and a fresh database on it for each test, destroyed
 * after it. The returned functions give the current ones.
 */
export const databasePerTest = (
  host: () => Promise<StoreHost>,
  prefix: string,
): { readonly db: () => Database; readonly server: () => StoreHost } => {
  let server: StoreHost | undefined;
  let db: Database | undefined;
  before(async () => {
    server = await host();
  });
  after(() => server?.dispose());
  beforeEach(() => {
    if (server === undefined) throw new Error('no store host');
    db = server.open(`${prefix}-${randomUUID()}`);
  });
  afterEach(() => db?.destroy());
  const current = <A>(a: A | undefined): A => {
    if (a === undefined) throw new Error('outside a test');
    return a;
  };
  return { db: () => current(db), server: () => current(server) };
};

/**
 * Within a `describe`: two app instances' stores on one CouchDB-protocol server, for the suite. With
 * `throughAnotherNode`, the second goes through another node of a cluster where there is one (the
 * race that leaves conflicting revisions behind); the returned function gives them.
 */
export const twoStoresOnOneCouch = (
  throughAnotherNode = false,
): (() => { readonly a: Store; readonly b: Store; readonly server: CouchServer }) => {
  return fixture(
    'file',
    async () => {
      const server = await startCouchServer();
      const a = await openStore({ kind: 'couchdb', url: server.url, prefix: 'chamada_' });
      const url = throughAnotherNode ? (server.nodeUrls[1] ?? server.url) : server.url;
      return { a, b: await openStore({ kind: 'couchdb', url, prefix: 'chamada_' }), server };
    },
    async ({ a, b, server }) => {
      await a.close();
      await b.close();
      await server.dispose();
    },
  );
};
