/**
 * The store's suite runs twice: on the embedded leveldb store and on a CouchDB-protocol server
 * (express-pouchdb on loopback), so both backends keep the same behaviour.
 */
import { expect } from 'chai';
import { indexSpecs } from '../../src/store/indexes.js';
import { DATABASE_NAMES, openStore, type Store, type StoreLocation } from '../../src/store/store.js';
import { type CouchServer, startCouchServer } from '../support/couchServer.js';
import { makeTempDir, removeDir } from '../support/tempDir.js';

interface Backend {
  readonly name: string;
  setUp(): Promise<StoreLocation>;
  tearDown(): Promise<void>;
  /** Makes the backend unreachable, as a crashed disk or server would be. */
  breakIt(store: Store): Promise<void>;
}

const embedded = (): Backend => {
  let dir = '';
  return {
    name: 'embedded leveldb',
    async setUp() {
      dir = await makeTempDir('store');
      return { kind: 'embedded', dataDir: dir, prefix: 'chamada_' };
    },
    tearDown: () => removeDir(dir),
    breakIt: (store) => store.close(),
  };
};

const couch = (): Backend => {
  let server: CouchServer | undefined;
  return {
    name: 'CouchDB protocol (express-pouchdb)',
    async setUp() {
      server = await startCouchServer();
      return { kind: 'couchdb', url: server.url, prefix: 'chamada_' };
    },
    tearDown: async () => server?.dispose(),
    breakIt: async () => server?.stop(),
  };
};

for (const makeBackend of [embedded, couch]) {
  const backend = makeBackend();
  describe(`store on ${backend.name}`, () => {
    let location: StoreLocation;
    let store: Store;

    beforeEach(async () => {
      location = await backend.setUp();
      store = await openStore(location);
    });
    afterEach(async () => {
      await store.close();
      await backend.tearDown();
    });

    it('opens the four databases under the configured prefix', async () => {
      for (const name of DATABASE_NAMES) {
        const info = await store.db[name].info();
        expect(info.db_name.replace(/\/$/, '')).to.match(new RegExp(`chamada_${name}$`));
      }
    });

    it('keeps the databases apart: a private record is not in the roster', async () => {
      await store.db.private.put({ _id: 'user:1', docType: 'user' });
      const inRoster = await store.db.roster.get('user:1').then(
        () => true,
        (e: unknown) =>
          e instanceof Object && 'status' in e && e.status === 404 ? false : Promise.reject(e),
      );
      expect(inRoster).to.equal(false);
      expect((await store.db.private.get('user:1'))._id).to.equal('user:1');
    });

    it('creates every declared index at start, and opening again is harmless', async () => {
      await store.close();
      store = await openStore(location);
      for (const name of DATABASE_NAMES) {
        const { indexes } = await store.db[name].getIndexes();
        const names = indexes.map((i) => i.name);
        for (const spec of indexSpecs[name]) expect(names, name).to.include(spec.name);
      }
    });

    it('answers a find through its index', async () => {
      await store.db.roster.bulkDocs([
        { _id: 'a', docType: 'student' },
        { _id: 'b', docType: 'class' },
        { _id: 'c', docType: 'student' },
      ]);
      const found = await store.db.roster.find({
        selector: { docType: 'student' },
        use_index: 'idx-by-docType',
      });
      expect(found.docs.map((d) => d._id).sort()).to.deep.equal(['a', 'c']);
    });

    it('keeps what was written across a reopen', async () => {
      await store.db.events.put({ _id: 'event:1', docType: 'event' });
      await store.close();
      store = await openStore(location);
      expect((await store.db.events.get('event:1'))._id).to.equal('event:1');
    });

    it('pings true while reachable and false once the backend is gone, without throwing', async () => {
      expect(await store.ping()).to.equal(true);
      await backend.breakIt(store);
      expect(await store.ping(1000)).to.equal(false);
    });
  });
}
