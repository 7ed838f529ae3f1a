/**
 * What the store may rely on from a CouchDB cluster (decision 0023): a write acknowledged by a quorum
 * of copies is read back at once by id, through any node (r = w = 2 of n = 3), and concurrent
 * compare-and-swaps through two nodes leave one winner and no conflicting revisions.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import * as t from 'io-ts';
import { getDocs } from '../../src/store/docs.js';
import { openStore, type Store } from '../../src/store/store.js';
import { isStoreUnavailable } from '../../src/store/storeErrors.js';
import {
  type CouchServer,
  conflictsOnceSettled,
  couchServerLabel,
  startCouchServer,
} from '../support/couchServer.js';

const Note = t.type({ _id: t.string, _rev: t.string, n: t.number });

describe(`reads and writes across nodes, on ${couchServerLabel()}`, function () {
  this.timeout(120_000);
  let couch: CouchServer;
  const stores: Store[] = [];
  /** One store per node (the same one node on a single-node server). */
  const through = (node: number): Store => {
    const store = stores[node % stores.length];
    if (store === undefined) throw new Error('no store');
    return store;
  };
  before(async () => {
    couch = await startCouchServer();
    for (const url of couch.nodeUrls) stores.push(await openStore({ kind: 'couchdb', url, prefix: 'q_' }));
  });
  after(async () => {
    for (const s of stores) await s.close();
    await couch.dispose();
  });

  it('reads back at once, by id through another node, every write a node acknowledged', async () => {
    const ids = Array.from({ length: 200 }, () => `note:${randomUUID()}`);
    await Promise.all(ids.map((_id, n) => through(0).db.private.put({ _id, n })));
    const one = await Promise.all(ids.map((id) => through(1).db.private.get(id)));
    expect(one.map((d) => d._id)).to.deep.equal(ids);
    const many = await getDocs(through(2).db.private, Note, ids);
    expect(many.map((d) => d.n)).to.deep.equal(ids.map((_, n) => n));
  });

  it('lets one of two concurrent updates of a revision through two nodes win, and leaves no conflict', async () => {
    for (let round = 0; round < 20; round += 1) {
      const created = await through(0).db.private.put({ _id: `cas:${round}`, n: 0 });
      const doc = { _id: `cas:${round}`, _rev: created.rev };
      const outcomes = await Promise.allSettled([
        through(0).db.private.put({ ...doc, n: 1 }),
        through(1).db.private.put({ ...doc, n: 2 }),
      ]);
      const won = outcomes.filter((o) => o.status === 'fulfilled');
      expect(won, `round ${round}`).to.have.length(1);
      for (const o of outcomes)
        if (o.status === 'rejected') {
          const reason: unknown = o.reason;
          const conflict =
            typeof reason === 'object' && reason !== null && 'status' in reason && reason.status === 409;
          expect(conflict || isStoreUnavailable(reason), String(reason)).to.equal(true);
        }
      expect(
        await conflictsOnceSettled(through(2).db.private, `cas:${round}`),
        `round ${round}: conflicting revisions`,
      ).to.deep.equal([]);
    }
  });
});
