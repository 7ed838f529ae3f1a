import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { NewEvent } from '../../src/domain/event.js';
import { EVENT_WRITES_AT_ONCE, EVENTS_PER_WRITE, eventStore, independent } from '../../src/store/events.js';
import type { Database } from '../../src/store/pouch.js';
import { databasePerTest, storeBackends } from '../support/storeBackends.js';
import { studentCreated } from '../support/studentEvents.js';

const AT = '2026-03-01T12:00:00.000Z';

const created = (i: number): NewEvent => studentCreated(i, AT);

/** A child's second event: the same subject as `created(i)`. */
const changed = (i: number): NewEvent => ({ ...created(i), eventId: randomUUID(), type: 'STUDENT_UPDATED' });

/**
 * `db` with its bulk writes watched: the ids each write carried, in the order the writes started, the
 * most under way at once, and whether each write started after every earlier one ended. `failing`
 * names the writes (counted from 1) that fail before reaching the store.
 */
const watched = (db: Database, failing: ReadonlySet<number> = new Set()) => {
  const writes: string[][] = [];
  let inFlight = 0;
  let most = 0;
  let overlapped = false;
  const bulkDocs = async (docs: Array<{ _id: string }>) => {
    writes.push(docs.map((d) => d._id));
    if (failing.has(writes.length)) throw new Error('the store went away');
    if (inFlight > 0) overlapped = true;
    inFlight += 1;
    most = Math.max(most, inFlight);
    try {
      return await db.bulkDocs(docs);
    } finally {
      inFlight -= 1;
    }
  };
  const proxy = new Proxy(db, {
    get: (target, prop, receiver) => (prop === 'bulkDocs' ? bulkDocs : Reflect.get(target, prop, receiver)),
  });
  return { db: proxy, writes, most: () => most, overlapped: () => overlapped };
};

describe('independent events', () => {
  it('are those of which no two share a subject or an aspect', () => {
    const withAspect = (e: NewEvent, aspect: string): NewEvent => ({ ...e, aspect });
    const table: ReadonlyArray<readonly [string, ReadonlyArray<NewEvent>, boolean]> = [
      ['none', [], true],
      ['one child each', [created(1), created(2), created(3)], true],
      ['two of one child', [created(1), created(2), changed(1)], false],
      ['one aspect, two subjects', [withAspect(created(1), 'a'), withAspect(created(2), 'a')], false],
      ['an aspect each', [withAspect(created(1), 'a'), withAspect(created(2), 'b')], true],
      ['same id, other subject type', [created(1), { ...created(1), subjectType: 'CLASS' }], true],
    ];
    for (const [what, events, expected] of table) expect(independent(events), what).to.equal(expected);
  });
});

for (const [name, setUp] of storeBackends('events')) {
  describe(`eventStore.appendMany on ${name}`, function () {
    this.timeout(60_000);
    const per = databasePerTest(setUp, 'events');
    let db: Database;
    beforeEach(() => {
      db = per.db();
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

    it('writes independent events several writes at once, each stored once', async () => {
      const events = Array.from({ length: EVENTS_PER_WRITE * (EVENT_WRITES_AT_ONCE + 2) }, (_, i) =>
        created(i),
      );
      const w = watched(db);
      const outcome = await eventStore(w.db).appendMany(events);
      expect(w.writes).to.have.length(EVENT_WRITES_AT_ONCE + 2);
      expect(w.most(), 'writes under way at once').to.equal(EVENT_WRITES_AT_ONCE);
      expect([...outcome.values()].every((o) => o === 'stored')).to.equal(true);
      const stored = await db.allDocs({ startkey: 'event:', endkey: 'event:\ufff0' });
      expect(stored.rows.map((r) => r.id).sort()).to.deep.equal(
        events.map((e) => `event:${e.eventId}`).sort(),
      );
    });

    it('writes the events of one child one write after the other, in the order given', async () => {
      // The second part holds the child's second event, the first its first.
      const first = Array.from({ length: EVENTS_PER_WRITE }, (_, i) => created(i));
      const events = [
        ...first,
        changed(7),
        ...Array.from({ length: EVENTS_PER_WRITE * 2 }, (_, i) => created(1000 + i)),
      ];
      const w = watched(db);
      await eventStore(w.db).appendMany(events);
      expect(w.overlapped(), 'a write started before the one before it ended').to.equal(false);
      expect(w.writes.flat()).to.deep.equal(events.map((e) => `event:${e.eventId}`));
    });

    it('after a failed write, answers the failure; the call again stores the rest, each event once', async () => {
      const events = Array.from({ length: EVENTS_PER_WRITE * (EVENT_WRITES_AT_ONCE + 2) }, (_, i) =>
        created(i),
      );
      const failing = watched(db, new Set([2]));
      let failure: unknown;
      await eventStore(failing.db)
        .appendMany(events)
        .catch((e: unknown) => {
          failure = e;
        });
      expect(String(failure)).to.include('the store went away');
      // No write starts after the failure: at most the ones under way with it.
      expect(failing.writes.length).to.be.at.most(EVENT_WRITES_AT_ONCE);
      const again = await eventStore(db).appendMany(events);
      const stored = [...again.values()].filter((o) => o === 'stored').length;
      const duplicates = [...again.values()].filter((o) => o === 'duplicate').length;
      expect(stored + duplicates).to.equal(events.length);
      expect(duplicates, 'the writes that went through before').to.be.at.least(EVENTS_PER_WRITE);
      const all = await db.allDocs({ startkey: 'event:', endkey: 'event:\ufff0' });
      expect(all.rows).to.have.length(events.length);
    });
  });
}
