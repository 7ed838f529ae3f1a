/**
 * What the admission rule keeps in the store, on each backend: the volunteers of a session's room, and
 * the exceptions an offline check-in left on arrival, paged with the conflicts by detection time.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import fc from 'fast-check';
import { ensureIndexes, indexSpecs } from '../../src/store/indexes.js';
import { laterThan, projectionStore } from '../../src/store/projections.js';
import { withQuorumWrites } from '../../src/store/quorumWrites.js';
import { type NewVolunteer, volunteerStore } from '../../src/store/volunteers.js';
import { anAdmissionException } from '../support/fixtures.js';
import { readUntil } from '../support/readUntil.js';
import { databasePerTest, storeBackends } from '../support/storeBackends.js';

const volunteer = (sessionId: string, name: string, minute: number): NewVolunteer => ({
  volunteerId: randomUUID(),
  sessionId,
  userId: null,
  name,
  checkedInAt: `2026-11-29T09:${String(minute).padStart(2, '0')}:00.000Z`,
  checkedInBy: 'u-1',
  checkedOutAt: null,
  checkedOutBy: null,
});

describe("the conflict report's bound after an instant (laterThan)", () => {
  const cases: ReadonlyArray<[string, Record<string, string>]> = [
    // The server's own times: the next millisecond, a plain start key on every backend.
    ['2026-11-29T09:10:00.000Z', { $gte: '2026-11-29T09:10:00.001Z' }],
    ['2026-11-29T09:59:59.999Z', { $gte: '2026-11-29T10:00:00.000Z' }],
    // Any other form has no next millisecond of the same text: `$gt` as asked.
    ['2026-11-29T09:10:00Z', { $gt: '2026-11-29T09:10:00Z' }],
    ['2026-11-29T09:10:00.000+00:00', { $gt: '2026-11-29T09:10:00.000+00:00' }],
    ['', { $gt: '' }],
  ];
  for (const [at, bound] of cases)
    it(`after ${JSON.stringify(at)}: ${JSON.stringify(bound)}`, () => {
      expect(laterThan(at)).to.deep.equal(bound);
    });
});

for (const [name, host] of storeBackends('admission-records')) {
  describe(`the admission rule's records on ${name}`, () => {
    const per = databasePerTest(host, 'admission');

    it('lists a session’s volunteers in the order they came, and no other session’s', async () => {
      const store = volunteerStore(per.db());
      const sessionId = randomUUID();
      const later = await store.create(volunteer(sessionId, 'Rute', 30));
      const earlier = await store.create(volunteer(sessionId, 'Jorge', 5));
      await store.create(volunteer(randomUUID(), 'Outra sala', 10));
      const listed = await readUntil(
        () => store.ofSession(sessionId),
        (l) => l.length === 2,
      );
      expect(listed.map((v) => v.name)).to.deep.equal(['Jorge', 'Rute']);
      expect(listed.map((v) => v.volunteerId)).to.deep.equal([earlier.volunteerId, later.volunteerId]);
    });

    it('checks a volunteer out by compare-and-swap: a stale copy is told CONFLICT', async () => {
      // As the service opens its databases: on a cluster a write short of its quorum is judged again.
      const store = volunteerStore(withQuorumWrites(per.db()));
      const created = await store.create(volunteer(randomUUID(), 'Rute', 0));
      const { _id: _i, _rev: _r, docType: _d, ...fields } = created;
      const out = { ...fields, checkedOutAt: '2026-11-29T11:00:00.000Z', checkedOutBy: 'u-1' };
      const left = await store.update(created, out);
      expect(left).not.to.equal('CONFLICT');
      // Another volunteer's tablet, holding the created copy, checks her out too. Its change differs
      // (the same bytes on the same revision make the same revision, a replay rather than a stale write).
      const stale = { ...out, checkedOutAt: '2026-11-29T11:05:00.000Z', checkedOutBy: 'u-2' };
      expect(await store.update(created, stale)).to.equal('CONFLICT');
    });

    it('keeps one exception per event, paged with the conflicts by detection time', async () => {
      await ensureIndexes(per.db(), indexSpecs.projections);
      const store = projectionStore(per.db());
      const second = anAdmissionException('child-b', '2026-11-29T09:20:00.000Z', 2);
      const first = anAdmissionException('child-a', '2026-11-29T09:10:00.000Z', 1);
      await store.recordAdmissionExceptions([second, first]);
      // A resend after a lost answer writes the same exception again (built from the stored event):
      // still one record.
      await store.recordAdmissionExceptions([first]);
      await per.server().copiesAgree();
      const listed = await readUntil(
        () => store.conflicts({ limit: 10 }),
        (l) => l.length === 2,
      );
      expect(listed.map((c) => [c.subjectId, c.policy === 'ADMISSION_RULE' ? c.refusals : []])).to.deep.equal(
        [
          ['child-a', [{ reason: 'ROOM_FULL', checkedIn: 1, capacity: 1 }]],
          ['child-b', [{ reason: 'ROOM_FULL', checkedIn: 2, capacity: 1 }]],
        ],
      );
      expect(
        (await store.conflicts({ limit: 10, subjectId: 'child-b' })).map((c) => c.subjectId),
      ).to.deep.equal(['child-b']);
    });

    it('pages the records by any page size, each once and in order, however many share an instant', async () => {
      await ensureIndexes(per.db(), indexSpecs.projections);
      const store = projectionStore(per.db());
      // Three instants, most records on the first: the pipeline stamps a page's records with one time.
      const instants = ['2026-11-29T09:10:00.000Z', '2026-11-29T09:20:00.000Z', '2026-11-29T09:30:00.000Z'];
      const records = Array.from({ length: 23 }, (_, i) =>
        anAdmissionException(`child-${i}`, instants[i < 15 ? 0 : i < 20 ? 1 : 2] ?? '', 2),
      );
      await store.recordAdmissionExceptions(records);
      await per.server().copiesAgree();
      const everything = await readUntil(
        () => store.conflicts({ limit: 100 }),
        (l) => l.length === records.length,
      );
      // In order of detection, ties by id (ISO instants of one length sort as text).
      const keys = everything.map((c) => `${c.detectedAt} ${c._id}`);
      expect(keys).to.deep.equal([...keys].sort());
      const order = everything.map((c) => c._id);
      await fc.assert(
        fc.asyncProperty(fc.integer({ min: 1, max: 24 }), async (limit) => {
          const seen: string[] = [];
          let after: readonly [string, string] | undefined;
          for (let page = 0; page <= records.length; page += 1) {
            const found = await store.conflicts({ limit, ...(after === undefined ? {} : { after }) });
            const items = found.slice(0, limit);
            seen.push(...items.map((c) => c._id));
            const last = items.at(-1);
            if (found.length <= limit || last === undefined) break;
            after = [last.detectedAt, last._id];
          }
          expect(seen).to.deep.equal(order);
        }),
        { numRuns: 12 },
      );
    });

    it('keeps a page full when a record of its instant is removed between reading its id and its document', async () => {
      await ensureIndexes(per.db(), indexSpecs.projections);
      const db = per.db();
      const at = '2026-11-29T09:10:00.000Z';
      const records = Array.from({ length: 8 }, (_, i) => anAdmissionException(`child-${i}`, at, 2));
      await projectionStore(db).recordAdmissionExceptions(records);
      await per.server().copiesAgree();
      const order = (
        await readUntil(
          () => projectionStore(db).conflicts({ limit: 100 }),
          (l) => l.length === records.length,
        )
      ).map((c) => c._id);
      // Retention removes the first record after the cursor once the page has read its id.
      const removed = order[3] ?? '';
      let removing = true;
      const racing = new Proxy(db, {
        get(target, key, receiver) {
          if (key !== 'find') return Reflect.get(target, key, receiver);
          return async (request: PouchDB.Find.FindRequest<object>) => {
            const found = await target.find(request);
            if (removing && found.docs.some((d) => d._id === removed)) {
              removing = false;
              await target.remove(await target.get(removed));
            }
            return found;
          };
        },
      });
      const page = await projectionStore(racing).conflicts({ limit: 2, after: [at, order[2] ?? ''] });
      expect(removing, 'the record was removed during the page').to.equal(false);
      // Two records and the one that says the report goes on, none of them the removed one.
      expect(page.map((c) => c._id)).to.deep.equal([order[4], order[5], order[6]]);
    });
  });
}
