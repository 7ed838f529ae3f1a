/**
 * Crash safety of offline sync: the real process is killed (SIGKILL) while a 1,000-event sync is in
 * flight, twice, and restarted on the same data. Every event acknowledged before a kill must be stored
 * exactly once, the client's resend after the restart must store the rest once, and the projections
 * (resumed from the pipeline's checkpoint) must equal a rebuild from scratch.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import * as t from 'io-ts';
import { projectionStore } from '../../src/store/projections.js';
import { openStore } from '../../src/store/store.js';
import { startEventPipeline } from '../../src/sync/pipelineRuntime.js';
import { call, decodeAs } from '../support/http.js';
import { type ServiceProcess, serviceProcess } from '../support/mainProcess.js';
import { seedSmallRoster } from '../support/seed.js';
import { snapshot } from '../support/snapshot.js';
import { DEV_TOKENS, mutationHeaders } from '../support/testService.js';

const SyncAnswer = t.type({
  synced: t.array(t.type({ eventId: t.string, status: t.string, duplicate: t.boolean })),
  failed: t.array(t.unknown),
});

const BATCH = 50;
const KILL_AFTER_BATCHES = [6, 13];

describe('crash during a 1,000-event sync (SIGKILL)', function () {
  this.timeout(180_000);
  let svc: ServiceProcess;

  beforeEach(async () => {
    svc = await serviceProcess('crash', { AUTH_MODE: 'dev', ...DEV_TOKENS });
  });
  afterEach(() => svc.dispose());

  it('loses no acknowledged event, stores none twice, and projects the same as a rebuild', async () => {
    let url = await svc.start();
    const post = (path: string, body: unknown, token: string = DEV_TOKENS.DEV_ADMIN_TOKEN) =>
      call(`${url}${path}`, { method: 'POST', headers: mutationHeaders(token), body: JSON.stringify(body) });
    const { sessionId, studentIds: students } = await seedSmallRoster(
      url,
      Array.from({ length: 40 }, (_, i) => `Criança ${i}`),
    );

    // 1,000 marks over 40 children: 25 concurrent marks per child (all based on nothing), from an ADMIN
    // tablet and a CHAMADOR tablet, so most of them are conflicts the rule must decide.
    const events = Array.from({ length: 1000 }, (_, i) => ({
      eventId: randomUUID(),
      type: i % 3 === 0 ? 'MARK_ABSENT' : 'MARK_PRESENT',
      studentId: students[i % students.length] ?? '',
      sessionId,
      clientTimestamp: new Date(Date.UTC(2026, 10, 26, 9, 0, 0, i * 997)).toISOString(),
    }));
    const batches = Array.from({ length: events.length / BATCH }, (_, b) =>
      events.slice(b * BATCH, (b + 1) * BATCH),
    );
    const tokenOf = (b: number) => (b % 2 === 0 ? DEV_TOKENS.DEV_ADMIN_TOKEN : DEV_TOKENS.DEV_CALLER_TOKEN);

    const acknowledged = new Set<string>();
    const send = async (b: number): Promise<boolean> => {
      const r = await post('/api/v1/sync/events', { events: batches[b] }, tokenOf(b)).catch(() => undefined);
      if (r === undefined || r.status !== 200) return false;
      const answer = decodeAs(SyncAnswer, r.json);
      expect(answer.failed).to.deep.equal([]);
      for (const s of answer.synced) acknowledged.add(s.eventId);
      return true;
    };

    const killedAt: number[] = [];
    let b = 0;
    while (b < batches.length) {
      if (KILL_AFTER_BATCHES.includes(b) && !killedAt.includes(b)) {
        // The batch goes out, and the process dies under it a few milliseconds later.
        killedAt.push(b);
        const inFlight = send(b);
        await new Promise((r) => setTimeout(r, 5 + Math.floor(Math.random() * 30)));
        await svc.kill();
        const answered = await inFlight;
        const before = acknowledged.size;
        url = await svc.start();
        console.log(
          `      killed during batch ${b}: ${before} events acknowledged so far (in-flight batch answered: ${answered})`,
        );
        // The client did not get (or cannot trust) an answer: it sends the batch again.
        continue;
      }
      expect(await send(b), `batch ${b}`).to.equal(true);
      b += 1;
    }
    expect(acknowledged.size).to.equal(1000);

    await svc.stop();

    const store = await openStore({ kind: 'embedded', dataDir: svc.dataDir, prefix: 'chamada_' });
    try {
      const stored = await store.db.events.allDocs({ include_docs: true });
      const eventDocs = stored.rows.filter((r) => r.id.startsWith('event:'));
      const syncedIds = eventDocs.flatMap((r) => {
        const doc: unknown = r.doc;
        return typeof doc === 'object' &&
          doc !== null &&
          'type' in doc &&
          String(doc.type).startsWith('MARK_')
          ? [r.id.slice('event:'.length)]
          : [];
      });
      // Exactly the 1,000: none missing, none twice, nothing extra.
      expect(syncedIds.length).to.equal(1000);
      expect(new Set(syncedIds)).to.deep.equal(new Set(events.map((e) => e.eventId)));

      // The projections as the restarted service left them, caught up from its checkpoint...
      const projections = projectionStore(store.db.projections);
      const resumed = await startEventPipeline({
        events: store.db.events,
        projections,
        audit: async () => undefined,
      });
      await resumed.catchUp();
      await resumed.stop();
      const afterCrash = await snapshot(store.db.projections);
      const inAspects = afterCrash.flatMap((d) =>
        typeof d === 'object' && d !== null && 'events' in d && Array.isArray(d.events) ? d.events : [],
      );
      expect(inAspects).to.have.length(1000);
      // ...equal a rebuild from scratch.
      await projections.reset();
      const rebuilt = await startEventPipeline({
        events: store.db.events,
        projections,
        audit: async () => undefined,
      });
      await rebuilt.catchUp();
      await rebuilt.stop();
      expect(await snapshot(store.db.projections)).to.deep.equal(afterCrash);
      console.log(
        `      after ${killedAt.length} kills: 1000 events stored once; projections equal a rebuild`,
      );
    } finally {
      await store.close();
    }
  });
});
