/**
 * The store's suite runs twice: on the embedded leveldb store and on a CouchDB server (express-pouchdb
 * on loopback, or a real CouchDB under `npm run test:couchdb`), so both backends keep the same behaviour.
 */
import { randomUUID } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { eventStore } from '../../src/store/events.js';
import { EVENTS_DESIGN_ID } from '../../src/store/eventsDesign.js';
import { ensureIndexes, indexGroupOf, indexIn, indexSpecs, retiredIndexes } from '../../src/store/indexes.js';
import { PouchDB } from '../../src/store/pouch.js';
import { withdrawal } from '../../src/store/quorumWrites.js';
import {
  DATABASE_NAMES,
  type DatabaseName,
  openStore,
  type Store,
  type StoreLocation,
} from '../../src/store/store.js';
import { isStoreUnavailable } from '../../src/store/storeErrors.js';
import {
  type CouchServer,
  couchFetch,
  couchServerLabel,
  onRealCouch,
  startCouchServer,
  untilTestCouchCopiesAgree,
} from '../support/couchServer.js';
import { pipelineReading } from '../support/pipelineReading.js';
import { statusOf } from '../support/pouchStatus.js';
import { readUntil } from '../support/readUntil.js';
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
    name: couchServerLabel(),
    async setUp() {
      server = await startCouchServer({ validation: true });
      return { kind: 'couchdb', url: server.url, prefix: 'chamada_' };
    },
    tearDown: async () => server?.dispose(),
    breakIt: async () => server?.stop(),
  };
};

/**
 * The design document of an index as a fresh store lays it out: on CouchDB a database's indexes share
 * one, unless it has a single index; on the embedded store each has its own.
 */
const expectedDesign = (database: DatabaseName, index: string, onCouch: boolean): string =>
  onCouch && indexSpecs[database].length > 1 ? indexGroupOf(database) : `idx-${index}`;

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
      // The server is released whatever the store did: a store that failed to open must not leave the
      // run's one CouchDB held for every suite after it.
      try {
        await store.close();
      } finally {
        await backend.tearDown();
      }
    });

    it('opens the six databases under the configured prefix', async () => {
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
        // The list is a range read of the design documents, one copy of each shard on a cluster: it
        // may lag the indexes' creation a moment (decision 0023).
        const names = await readUntil(
          async () => (await store.db[name].getIndexes()).indexes.map((i) => i.name),
          (listed) => indexSpecs[name].every((spec) => listed.includes(spec.name)),
        );
        for (const spec of indexSpecs[name]) expect(names, name).to.include(spec.name);
      }
    });

    it('removes a retired index at start, leaving the others', async () => {
      // A store laid out as before: the events' index by kind, never read.
      await store.db.events.createIndex({
        index: { name: 'by-docType', ddoc: 'idx-by-docType', fields: ['docType'] },
      });
      // The start lists the design documents by a range read (one copy of each shard on a cluster).
      await untilTestCouchCopiesAgree();
      await store.close();
      store = await openStore(location);
      // The list is a range read of the design documents (one copy of each shard on a cluster).
      const listed = await readUntil(
        async () => (await store.db.events.getIndexes()).indexes.map((i) => i.ddoc),
        (ddocs) => !ddocs.includes('_design/idx-by-docType'),
      );
      expect(listed).to.not.include('_design/idx-by-docType');
      const names = (await store.db.events.getIndexes()).indexes.map((i) => i.name);
      for (const spec of indexSpecs.events) expect(names).to.include(spec.name);
      expect(retiredIndexes.events).to.include('by-docType');
    });

    // Two instances of one deployment start together on CouchDB (the embedded store is one process's).
    if (makeBackend === couch)
      it('leaves every index in place when two instances create them at once', async () => {
        if (location.kind !== 'couchdb') throw new Error('a CouchDB backend was expected');
        // Two instances' handles on fresh databases, each creating every database's indexes at once,
        // as a start does: CouchDB refuses the later of two writes of one design document.
        const prefix = `${location.url.replace(/\/$/, '')}/twice_${randomUUID().slice(0, 8)}_`;
        const pairs = DATABASE_NAMES.map((name) => {
          const address = `${prefix}${name}`;
          return { name, a: new PouchDB(address), b: new PouchDB(address) };
        });
        try {
          await Promise.all(pairs.map((p) => p.a.info()));
          await Promise.all(
            pairs.flatMap((p) =>
              [p.a, p.b].map((db) => ensureIndexes(db, indexSpecs[p.name], [], indexGroupOf(p.name))),
            ),
          );
          await untilTestCouchCopiesAgree();
          for (const p of pairs) {
            const listed = (await p.b.getIndexes()).indexes;
            for (const spec of indexSpecs[p.name])
              expect(
                listed.filter((i) => i.name === spec.name).map((i) => i.ddoc),
                `${p.name} ${spec.name}`,
              ).to.deep.equal([`_design/${expectedDesign(p.name, spec.name, true)}`]);
          }
        } finally {
          for (const p of pairs) {
            await p.a.destroy();
            await p.b.close().catch(() => undefined);
          }
        }
      });

    it("keeps a database's indexes in one design document on CouchDB, one each on the embedded store", async () => {
      const onCouch = location.kind === 'couchdb';
      for (const name of DATABASE_NAMES) {
        // The list is a range read of the design documents (one copy of each shard on a cluster).
        const listed = await readUntil(
          async () => (await store.db[name].getIndexes()).indexes.filter((i) => i.ddoc !== null),
          (l) => indexSpecs[name].every((spec) => l.some((i) => i.name === spec.name)),
        );
        for (const spec of indexSpecs[name]) {
          const ddoc = expectedDesign(name, spec.name, onCouch);
          expect(
            listed.filter((i) => i.name === spec.name).map((i) => i.ddoc),
            `${name} ${spec.name}`,
          ).to.deep.equal([`_design/${ddoc}`]);
          // What the store's queries name is where the index is.
          expect(indexIn(store.db[name], spec.name), `${name} ${spec.name}`).to.deep.equal(
            ddoc === `idx-${spec.name}` ? ddoc : [ddoc, spec.name],
          );
        }
      }
      // A query through one of the shared document's indexes answers from it.
      await store.db.private.bulkDocs([
        { _id: 'pickup:1', docType: 'pickup', studentId: 's-1' },
        { _id: 'pickup:2', docType: 'pickup', studentId: 's-2' },
      ]);
      const found = await readUntil(
        () =>
          store.db.private.find({
            selector: { docType: 'pickup', studentId: 's-2' },
            use_index: indexIn(store.db.private, 'by-docType-studentId'),
          }),
        (r) => r.docs.length === 1,
      );
      expect(found.docs.map((d) => d._id)).to.deep.equal(['pickup:2']);
    });

    it('adds a new index to the shared design document at the next start, and drops a retired one', async () => {
      // A start of a later version: one more index of the requests, one of its indexes retired.
      const [kept, retiredOne] = indexSpecs.requests;
      if (kept === undefined || retiredOne === undefined) throw new Error('two indexes of the requests');
      const later = [kept, { name: 'by-docType-later', fields: ['docType', 'later'] }];
      await ensureIndexes(store.db.requests, later, [retiredOne.name], indexGroupOf('requests'));
      await untilTestCouchCopiesAgree();
      const names = await readUntil(
        async () => (await store.db.requests.getIndexes()).indexes.map((i) => i.name),
        (l) => l.includes('by-docType-later'),
      );
      expect(names).to.include.members([kept.name, 'by-docType-later']);
      expect(names).to.not.include(retiredOne.name);
      // And again: nothing to change, nothing written.
      if (location.kind === 'couchdb') {
        const before = (await store.db.requests.get(`_design/${indexGroupOf('requests')}`))._rev;
        await ensureIndexes(store.db.requests, later, [retiredOne.name], indexGroupOf('requests'));
        const after = (await store.db.requests.get(`_design/${indexGroupOf('requests')}`))._rev;
        expect(after).to.equal(before);
      }
    });

    it('moves the indexes of a database laid out one a design document into its shared one, and queries them there', async () => {
      // A database from before the shared design documents: its indexes each in their own.
      await store.close();
      const fresh = { ...location, prefix: `legacy${randomUUID().slice(0, 6)}_` };
      store = await openStore(fresh);
      const onCouch = location.kind === 'couchdb';
      const legacy = store.db.requests;
      // On CouchDB the store made the shared design document: gone, as it never was.
      if (onCouch) {
        const group = await legacy.get(`_design/${indexGroupOf('requests')}`);
        await legacy.put({ _id: group._id, _rev: group._rev, _deleted: true });
      }
      for (const spec of indexSpecs.requests)
        await legacy.createIndex({
          index: { name: spec.name, ddoc: `idx-${spec.name}`, fields: [...spec.fields] },
        });
      await legacy.bulkDocs([
        { _id: 'idempotency:a', docType: 'idempotency', expiresAt: 1 },
        { _id: 'idempotency:b', docType: 'idempotency', expiresAt: 2 },
      ]);
      // The start lists the design documents by a range read, one copy of each shard on a cluster:
      // a deployment's own documents are long agreed on; these were written a moment ago.
      await untilTestCouchCopiesAgree();
      await store.close();
      store = await openStore(fresh);
      // The start keeps the old layout and moves it in the background, on CouchDB only.
      const moves = await store.indexMoves;
      expect(moves).to.deep.equal(onCouch ? [{ database: 'requests', outcome: 'moved' }] : []);
      await untilTestCouchCopiesAgree();
      const listed = await readUntil(
        async () => (await store.db.requests.getIndexes()).indexes.filter((i) => i.ddoc !== null),
        (l) => !onCouch || l.every((i) => i.ddoc === `_design/${indexGroupOf('requests')}`),
      );
      for (const spec of indexSpecs.requests) {
        const ddoc = expectedDesign('requests', spec.name, onCouch);
        expect(
          listed.filter((i) => i.name === spec.name).map((i) => i.ddoc),
          spec.name,
        ).to.deep.equal([`_design/${ddoc}`]);
        expect(indexIn(store.db.requests, spec.name)).to.deep.equal(
          onCouch ? [ddoc, spec.name] : `idx-${spec.name}`,
        );
      }
      expect(new Set(listed.map((i) => i.ddoc)).size).to.equal(onCouch ? 1 : indexSpecs.requests.length);
      // The queries answer through where the indexes are now, with what was written before.
      const found = await readUntil(
        () =>
          store.db.requests.find({
            selector: { docType: 'idempotency', expiresAt: { $lte: 1 } },
            use_index: indexIn(store.db.requests, 'by-docType-expiresAt'),
          }),
        (r) => r.docs.length === 1,
      );
      expect(found.docs.map((d) => d._id)).to.deep.equal(['idempotency:a']);
      // And the next start finds nothing left to move.
      await store.close();
      store = await openStore(fresh);
      expect(await store.indexMoves).to.deep.equal([]);
    });

    it('answers a find through its index', async () => {
      await store.db.roster.bulkDocs([
        { _id: 'a', docType: 'student' },
        { _id: 'b', docType: 'class' },
        { _id: 'c', docType: 'student' },
      ]);
      // A Mango query reads one copy of each shard on a cluster, which may lag the write a moment.
      const found = await readUntil(
        () => store.db.roster.find({ selector: { docType: 'student' }, use_index: 'idx-by-docType' }),
        (r) => r.docs.length >= 2,
      );
      expect(found.docs.map((d) => d._id).sort()).to.deep.equal(['a', 'c']);
    });

    it('keeps what was written across a reopen', async () => {
      await store.db.events.put({ _id: 'event:1', docType: 'event', eventId: '1' });
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

/**
 * The events database on a CouchDB-protocol server has no guard (decision 0063): what the guard
 * refused is stored, and the pipeline reports it (`pipelineReading`); the events store's own marked
 * writes are not reported. The server runs `validate_doc_update` functions, so the guard an earlier
 * version installed would still refuse, until a start removes it.
 */
describe('the events database on a CouchDB-protocol server: no guard, what it refused reported by the pipeline', () => {
  let server: CouchServer;
  let store: Store;
  beforeEach(async () => {
    server = await startCouchServer({ validation: true });
    store = await openStore({ kind: 'couchdb', url: server.url, prefix: 'g_' });
  });
  afterEach(async () => {
    await store.close();
    await server.dispose();
  });

  /**
   * On a cluster, waits until every copy of the document has its latest revision: a read with `r` = all
   * nodes, which CouchDB answers once all agree or after writing what each lacks to it. A change
   * written on top of a revision one copy lacks would fork the document instead of following it.
   */
  const everyCopyHolds = async (id: string): Promise<void> => {
    const all = server.nodeUrls.length;
    if (all === 1) return;
    for (let tries = 0; tries < 200; tries += 1) {
      const r = await couchFetch(`${server.url}/g_events/${encodeURIComponent(id)}?r=${all}`);
      if (r.ok) return;
      await sleep(25);
    }
    throw new Error(`${id}: not on all ${all} copies after 5 s`);
  };
  const readByPipeline = (id: string, rev?: string) =>
    pipelineReading(store.db.events, id, rev === undefined ? {} : { rev });

  const anEvent = () => {
    const eventId = randomUUID();
    return {
      _id: `event:${eventId}`,
      docType: 'event',
      eventId,
      type: 'MARK_PRESENT',
      subjectType: 'STUDENT',
      subjectId: 's',
      aspect: 'attendance:s:2026-11-26',
      baseVersion: null,
      payload: { actionType: 'MARK_PRESENT' },
      actor: { userId: 'u', role: 'CHAMADOR' },
      deviceId: null,
      clientTimestamp: '2026-11-26T10:00:00.000Z',
      serverTimestamp: '2026-11-26T10:00:00.000Z',
    };
  };

  it('a change, a deletion, a document that is not an event, or one under another id: stored, and each reported', async () => {
    const doc = anEvent();
    expect(await eventStore(store.db.events).append(doc)).to.equal('stored');
    expect(await readByPipeline(doc._id)).to.equal('aspect');
    await everyCopyHolds(doc._id);
    const stored = await store.db.events.get(doc._id);
    const rewriting = store.db.events.put({ ...stored, type: 'MARK_ABSENT' });
    expect(await statusOf(rewriting)).to.equal(200);
    // The feed may still list the first revision on a cluster: read it at the one just written.
    expect(await readByPipeline(doc._id, (await rewriting).rev)).to.equal('REWRITTEN');
    await everyCopyHolds(doc._id);
    const rewritten = await store.db.events.get(doc._id);
    const removing = store.db.events.remove(rewritten._id, rewritten._rev);
    expect(await statusOf(removing)).to.equal(200);
    expect(await readByPipeline(doc._id, (await removing).rev)).to.equal('DELETED');
    expect(await statusOf(store.db.events.put({ _id: 'note:1', docType: 'note' }))).to.equal(200);
    expect(await readByPipeline('note:1')).to.equal('UNDECODABLE_EVENT');
    const elsewhere = { ...anEvent(), _id: `event:${randomUUID()}` };
    expect(await statusOf(store.db.events.put(elsewhere))).to.equal(200);
    expect(await readByPipeline(elsewhere._id)).to.equal('MISNAMED_EVENT');
  });

  it('the withdrawal of a copy written short of its quorum, and the event stored again over it, are not reported (decision 0023)', async () => {
    const doc = anEvent();
    await store.db.events.put(doc);
    await everyCopyHolds(doc._id);
    const stored = await store.db.events.get(doc._id);
    expect(await statusOf(store.db.events.put(withdrawal(stored._id, stored._rev)))).to.equal(200);
    // The write is tried again over the tombstone: two generations on, as the events store writes it.
    expect(await statusOf(store.db.events.put(doc))).to.equal(200);
    const again = (await store.db.events.get(doc._id))._rev;
    expect(again).to.match(/^3-/);
    expect(await readByPipeline(doc._id, again)).to.equal('aspect');
  });

  it('a start removes the guard an earlier version installed, once, and then stores what it refused', async () => {
    const guard = {
      _id: EVENTS_DESIGN_ID,
      language: 'javascript',
      validate_doc_update:
        "function (newDoc, oldDoc) { if (oldDoc && !oldDoc._deleted) throw({ forbidden: 'events are immutable' }); }",
    };
    /**
     * CouchDB reads a database's validation functions by a range read of its design documents (one
     * copy of each shard on a cluster) and caches them per node: right after the guard is written or
     * removed, the node may act on a copy that lags. A probe document is changed until the node
     * answers `status`, for up to 10 s, before the event's own change is asserted.
     */
    const untilGuardAnswers = async (status: 200 | 403): Promise<void> => {
      const id = `probe:${randomUUID()}`;
      let rev = (await store.db.events.put({ _id: id })).rev;
      let answered: number | undefined;
      for (let tries = 0; tries < 400; tries += 1) {
        const writing = store.db.events.put({ _id: id, _rev: rev, n: tries });
        answered = await statusOf(writing);
        if (answered === 200) rev = (await writing).rev;
        if (answered === status) return;
        await sleep(25);
      }
      throw new Error(`the guard still answered ${answered ?? 'nothing'} after 10 s, not ${status}`);
    };
    const doc = anEvent();
    await store.db.events.put(doc);
    await store.db.events.put(guard);
    await everyCopyHolds(doc._id);
    await untilGuardAnswers(403);
    const stored = await store.db.events.get(doc._id);
    expect(await statusOf(store.db.events.put({ ...stored, type: 'MARK_ABSENT' }))).to.equal(403);
    expect(store.opening.eventsGuardRemoved).to.equal(false);
    const upgraded = await openStore({ kind: 'couchdb', url: server.url, prefix: 'g_' });
    const again = await openStore({ kind: 'couchdb', url: server.url, prefix: 'g_' });
    await upgraded.close();
    await again.close();
    expect([upgraded.opening.eventsGuardRemoved, again.opening.eventsGuardRemoved]).to.deep.equal([
      true,
      false,
    ]);
    expect(await statusOf(store.db.events.get(EVENTS_DESIGN_ID))).to.equal(404);
    await untilGuardAnswers(200);
    const rewriting = store.db.events.put({ ...stored, type: 'MARK_ABSENT' });
    expect(await statusOf(rewriting)).to.equal(200);
    expect(await readByPipeline(doc._id, (await rewriting).rev)).to.equal('REWRITTEN');
  });

  it("the events database answers CouchDB's admins only", async () => {
    const security = async () => {
      const r = await couchFetch(`${server.url}/g_events/_security`);
      return r.ok ? ((await r.json()) as unknown) : r.status;
    };
    const membersOf = (s: unknown): string =>
      typeof s === 'object' && s !== null && 'members' in s ? JSON.stringify(s.members) : '';
    // On a cluster a read of `_security` may come from a shard copy the last write has not reached
    // yet (it read back `{}` once, thirty-second session): read again until the members show.
    const securityWith = (member: string) => readUntil(security, (s) => membersOf(s).includes(member));
    if (onRealCouch()) {
      // CouchDB 3 creates databases admin-only; one an operator opened to everyone is closed again.
      expect(store.opening.eventsSecurity).to.equal('admins only');
      const opened = await couchFetch(`${server.url}/g_events/_security`, { method: 'PUT', body: '{}' });
      expect(opened.ok).to.equal(true);
      const upgraded = await openStore({ kind: 'couchdb', url: server.url, prefix: 'g_' });
      await upgraded.close();
      expect(upgraded.opening.eventsSecurity).to.equal('set');
      expect(await securityWith('_admin')).to.deep.include({ members: { names: [], roles: ['_admin'] } });
      // Members an operator named are the operator's decision: kept, and said at start.
      const named = { members: { names: ['office'], roles: [] } };
      await couchFetch(`${server.url}/g_events/_security`, { method: 'PUT', body: JSON.stringify(named) });
      const third = await openStore({ kind: 'couchdb', url: server.url, prefix: 'g_' });
      await third.close();
      expect(third.opening.eventsSecurity).to.equal('members');
      expect(await securityWith('office')).to.deep.include(named);
    } else {
      // express-pouchdb has no `_security`: the start says it could not tell.
      expect(store.opening.eventsSecurity).to.equal('unknown');
    }
  });
});

describe('closing the embedded store', () => {
  it('closes the databases of its indexes too, so no file stays open', async () => {
    const openFiles = async () => (await readdir('/proc/self/fd')).length;
    const before = await openFiles();
    for (let i = 0; i < 3; i += 1) {
      const dir = await makeTempDir('close');
      const store = await openStore({ kind: 'embedded', dataDir: dir, prefix: 'c_' });
      // A query through every index of a database, as the service makes them.
      await store.db.audit.find({ selector: { subject_id: 'x' }, use_index: 'idx-by-subject_id' });
      await store.db.projections.find({
        selector: { docType: 'conflict', detectedAt: { $gt: '' } },
        use_index: 'idx-by-docType-detectedAt',
      });
      await store.close();
      await removeDir(dir);
    }
    // Each store left about sixty descriptors open (its index databases) before they were closed.
    expect(await openFiles()).to.be.at.most(before + 2);
  });

  it('answers every write under way when it closes, keeps those it acknowledged, and refuses later calls', async () => {
    const dir = await makeTempDir('close-writes');
    try {
      const acknowledged: string[] = [];
      for (let round = 0; round < 3; round += 1) {
        const store = await openStore({ kind: 'embedded', dataDir: dir, prefix: 'c_' });
        // A burst the adapter queues (it writes one at a time), then the close, as a stop under load.
        const writes = Array.from({ length: 30 }, (_, i) => {
          const id = `entry-${round}-${i}`;
          return store.db.audit.put({ _id: id, body: 'x'.repeat(500) }).then(
            () => ({ id, outcome: 'stored' }),
            (e: unknown) => ({ id, outcome: isStoreUnavailable(e) ? 'refused' : String(e) }),
          );
        });
        const closed = store.close();
        // Before the store waited for them, a write still queued when its database closed never
        // settled (most of the burst, in most rounds): each is given far longer than it takes.
        const outcomes = await Promise.all(
          writes.map((w) =>
            Promise.race([w, sleep(10_000).then(() => ({ id: '', outcome: 'never answered' }))]),
          ),
        );
        await closed;
        expect(outcomes.filter((o) => o.outcome !== 'stored' && o.outcome !== 'refused')).to.deep.equal([]);
        acknowledged.push(...outcomes.filter((o) => o.outcome === 'stored').map((o) => o.id));
        const late = await store.db.audit.put({ _id: `late-${round}`, body: '' }).then(
          () => 'stored',
          (e: unknown) => (isStoreUnavailable(e) ? 'refused' : String(e)),
        );
        expect(late).to.equal('refused');
      }
      const reopened = await openStore({ kind: 'embedded', dataDir: dir, prefix: 'c_' });
      try {
        const stored = await reopened.db.audit.allDocs({ keys: acknowledged });
        expect(stored.rows.filter((r) => !('value' in r)).map((r) => r.key)).to.deep.equal([]);
      } finally {
        await reopened.close();
      }
    } finally {
      await removeDir(dir);
    }
  });
});

describe('documents rewritten on the embedded store', () => {
  it('keep only the current body, and their whole revision history', async () => {
    const dir = await makeTempDir('compaction');
    const store = await openStore({ kind: 'embedded', dataDir: dir, prefix: 'c_' });
    try {
      // An aspect rewritten at each of its events, as the pipeline does.
      const db = store.db.projections;
      const revs: string[] = [];
      let rev: string | undefined;
      for (let n = 1; n <= 5; n += 1) {
        const written = await db.put({
          _id: 'aspect:x',
          events: n,
          ...(rev === undefined ? {} : { _rev: rev }),
        });
        rev = written.rev;
        revs.push(rev);
      }
      const current = await db.get<{ events: number }>('aspect:x', { revs: true });
      expect(current.events).to.equal(5);
      // What replication and compare-and-swap need (every revision id) stays.
      expect(current._revisions?.ids).to.have.length(5);
      // A superseded body is gone, as after CouchDB's compaction: ten minutes of soak left 184 MB of them.
      for (const old of revs.slice(0, -1)) {
        const read = await db.get('aspect:x', { rev: old }).then(
          () => 'found',
          (e: unknown) => (e instanceof Object && 'status' in e ? e.status : e),
        );
        expect(read, old).to.equal(404);
      }
      // And a stale revision is still refused.
      const stale = await db.put({ _id: 'aspect:x', _rev: revs[0] }).then(
        () => 'stored',
        (e: unknown) => (e instanceof Object && 'status' in e ? e.status : e),
      );
      expect(stale).to.equal(409);
    } finally {
      await store.close();
      await removeDir(dir);
    }
  });
});
