/**
 * The roster as a replication source reads named revisions again while one is missing, on a CouchDB
 * server: a cluster's `_changes` may name a revision that the copies a keyed read asks do not hold yet.
 * Here the revision is stored (`new_edits: false`, a revision chosen in advance) a moment after the
 * read began, as internal replication would bring it; the read answers it instead of `missing`.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Database } from '../../src/store/pouch.js';
import { READ_AGAIN_MS, replicaSource } from '../../src/store/replicaSource.js';
import { type StoreHost, storeBackends } from '../support/storeBackends.js';

const REV = '1-0123456789abcdef0123456789abcdef';

/** Stores `id` at REV after `ms`, as a copy that catches up would. */
const arrivesLater = (db: Database, id: string, ms: number): Promise<unknown> =>
  new Promise((resolve, reject) => {
    setTimeout(() => {
      db.bulkDocs([{ _id: id, _rev: REV, docType: 'rosterStudent', displayName: 'Ana' }], {
        new_edits: false,
      }).then(resolve, reject);
    }, ms);
  });

const [, couch] = storeBackends('replica-source');
if (couch === undefined) throw new Error('storeBackends names the CouchDB backend second');
const [name, host] = couch;

describe(`the roster as a replication source, on ${name}`, () => {
  let server: StoreHost;
  let db: Database;
  before(async () => {
    server = await host();
  });
  after(() => server.dispose());
  beforeEach(async () => {
    db = server.open(`roster-${randomUUID()}`);
    // Created before the reads: a cluster's node may not know a database created a moment ago.
    await db.info();
    await server.copiesAgree();
  });
  afterEach(() => db.destroy());

  it('answers an open_revs read with a revision that reaches the store after the read began', async () => {
    const id = `student:${randomUUID()}`;
    const stored = arrivesLater(db, id, 150);
    const answer = await replicaSource(db, 'roster').openRevs(id, [REV], { revs: true, latest: true });
    await stored;
    expect(JSON.stringify(answer)).to.contain('"ok"').and.to.contain(REV).and.not.contain('"missing"');
  });

  it('answers a _bulk_get with a revision that reaches the store after the read began', async () => {
    const id = `student:${randomUUID()}`;
    const stored = arrivesLater(db, id, 150);
    const answer = await replicaSource(db, 'roster').bulkGet([{ id, rev: REV }], {
      revs: true,
      latest: true,
    });
    await stored;
    expect(JSON.stringify(answer)).to.contain('"ok"').and.to.contain('Ana').and.not.contain('not_found');
  });

  it('answers missing, after its last read, for a revision that never comes', async () => {
    const id = `student:${randomUUID()}`;
    const started = Date.now();
    const answer = await replicaSource(db, 'roster').openRevs(id, [REV], { revs: true, latest: true });
    expect(JSON.stringify(answer)).to.contain('"missing"');
    // It did wait: every pause was taken before it gave up.
    expect(Date.now() - started).to.be.at.least(READ_AGAIN_MS.reduce((a, b) => a + b, 0));
  });
});
