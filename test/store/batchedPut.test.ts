/** Batched puts on the embedded store keep `put`'s semantics: revs, conflicts, local documents. */
import { expect } from 'chai';
import { PutRefused, putBatched } from '../../src/store/batchedPut.js';
import { isConflict } from '../../src/store/storeErrors.js';
import { embeddedStorePerTest } from '../support/storeBackends.js';

describe('batched put', () => {
  const current = embeddedStorePerTest('batched-put');

  it('stores 200 concurrent puts, each with its own rev', async () => {
    const db = current().db.private;
    const revs = await Promise.all(
      Array.from({ length: 200 }, (_, i) => putBatched(db, { _id: `probe:${i}`, n: i })),
    );
    expect(new Set(revs.map((r) => r.rev)).size).to.equal(200);
    const rows = await db.allDocs({ startkey: 'probe:', endkey: 'probe:\ufff0', include_docs: true });
    expect(rows.rows).to.have.length(200);
    for (const [i, r] of revs.entries()) expect((await db.get(`probe:${i}`))._rev).to.equal(r.rev);
  });

  it('lets one of two concurrent creates of an id win and refuses the other with a conflict', async () => {
    const db = current().db.private;
    const outcomes = await Promise.allSettled([
      putBatched(db, { _id: 'probe:x', who: 'a' }),
      putBatched(db, { _id: 'probe:x', who: 'b' }),
      putBatched(db, { _id: 'probe:x', who: 'c' }),
    ]);
    expect(outcomes.filter((o) => o.status === 'fulfilled')).to.have.length(1);
    const refused = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason] : []));
    expect(refused).to.have.length(2);
    for (const r of refused) {
      expect(r).to.be.instanceOf(PutRefused);
      expect(isConflict(r)).to.equal(true);
    }
  });

  it('refuses a stale rev with a conflict and accepts the current one', async () => {
    const db = current().db.private;
    const first = await putBatched(db, { _id: 'probe:y', v: 1 });
    const second = await putBatched(db, { _id: 'probe:y', _rev: first.rev, v: 2 });
    const stale = await putBatched(db, { _id: 'probe:y', _rev: first.rev, v: 3 }).catch((e: unknown) => e);
    expect(isConflict(stale)).to.equal(true);
    const doc = await db.get<{ v: number }>('probe:y');
    expect(doc.v).to.equal(2);
    expect(doc._rev).to.equal(second.rev);
  });

  it('deletes through a put of _deleted, and writes _local documents directly', async () => {
    const db = current().db.private;
    const made = await putBatched(db, { _id: 'probe:z' });
    await putBatched(db, { _id: 'probe:z', _rev: made.rev, _deleted: true });
    const gone = await db.get('probe:z').catch((e: unknown) => e);
    expect(gone).to.have.property('status', 404);
    const local = await putBatched(db, { _id: '_local/probe', v: 1 });
    expect(local.rev).to.be.a('string');
    expect((await db.get<{ v: number }>('_local/probe')).v).to.equal(1);
  });
});
