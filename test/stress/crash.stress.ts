/**
 * Crash battery (generalising test/sync/crash.test.ts and replicationCrash.test.ts): the real process
 * (`src/main.ts`) is killed with SIGKILL
 * - in each of ten rounds of a 1,000-event sync (ten batches of 100 marks and check-ins from an ADMIN
 *   and a CHAMADOR tablet in turn, one session per round), a few milliseconds after a random batch
 *   went out; the client resends what it had no answer to;
 * - in each of ten rounds of tablet replication: a new tablet pulls the roster and pushes 100 offline
 *   marks at once, in batches of 10, and the kill comes after a random number of documents moved;
 *   both replications then resume from their checkpoints.
 *
 * Criteria: no acknowledged event is lost (checked right after every restart through the replication
 * endpoint's `_revs_diff`, and at the end in the store), none is stored or projected twice, and the
 * projections the crashed service left (caught up from its checkpoint) equal a rebuild from scratch.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { figure } from '../reliability/figures.js';
import { call, decodeAs, type HttpResult } from '../support/http.js';
import { createdId, SyncAnswer, seedSmallRoster } from '../support/seed.js';
import { servedRoster } from '../support/servedRoster.js';
import { makeTablet, type Tablet } from '../support/tablet.js';
import { authHeaders, DEV_TOKENS } from '../support/testService.js';
import {
  type ChildService,
  checkinRecordsOutOfLine,
  childService,
  eventsInAspects,
  eventually,
  idsWithPrefix,
  missingEvents,
  openEmbedded,
  post,
  projectedCheckins,
  repeats,
  resumedAndRebuilt,
  servedLikeATablet,
  sleep,
} from './support.js';

const ROUNDS = 10;
const EVENTS_PER_ROUND = 1000;
const BATCH = 100;

const random = (min: number, max: number) => min + Math.floor(Math.random() * (max - min + 1));

describe('crash: SIGKILL during a 1,000-event sync, ten rounds', function () {
  this.timeout(300_000);
  let svc: ChildService | undefined;
  after(() => svc?.dispose());

  it('loses no acknowledged event, stores and projects none twice, and projects the same as a rebuild', async () => {
    svc = await childService({ label: 'crash-sync', env: { AUTH_MODE: 'dev', ...DEV_TOKENS } });
    const service = svc;
    let url = await service.start();
    const { classId, studentIds } = await seedSmallRoster(
      url,
      Array.from({ length: 40 }, (_, i) => `Criança ${i}`),
    );
    // One session per round (a service day each): an aspect holds every event it ever had, so
    // spreading the rounds keeps each round's work the same.
    const sessions: string[] = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      const date = `2026-11-${String(10 + round).padStart(2, '0')}`;
      sessions.push(await createdId(url, '/api/v1/sessions', { classId, date }, 'sessionId'));
    }

    // Marks and check-ins over 40 children, from an ADMIN and a CHAMADOR tablet in turn, all based on
    // nothing: most are conflicts the rule must decide, and the check-ins are written through as records.
    const sent: string[] = [];
    const eventAt = (round: number, n: number) => {
      const studentId = studentIds[n % studentIds.length] ?? '';
      const sessionId = sessions[round] ?? '';
      const clientTimestamp = new Date(Date.UTC(2026, 10, 10 + round, 9, 0, 0, n * 97)).toISOString();
      const eventId = randomUUID();
      sent.push(eventId);
      if (n % 10 === 0) {
        const checkInId = randomUUID();
        return { eventId, type: 'CHECK_IN', studentId, sessionId, checkInId, clientTimestamp };
      }
      return {
        eventId,
        type: n % 3 === 0 ? 'MARK_ABSENT' : 'MARK_PRESENT',
        studentId,
        sessionId,
        clientTimestamp,
      };
    };

    const acknowledged = new Set<string>();
    let lost = 0;
    const accept = (r: HttpResult | undefined, batch: ReadonlyArray<unknown>): boolean => {
      if (r === undefined || r.status !== 200) return false;
      const answer = decodeAs(SyncAnswer, r.json);
      expect(answer.failed).to.deep.equal([]);
      expect(answer.synced).to.have.length(batch.length);
      for (const s of answer.synced) acknowledged.add(s.eventId);
      return true;
    };
    const sync = (batch: ReadonlyArray<unknown>, token: string) =>
      post(`${url}/api/v1/sync/events`, { events: batch }, token);
    // Between kills the client is a tablet's outbox: a 503 (the request's deadline on a busy machine)
    // is sent again after its Retry-After, and counted.
    const resent = { count: 0 };

    const restarts: string[] = [];
    for (let round = 0; round < ROUNDS; round += 1) {
      const batches = Array.from({ length: EVENTS_PER_ROUND / BATCH }, (_, b) =>
        Array.from({ length: BATCH }, (_, i) => eventAt(round, b * BATCH + i)),
      );
      const killAt = random(0, batches.length - 1);
      let killed = false;
      for (let b = 0; b < batches.length; ) {
        const batch = batches[b] ?? [];
        const token = b % 2 === 0 ? DEV_TOKENS.DEV_ADMIN_TOKEN : DEV_TOKENS.DEV_CALLER_TOKEN;
        if (b === killAt && !killed) {
          // The batch goes out and the process dies under it a few milliseconds later.
          killed = true;
          const inFlight = sync(batch, token).then((r) => accept(r, batch));
          await sleep(random(5, 80));
          await service.kill();
          const answered = await inFlight;
          url = await service.start();
          // Everything acknowledged so far, the in-flight batch included if it was answered, is held.
          const missing = await missingEvents(url, [...acknowledged]);
          lost += missing.length;
          restarts.push(`round ${round} batch ${b}${answered ? ' (answered)' : ''}`);
          // The client cannot trust what it did not get an answer to: it sends the batch again.
          continue;
        }
        const r = await servedLikeATablet(() => sync(batch, token), resent);
        expect(
          accept(r, batch),
          `round ${round} batch ${b}: ${r === undefined ? 'no answer' : `${r.status} ${r.text.slice(0, 300)}`}`,
        ).to.equal(true);
        b += 1;
      }
    }
    expect(acknowledged.size).to.equal(sent.length);
    await service.stop();

    const store = await openEmbedded(service.dataDir);
    try {
      const stored = (await idsWithPrefix(store.db.events, 'event:')).map((id) => id.slice('event:'.length));
      const ours = new Set(sent);
      const storedOurs = stored.filter((id) => ours.has(id));
      const held = new Set(storedOurs);
      const missingAtEnd = sent.filter((id) => !held.has(id));
      const { resumed, rebuilt } = await resumedAndRebuilt(store);
      const standing = projectedCheckins(resumed);
      const outOfLine = await checkinRecordsOutOfLine(store, standing);
      const projected = eventsInAspects(resumed).filter((id) => ours.has(id));
      const duplicates = repeats(storedOurs) + repeats(projected);
      figure(
        'crash (sync)',
        `${ROUNDS} rounds of ${EVENTS_PER_ROUND} events, ${restarts.length} SIGKILLs (${
          restarts.filter((r) => r.endsWith('(answered)')).length
        } of the batches in flight answered before it); ${resent.count} batches answered 503 and sent again; ${acknowledged.size} acknowledged, ` +
          `${lost + missingAtEnd.length} lost, ${duplicates} duplicates, ${outOfLine.length} of ${standing.size} check-in records out of line with the projection; ` +
          `projections ${JSON.stringify(resumed) === JSON.stringify(rebuilt) ? 'equal' : 'differ from'} a rebuild ` +
          `(${resumed.length} documents)`,
      );
      expect(lost, 'acknowledged events missing right after a restart').to.equal(0);
      expect(missingAtEnd, 'acknowledged events missing at the end').to.deep.equal([]);
      expect(duplicates, 'events stored or projected twice').to.equal(0);
      expect(projected, 'every event projected once').to.have.length(sent.length);
      expect(outOfLine, 'check-in records not written through').to.deep.equal([]);
      expect(resumed).to.deep.equal(rebuilt);
    } finally {
      await store.close();
    }
  });
});

describe('crash: SIGKILL during tablet replication, ten rounds', function () {
  this.timeout(300_000);
  let svc: ChildService | undefined;
  const tablets: Tablet[] = [];
  after(async () => {
    await svc?.dispose();
    await Promise.all(tablets.map((tb) => tb.close()));
  });

  it('pulls resume and end equal to the roster; pushes lose nothing and store each event once', async () => {
    svc = await childService({ label: 'crash-repl', env: { AUTH_MODE: 'dev', ...DEV_TOKENS } });
    const service = svc;
    let url = await service.start();
    const today = new Date().toISOString().slice(0, 10);
    const { sessionId, studentIds } = await seedSmallRoster(
      url,
      Array.from({ length: 150 }, (_, i) => `Criança ${i}`),
      today,
    );
    const docCount = async () => {
      const r = await call(`${url}/api/v1/replication/roster/`, {
        headers: authHeaders(DEV_TOKENS.DEV_CALLER_TOKEN),
      });
      return typeof r.json === 'object' && r.json !== null && 'doc_count' in r.json
        ? Number(r.json.doc_count)
        : 0;
    };
    await eventually('the roster fills', async () => (await docCount()) >= 150, 30_000, 100);

    const pushed: string[] = [];
    let acknowledgedBeforeKill = 0;
    let lost = 0;
    let pullsCut = 0;
    let pushesCut = 0;
    let pullReads = 0;
    let pullHeld = 0;
    const sameRoster = async (tablet: Tablet) => {
      const wanted = JSON.stringify([...(await servedRoster(url))].sort());
      const local = await tablet.local.allDocs();
      return JSON.stringify([...new Map(local.rows.map((r) => [r.id, r.value.rev]))].sort()) === wanted;
    };
    for (let round = 0; round < ROUNDS; round += 1) {
      // A new tablet comes online with 100 offline marks: it pulls the roster and pushes its outbox at
      // once, in small batches, and the server is killed when a random number of documents has moved.
      const tablet = makeTablet(url, DEV_TOKENS.DEV_CALLER_TOKEN);
      tablets.push(tablet);
      const events = Array.from({ length: 100 }, (_, i) => {
        const eventId = randomUUID();
        return {
          _id: `event:${eventId}`,
          eventId,
          type: i % 4 === 0 ? 'MARK_ABSENT' : 'MARK_PRESENT',
          studentId: studentIds[(round * 7 + i) % studentIds.length] ?? '',
          sessionId,
          clientTimestamp: new Date(Date.now() - i * 1000).toISOString(),
        };
      });
      pushed.push(...events.map((e) => e.eventId));
      await tablet.outbox.bulkDocs(events);

      const killAt = random(30, 110);
      let killing: Promise<void> | undefined;
      let pulledBeforeKill = 0;
      const acknowledged = new Set<string>();
      const moved = { pull: 0, push: 0 };
      const maybeKill = () => {
        if (killing === undefined && moved.pull + moved.push >= killAt) {
          pulledBeforeKill = moved.pull;
          killing = service.kill();
        }
      };
      const pulling = tablet.local.replicate.from(tablet.remote('roster', url), { batch_size: 10 });
      pulling.on('change', (info) => {
        moved.pull = info.docs_written;
        maybeKill();
      });
      const pushing = tablet.outbox.replicate.to(tablet.remote('events', url), { batch_size: 10 });
      pushing.on('change', (info) => {
        // Acknowledged by the server's _bulk_docs answer.
        for (const d of info.docs) acknowledged.add(d._id.slice('event:'.length));
        moved.push = info.docs_written;
        maybeKill();
      });
      const cut = (e: unknown) => e !== undefined;
      const [pullCut, pushCut] = await Promise.all([
        pulling.then(() => false, cut),
        pushing.then(() => false, cut),
      ]);
      expect(killing, `round ${round}: the kill came before both replications ended`).not.to.equal(undefined);
      await killing;
      if (pullCut) pullsCut += 1;
      if (pushCut) pushesCut += 1;
      url = await service.start();

      // Nothing the server acknowledged before the kill is missing after the restart.
      acknowledgedBeforeKill += acknowledged.size;
      lost += (await missingEvents(url, [...acknowledged])).length;

      // Both resume from their checkpoints.
      const [resumed, pushedAgain] = await Promise.all([
        tablet.local.replicate.from(tablet.remote('roster', url), { batch_size: 10 }),
        tablet.outbox.replicate.to(tablet.remote('events', url), { batch_size: 10 }),
      ]);
      expect(resumed.ok).to.equal(true);
      expect(pushedAgain.ok).to.equal(true);
      expect(pushedAgain.doc_write_failures).to.equal(0);
      const held = (await tablet.local.allDocs()).rows.length;
      if (pullCut && pulledBeforeKill > 0) {
        // Resumed, not restarted: it did not read again everything it holds.
        expect(resumed.docs_read, `round ${round}: the resumed pull read everything again`).to.be.lessThan(
          held,
        );
        pullReads += resumed.docs_read;
        pullHeld += held;
      }
      expect(
        await missingEvents(
          url,
          events.map((e) => e.eventId),
        ),
        `round ${round}: pushed events held`,
      ).to.deep.equal([]);
      // The roster moves while the pushed marks are projected: the tablet ends equal to it once an
      // incremental pull has caught up.
      await eventually(
        `round ${round}: the tablet's roster equals the server's`,
        async () => {
          if (await sameRoster(tablet)) return true;
          await tablet.local.replicate.from(tablet.remote('roster', url), { batch_size: 100 });
          return sameRoster(tablet);
        },
        20_000,
        250,
      );
    }
    await service.stop();

    const store = await openEmbedded(service.dataDir);
    try {
      const ours = new Set(pushed);
      const stored = (await idsWithPrefix(store.db.events, 'event:'))
        .map((id) => id.slice('event:'.length))
        .filter((id) => ours.has(id));
      const { resumed, rebuilt } = await resumedAndRebuilt(store);
      const projected = eventsInAspects(resumed).filter((id) => ours.has(id));
      const duplicates = repeats(stored) + repeats(projected);
      figure(
        'crash (replication)',
        `${ROUNDS} rounds (a tablet pulling and pushing at once), ${ROUNDS} SIGKILLs cutting ${pullsCut} pulls and ` +
          `${pushesCut} pushes; resumed pulls read ${pullReads} of ${pullHeld} documents held; ${pushed.length} events pushed, ${acknowledgedBeforeKill} acknowledged before a kill, ` +
          `${lost + (pushed.length - stored.length)} lost, ${duplicates} duplicates; projections ` +
          `${JSON.stringify(resumed) === JSON.stringify(rebuilt) ? 'equal' : 'differ from'} a rebuild`,
      );
      expect(lost, 'events acknowledged before a kill missing after the restart').to.equal(0);
      expect(stored, 'every pushed event stored').to.have.length(pushed.length);
      expect(duplicates).to.equal(0);
      expect(projected, 'every pushed event projected once').to.have.length(pushed.length);
      expect(resumed).to.deep.equal(rebuilt);
    } finally {
      await store.close();
    }
  });
});
