/**
 * The roster database as `rules/roster.ts` wants it: reconciling writes what differs, leaves what is
 * equal untouched (no new revision, so tablets pull nothing), deletes what is no longer wanted
 * (tablets receive the deletion) and recreates a document on top of its tombstone. Both backends.
 */
import { expect } from 'chai';
import type { RosterDoc } from '../../src/domain/roster.js';
import type { Database } from '../../src/store/pouch.js';
import { rosterStore } from '../../src/store/roster.js';
import { countingBodyReads } from '../support/bodyReads.js';
import { databasePerTest, storeBackends } from '../support/storeBackends.js';

const backends = storeBackends('roster');

const cls = (id: string, name: string): RosterDoc => ({
  _id: `class:${id}`,
  docType: 'rosterClass',
  classId: id,
  name,
});

for (const [backend, setUp] of backends) {
  describe(`roster store on ${backend}`, function () {
    this.timeout(60_000);
    const per = databasePerTest(setUp, 'roster');
    let db: Database;
    beforeEach(async () => {
      db = per.db();
      await db.put({ _id: '_design/idx-by-docType', views: {} });
    });

    const revs = async (): Promise<Map<string, string>> =>
      new Map(
        (await db.allDocs()).rows.filter((r) => !r.id.startsWith('_design/')).map((r) => [r.id, r.value.rev]),
      );
    const names = async (): Promise<Record<string, unknown>> =>
      Object.fromEntries(
        (await db.allDocs({ include_docs: true })).rows
          .filter((r) => !r.id.startsWith('_design/'))
          .map((r) => [
            r.id,
            r.doc !== null && r.doc !== undefined && 'name' in r.doc ? r.doc.name : undefined,
          ]),
      );

    it('reconcile: writes the new and the changed, deletes the unwanted, leaves the equal and design documents', async () => {
      const roster = rosterStore(db);
      expect(await roster.reconcile([cls('a', 'A'), cls('b', 'B'), cls('c', 'C')])).to.deep.equal({
        written: 3,
        deleted: 0,
      });
      // A range read is served by one copy of each shard: on a cluster, read once all copies agree.
      await per.server().copiesAgree();
      const before = await revs();
      expect(await roster.reconcile([cls('a', 'A'), cls('b', 'B2'), cls('d', 'D')])).to.deep.equal({
        written: 2,
        deleted: 1,
      });
      await per.server().copiesAgree();
      const after = await revs();
      expect(after.get('class:a'), 'an equal document keeps its revision').to.equal(before.get('class:a'));
      expect(after.get('class:b')).to.not.equal(before.get('class:b'));
      expect(await names()).to.deep.equal({ 'class:a': 'A', 'class:b': 'B2', 'class:d': 'D' });
      expect((await db.get('_design/idx-by-docType'))._id).to.equal('_design/idx-by-docType');
      expect(await roster.reconcile([cls('a', 'A'), cls('b', 'B2'), cls('d', 'D')])).to.deep.equal({
        written: 0,
        deleted: 0,
      });
    });

    it('reconcileSome: touches only the ids named, and recreates a deleted document over its tombstone', async () => {
      const roster = rosterStore(db);
      await roster.reconcile([cls('a', 'A'), cls('b', 'B'), cls('c', 'C')]);
      // The reads below are ranges and a feed, one copy of each shard: on a cluster, once all agree.
      await per.server().copiesAgree();
      const before = await revs();
      // `c` is named without a wanted document (deleted); `z` is wanted but outside the ids (left alone).
      expect(
        await roster.reconcileSome(
          ['a', 'b', 'c'].map((x) => `class:${x}`),
          [cls('a', 'A'), cls('b', 'B2'), cls('z', 'Z')],
        ),
      ).to.deep.equal({ written: 1, deleted: 1 });
      await per.server().copiesAgree();
      const after = await revs();
      expect(after.get('class:a')).to.equal(before.get('class:a'));
      expect(await names()).to.deep.equal({ 'class:a': 'A', 'class:b': 'B2' });
      // Deleting what is already gone, or an id never stored, changes nothing.
      expect(await roster.reconcileSome(['class:c', 'class:never'], [])).to.deep.equal({
        written: 0,
        deleted: 0,
      });
      expect(await roster.reconcileSome(['class:c'], [cls('c', 'C again')])).to.deep.equal({
        written: 1,
        deleted: 0,
      });
      await per.server().copiesAgree();
      expect(await names()).to.deep.equal({ 'class:a': 'A', 'class:b': 'B2', 'class:c': 'C again' });
      // A tablet replicating from the start sees the recreated document, not the deletion.
      const changes = await db.changes({ since: 0 });
      const c = changes.results.find((r) => r.id === 'class:c');
      expect(c?.deleted ?? false).to.equal(false);
    });

    it('reconcileRange: a range wanted as at its last reconcile and not written since is checked by its revisions alone; a write since, by anyone, is read and mended', async () => {
      const bodies = countingBodyReads(db);
      const roster = rosterStore(bodies.db);
      const range = { from: 'class:', to: 'class;' };
      const reconciled = async (desired: RosterDoc[]) => {
        await per.server().copiesAgree();
        bodies.count = 0;
        const r = await roster.reconcileRange(range, desired);
        return { ...r, bodyReads: bodies.count };
      };
      expect(await reconciled([cls('a', 'A'), cls('b', 'B')])).to.deep.equal({
        written: 2,
        deleted: 0,
        bodyReads: 1,
      });
      expect(await reconciled([cls('a', 'A'), cls('b', 'B')]), 'unchanged').to.deep.equal({
        written: 0,
        deleted: 0,
        bodyReads: 0,
      });
      // A write by another writer in the range: changed, then created.
      await per.server().copiesAgree();
      const b = await db.get('class:b');
      await db.put({ ...b, name: 'B by hand' });
      expect(await reconciled([cls('a', 'A'), cls('b', 'B')])).to.deep.equal({
        written: 1,
        deleted: 0,
        bodyReads: 1,
      });
      await db.put(cls('x', 'X'));
      expect(await reconciled([cls('a', 'A'), cls('b', 'B')])).to.deep.equal({
        written: 0,
        deleted: 1,
        bodyReads: 1,
      });
      expect(await reconciled([cls('a', 'A'), cls('b', 'B')])).to.deep.equal({
        written: 0,
        deleted: 0,
        bodyReads: 0,
      });
      // Wanted otherwise: read whole.
      expect(await reconciled([cls('a', 'A'), cls('b', 'B2')])).to.deep.equal({
        written: 1,
        deleted: 0,
        bodyReads: 1,
      });
      // Another instance reconciles the range its own way; this one's memo does not vouch for it.
      await per.server().copiesAgree();
      await rosterStore(db).reconcileRange(range, [cls('a', 'A'), cls('b', 'B3')]);
      expect(await reconciled([cls('a', 'A'), cls('b', 'B2')])).to.deep.equal({
        written: 1,
        deleted: 0,
        bodyReads: 1,
      });
      // A memo is of its range: another range over the same documents is read whole.
      await per.server().copiesAgree();
      bodies.count = 0;
      expect(
        await roster.reconcileRange({ from: 'class:', to: 'class:c' }, [cls('a', 'A'), cls('b', 'B2')]),
      ).to.deep.equal({
        written: 0,
        deleted: 0,
      });
      expect(bodies.count).to.equal(1);
      expect(await names()).to.deep.equal({ 'class:a': 'A', 'class:b': 'B2' });
    });

    it('keepRangeMemos: the next start, or another instance, checks the kept ranges by their revisions; what is not a memo is not trusted', async () => {
      const range = { from: 'class:', to: 'class;' };
      const other = { from: 'session:', to: 'session;' };
      const wanted = [cls('a', 'A'), cls('b', 'B')];
      const first = rosterStore(db);
      await first.reconcileRange(range, wanted);
      await first.reconcileRange(other, []);
      await first.keepRangeMemos([range, other]);
      await per.server().copiesAgree();
      // A new store over the same database: a restart, or another instance.
      const again = countingBodyReads(db);
      expect(await rosterStore(again.db).reconcileRange(range, wanted)).to.deep.equal({
        written: 0,
        deleted: 0,
      });
      expect(again.count, 'a kept range checked by its revisions').to.equal(0);
      // A document changed since the memo was kept: read whole and mended.
      const b = await db.get('class:b');
      await db.put({ ...b, name: 'B by hand' });
      await per.server().copiesAgree();
      const afterChange = countingBodyReads(db);
      expect(await rosterStore(afterChange.db).reconcileRange(range, wanted)).to.deep.equal({
        written: 1,
        deleted: 0,
      });
      expect(afterChange.count).to.equal(1);
      // Kept memos are what the store tells: a memo document of another shape holds none.
      const kept = await db.get('_local/roster-range-memos');
      await db.put({ ...kept, ranges: { 'class:\u0000class;': { wanted: 1 } } });
      const garbled = countingBodyReads(db);
      expect(await rosterStore(garbled.db).reconcileRange(range, wanted)).to.deep.equal({
        written: 0,
        deleted: 0,
      });
      expect(garbled.count).to.equal(1);
      // The memo document is local: not among the roster's documents, not in its feed.
      expect((await db.allDocs()).rows.map((r) => r.id)).to.not.include('_local/roster-range-memos');
      expect((await db.changes()).results.map((r) => r.id)).to.not.include('_local/roster-range-memos');
    });

    it('replaceAsRead: writes over the revisions read, refuses when one was written meanwhile; reconcileSome takes a read', async () => {
      const roster = rosterStore(db);
      await roster.reconcile([cls('a', 'A'), cls('b', 'B')]);
      await per.server().copiesAgree();
      const read = await roster.stored(['class:a', 'class:b', 'class:new']);
      expect([...read.keys()].sort(), 'an absent id is left out').to.deep.equal(['class:a', 'class:b']);
      expect(read.get('class:a')?.doc).to.deep.include({ name: 'A' });
      // Equal: nothing written; changed, deleted and created over what was read.
      expect(
        await roster.replaceAsRead([
          { id: 'class:a', read: read.get('class:a'), doc: cls('a', 'A') },
          { id: 'class:b', read: read.get('class:b'), doc: undefined },
          { id: 'class:new', read: undefined, doc: cls('new', 'N') },
        ]),
      ).to.deep.equal({ written: 1, deleted: 1 });
      await per.server().copiesAgree();
      expect(await names()).to.deep.equal({ 'class:a': 'A', 'class:new': 'N' });
      // Another writer changes `a` and creates `late` after this writer read them.
      const again = await roster.stored(['class:a', 'class:late']);
      await roster.reconcileSome(['class:a', 'class:late'], [cls('a', 'A by another'), cls('late', 'L')]);
      expect(
        await roster.replaceAsRead([{ id: 'class:a', read: again.get('class:a'), doc: cls('a', 'A2') }]),
      ).to.equal('CONFLICT');
      expect(
        await roster.replaceAsRead([
          { id: 'class:late', read: again.get('class:late'), doc: cls('late', 'L2') },
        ]),
      ).to.equal('CONFLICT');
      await per.server().copiesAgree();
      expect(await names()).to.deep.equal({ 'class:a': 'A by another', 'class:late': 'L', 'class:new': 'N' });
      // reconcileSome over a stale read writes all the same: it reads again after the conflict.
      expect(await roster.reconcileSome(['class:a'], [cls('a', 'A3')], again)).to.deep.equal({
        written: 1,
        deleted: 0,
      });
      await per.server().copiesAgree();
      expect(await names()).to.deep.include({ 'class:a': 'A3' });
    });
  });
}
