/**
 * One event stored through two nodes at once while the third node is down (decision 0023): the two
 * writes split the live copies between them, neither reaches the quorum, and each writer looks at the
 * leaves to decide whether to withdraw its copy. Whatever they decide, an event either writer answered
 * "stored" or "duplicate" must be stored in the end: the two-instance row lost 62 such events once
 * (reliability.md). Only on a cluster of three whose nodes this run controls.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { NewEvent } from '../../src/domain/event.js';
import { eventStore } from '../../src/store/events.js';
import { figure } from '../reliability/figures.js';
import { realCouchNodes } from '../support/couchServer.js';
import { pipelineReading } from '../support/pipelineReading.js';
import { liveLeaves, splitCluster } from './splitCluster.js';

const controlled = realCouchNodes() >= 3 && process.env.COUCHDB_TEST_NO_FAULTS === undefined;

const ROUNDS = 30;
/** Events per write: a tablet's batch, as the sync endpoint stores it. */
const BATCH = 25;

const markAt = (eventId: string, serverTimestamp: string): NewEvent => ({
  eventId,
  type: 'MARK_PRESENT',
  subjectType: 'STUDENT',
  subjectId: 'student-split',
  aspect: `attendance:student-split:${eventId}`,
  baseVersion: null,
  payload: { actionType: 'MARK_PRESENT' },
  actor: { userId: 'tablet-user', role: 'CHAMADOR' },
  deviceId: 'tablet-split',
  clientTimestamp: '2026-11-27T09:00:00.000Z',
  serverTimestamp,
});

if (controlled)
  describe('an event stored through two nodes at once while the third is down, on real CouchDB', function () {
    this.timeout(600_000);
    const cluster = splitCluster('split_');

    it('is stored in the end whenever either writer acknowledged it', async () => {
      const { a, b, split, heal } = await cluster();
      await split();
      const acknowledged: string[] = [];
      let neither = 0;
      const answered = { stored: 0, duplicate: 0, refused: 0 };
      const said = new Map<string, string>();
      const refusedByBoth: string[] = [];
      for (let round = 0; round < ROUNDS; round += 1) {
        const ids = Array.from({ length: BATCH }, () => randomUUID());
        // The same events through each node, each with its own server time, as two instances store them.
        const answers = await Promise.allSettled([
          eventStore(a.db.events).appendMany(ids.map((id) => markAt(id, new Date().toISOString()))),
          eventStore(b.db.events).appendMany(
            ids.map((id) => markAt(id, new Date(Date.now() + 1).toISOString())),
          ),
        ]);
        for (const [w, r] of answers.entries())
          if (r.status === 'rejected') answered.refused += 1;
          else
            for (const [id, v] of r.value) {
              answered[v] += 1;
              said.set(id, `${said.get(id) ?? ''}${w === 0 ? 'A' : 'B'}:${v} `);
            }
        if (answers.some((r) => r.status === 'fulfilled'))
          acknowledged.push(...ids.map((id) => `event:${id}`));
        else {
          neither += 1;
          refusedByBoth.push(...ids);
        }
      }
      await heal();
      const lost: string[] = [];
      let forked = 0;
      for (const id of acknowledged) {
        const live = (await liveLeaves(a.db.events, id)).length;
        if (live === 0) lost.push(id);
        if (live > 1) forked += 1;
      }
      const leavesOf = async (id: string) => {
        const leaves: unknown = await a.db.events.get(id, { open_revs: 'all' });
        return Array.isArray(leaves)
          ? leaves
              .map((l: unknown) => {
                const doc: unknown = Reflect.get(Object(l), 'ok');
                return doc === undefined
                  ? JSON.stringify(l)
                  : `${String(Reflect.get(Object(doc), '_rev'))}${Reflect.get(Object(doc), '_deleted') === true ? ' deleted' : ''}`;
              })
              .join(', ')
          : JSON.stringify(leaves);
      };
      const detail = await Promise.all(
        lost
          .slice(0, 3)
          .map(async (id) => `${said.get(id.slice('event:'.length)) ?? '?'}[${await leavesOf(id)}]`),
      );
      const storedByBoth = [...said.values()].filter((s) => s.split('stored').length - 1 > 1).length;
      figure(
        'event split',
        `${ROUNDS} rounds × ${BATCH} events through nodes 1 and 2 with node 3 down: answers ${JSON.stringify(answered)}, ` +
          `${neither} rounds refused by both; ${lost.length} of ${acknowledged.length} acknowledged events with no live copy${detail.length === 0 ? '' : `: ${detail.join(' | ')}`}, ${forked} with more than one (for the pipeline to settle), ${storedByBoth} answered "stored" by both`,
      );
      // A round where both writers heard 503 stores nothing anyone relies on; the client sends again.
      expect(acknowledged.length / BATCH + neither).to.equal(ROUNDS);
      expect(
        lost,
        `${lost.length} of ${acknowledged.length} acknowledged events have no live copy`,
      ).to.deep.equal([]);
      // A writer told "duplicate" relies on another having stored the event: never both. Both told
      // "stored" is rare and harmless (counted in the figure; once in 750 in a run, reliability.md).
      const neverStored = [...said.entries()].filter(([, s]) => !s.includes('stored'));
      expect(
        neverStored.slice(0, 5).map(([id, s]) => `${id}: ${s}`),
        `${neverStored.length} events answered "duplicate" by both writers`,
      ).to.deep.equal([]);
      // The client sends a refused batch again: stored over the withdrawn copies, two generations on.
      const resent = refusedByBoth.slice(0, BATCH);
      if (resent.length > 0)
        await eventStore(a.db.events).appendMany(resent.map((id) => markAt(id, new Date().toISOString())));
      // No guard in CouchDB (decision 0063): the pipeline reports an event at a revision the service's
      // writes do not leave. Withdrawals, and events stored again over them, are not such revisions.
      const readings: Array<[string, string]> = [];
      for (const id of [...acknowledged, ...resent.map((r) => `event:${r}`)])
        readings.push([id, await pipelineReading(a.db.events, id)]);
      expect(
        readings.filter(([, r]) => r !== 'aspect'),
        `of ${readings.length} events stored (${resent.length} sent again after both writers were refused)`,
      ).to.deep.equal([]);
    });
  });
