/**
 * A commit brings an aspect's conflict records in line with its projection, whatever is stored: the
 * aspect and its records are written in one `_bulk_docs`, which is no transaction, so an attempt of
 * another pipeline whose aspect write lost may have put stale records over the right ones (the
 * two-instance row on a three-node cluster: 1,173 records naming an earlier winner, for good).
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { projectAspect } from '../../src/rules/projections.js';
import { projectionStore } from '../../src/store/projections.js';
import { attendanceMark } from '../support/attendanceMarks.js';
import { databasePerTest, storeBackends } from '../support/storeBackends.js';

const STUDENT = '6f1c2a8e-9d3b-4c5e-8f7a-1b2c3d4e5f60';
const ASPECT = `attendance:${STUDENT}:2026-11-29`;

const mark = (
  eventId: string,
  type: 'MARK_PRESENT' | 'MARK_ABSENT',
  role: 'ADMIN' | 'CHAMADOR',
  base: string | null,
  minute: number,
) => attendanceMark(STUDENT, eventId, type, role, base, minute);

for (const [name, host] of storeBackends('projection-conflicts')) {
  describe(`conflict records put right by the next commit of their aspect, on ${name}`, () => {
    const per = databasePerTest(host, 'projections');

    // A CHAMADOR's absent and an ADMIN's present, both on the first mark: the ADMIN's stands.
    const first = mark(randomUUID(), 'MARK_PRESENT', 'CHAMADOR', null, 0);
    const caller = mark(randomUUID(), 'MARK_ABSENT', 'CHAMADOR', first.eventId, 1);
    const admin = mark(randomUUID(), 'MARK_PRESENT', 'ADMIN', first.eventId, 2);
    const projection = projectAspect(ASPECT, 'attendance', [], [first, caller, admin]);
    const write = (aspects: boolean) => ({
      aspects: aspects ? [{ projection, rev: undefined }] : [],
      conflicts: projection.conflicts,
      noConflict: [first.eventId, admin.eventId],
    });
    const record = (eventId: string) =>
      per
        .db()
        .get(`conflict:${eventId}`)
        .catch(() => undefined);

    it('rewrites a record another writer overwrote with an earlier decision', async () => {
      const store = projectionStore(per.db());
      expect(projection.conflicts.map((c) => [c.loser.eventId, c.winner.eventId])).to.deep.equal([
        [caller.eventId, admin.eventId],
      ]);
      expect(await store.commit(write(true))).to.equal('OK');
      const right = await per.db().get(`conflict:${caller.eventId}`);
      const winner: unknown = Reflect.get(right, 'winner');
      const earlier = { ...(typeof winner === 'object' ? winner : {}), eventId: first.eventId };
      await per.db().put({ ...right, winner: earlier });
      expect(await store.commit(write(false))).to.equal('OK');
      const after = await per.db().get(`conflict:${caller.eventId}`);
      expect(Reflect.get(after, 'winner')).to.deep.equal(Reflect.get(right, 'winner'));
    });

    it('removes a record stored for an event that is no loser', async () => {
      const store = projectionStore(per.db());
      expect(await store.commit(write(true))).to.equal('OK');
      const right = await per.db().get(`conflict:${caller.eventId}`);
      const { _rev: _r, ...body } = right;
      await per.db().put({ ...body, _id: `conflict:${admin.eventId}` });
      expect(await store.commit(write(false))).to.equal('OK');
      expect(await record(admin.eventId)).to.equal(undefined);
      expect(await record(caller.eventId)).not.to.equal(undefined);
    });

    it('writes nothing when the stored records are already right', async () => {
      // Writes are counted at the store's door: a cluster's update_seq names the copies that answered,
      // so two reads of it differ with nothing written in between.
      let writes = 0;
      const counted = new Proxy(per.db(), {
        get(target, prop) {
          const value: unknown = Reflect.get(target, prop, target);
          if (typeof value !== 'function') return value;
          return (...args: unknown[]): unknown => {
            if (prop === 'bulkDocs' || prop === 'put' || prop === 'post') writes += 1;
            return Reflect.apply(value, target, args);
          };
        },
      });
      const store = projectionStore(counted);
      expect(await store.commit(write(true))).to.equal('OK');
      expect(writes).to.equal(1);
      expect(await store.commit(write(false))).to.equal('OK');
      expect(writes).to.equal(1);
    });
  });
}
