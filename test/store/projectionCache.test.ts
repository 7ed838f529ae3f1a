/**
 * The projection store's aspect cache is bounded by the events its aspects hold, not by how many
 * aspects it holds: an aspect holds one event or hundreds (the soak row of the reliability battery).
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { projectAspect } from '../../src/rules/projections.js';
import { docCache } from '../../src/store/docCache.js';
import { fromStoredEvent, type LoadedAspect, projectionStore } from '../../src/store/projections.js';
import { embeddedStorePerTest } from '../support/storeBackends.js';

const STUDENT = '6f1c2a8e-9d3b-4c5e-8f7a-1b2c3d4e5f60';

/** A child's marks of one day, each based on the one before, as a tablet makes them. */
const marks = (day: string, n: number) => {
  let base: string | null = null;
  return Array.from({ length: n }, (_, i) => {
    const eventId = randomUUID();
    const record = fromStoredEvent({
      eventId,
      type: 'MARK_PRESENT',
      baseVersion: base,
      subjectId: STUDENT,
      userId: 'user-1',
      role: 'CHAMADOR',
      deviceId: null,
      clientTimestamp: `${day}T08:${String(i).padStart(2, '0')}:00.000Z`,
      serverTimestamp: `${day}T09:${String(i).padStart(2, '0')}:00.000Z`,
      payload: { actionType: 'MARK_PRESENT' },
    });
    if (record === undefined) throw new Error('undecodable mark');
    base = eventId;
    return record;
  });
};

describe('the projection store’s aspect cache', () => {
  const current = embeddedStorePerTest('projection-cache');

  it('holds at most its budget of events, the aspects written last, and reads the others from the store', async () => {
    const entries = docCache<LoadedAspect>();
    const cached = projectionStore(current().db.projections, entries, 10);
    const days = ['2026-11-01', '2026-11-02', '2026-11-03', '2026-11-04'];
    const aspectOf = (day: string) => `attendance:${STUDENT}:${day}`;
    for (const day of days) {
      const projection = projectAspect(aspectOf(day), 'attendance', [], marks(day, 4));
      const write = {
        aspects: [{ projection, rev: undefined }],
        conflicts: [],
        noConflict: [],
      };
      expect(await cached.commit(write)).to.equal('OK');
    }
    // Four aspects of four events each: the last two fit a budget of ten.
    expect(days.map((d) => entries.has(aspectOf(d)))).to.deep.equal([false, false, true, true]);
    // An aspect heavier than the whole budget is read but not kept, and keeps what is held.
    const heavy = projectAspect(aspectOf('2026-11-05'), 'attendance', [], marks('2026-11-05', 11));
    await cached.commit({
      aspects: [{ projection: heavy, rev: undefined }],
      conflicts: [],
      noConflict: [],
    });
    expect(entries.has(aspectOf('2026-11-05'))).to.equal(false);
    expect(entries.has(aspectOf(days[3] ?? ''))).to.equal(true);
    // Whatever it holds or not, it answers as the store does.
    const all = [...days, '2026-11-05'].map(aspectOf);
    const fromCache = await cached.loadAspects(all);
    const fromStore = await projectionStore(current().db.projections).loadAspects(all);
    expect(all.map((a) => fromCache.get(a))).to.deep.equal(all.map((a) => fromStore.get(a)));
    expect(all.map((a) => fromCache.get(a)?.events.length)).to.deep.equal([4, 4, 4, 4, 11]);
  });
});
