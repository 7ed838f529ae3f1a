import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { NewEvent } from '../../src/domain/event.js';
import { EVENTS_PER_WRITE, eventStore } from '../../src/store/events.js';
import { ensureEventsGuard } from '../../src/store/eventsDesign.js';
import type { Database } from '../../src/store/pouch.js';
import { databasePerTest, storeBackends } from '../support/storeBackends.js';

const AT = '2026-03-01T12:00:00.000Z';

const created = (i: number): NewEvent => ({
  eventId: randomUUID(),
  type: 'STUDENT_CREATED',
  subjectType: 'STUDENT',
  subjectId: `s-${i}`,
  payload: { displayName: `Criança ${i}` },
  actor: { userId: 'u-1', role: 'ADMIN' },
  deviceId: null,
  clientTimestamp: AT,
  serverTimestamp: AT,
});

for (const [name, setUp] of storeBackends('events')) {
  describe(`eventStore.appendMany on ${name}`, function () {
    this.timeout(60_000);
    const per = databasePerTest(setUp, 'events');
    let db: Database;
    beforeEach(async () => {
      db = per.db();
      // As the service opens it: on CouchDB the guard checks every document of every write.
      await ensureEventsGuard(db);
    });

    it('stores more events than one write takes, each once, and answers them in the order given', async () => {
      const events = Array.from({ length: EVENTS_PER_WRITE * 2 + 37 }, (_, i) => created(i));
      const outcome = await eventStore(db).appendMany(events);
      expect([...outcome.values()].every((o) => o === 'stored')).to.equal(true);
      expect([...outcome.keys()]).to.deep.equal(events.map((e) => e.eventId));
      // Each once in the feed the pipeline reads (a sharded CouchDB tells a write's documents in no
      // particular order, so only the set is compared).
      const feed = await db.changes({ since: 0 });
      expect(
        feed.results
          .map((c) => c.id)
          .filter((id) => id.startsWith('event:'))
          .sort(),
      ).to.deep.equal(events.map((e) => `event:${e.eventId}`).sort());
    });

    it('reports the events already stored as duplicates, in any write of the call', async () => {
      const events = Array.from({ length: EVENTS_PER_WRITE + 10 }, (_, i) => created(i));
      const store = eventStore(db);
      // One event in the first write and one in the second are there already.
      const first = events[3];
      const last = events[EVENTS_PER_WRITE + 5];
      if (first === undefined || last === undefined) throw new Error('too few events');
      await store.appendMany([first, last]);
      const outcome = await store.appendMany(events);
      expect(outcome.get(first.eventId)).to.equal('duplicate');
      expect(outcome.get(last.eventId)).to.equal('duplicate');
      expect([...outcome.values()].filter((o) => o === 'stored')).to.have.length(events.length - 2);
      expect((await db.allDocs({ startkey: 'event:', endkey: 'event:\ufff0' })).rows).to.have.length(
        events.length,
      );
    });
  });
}
