/**
 * Every request is answered within REQUEST_DEADLINE_MS, whatever the store does (decision 0046), and a
 * mutation answered 503 at its deadline takes effect once: the client's retry under the same
 * Idempotency-Key is answered what the first attempt went on to do, or runs it then.
 *
 * The store stalls two ways: the embedded store's LevelDB holding every call (nothing can cut those),
 * and a CouchDB-protocol server behind a proxy that freezes as a node under SIGSTOP does (express-pouchdb
 * under `npm test`, the real CouchDB under `npm run test:couchdb`). The deadline is a contract, so the
 * time each request took is asserted against it, with slack for the client's side of a busy machine.
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import * as t from 'io-ts';
import { type CouchServer, couchServerLabel, startCouchServer } from '../support/couchServer.js';
import { harnessOf, TOKENS, useService } from '../support/harness.js';
import { call, decodeAs, expectEnvelope, type HttpResult } from '../support/http.js';
import { seedSmallRoster } from '../support/seed.js';
import { freezingProxy, type Stall, stallingLevelDown } from '../support/stallingStore.js';
import { authHeaders, mutationHeaders, startTestService, type TestService } from '../support/testService.js';

const DEADLINE_MS = 1_500;
// Counted by the service from the request's arrival; the client adds its connection and the
// scheduling of a machine the suite shares.
const SLACK_MS = 2_000;
// Short, so that a claim left by an attempt that died with its request ends within the test.
const LEASE_MS = 3_000;

const CheckIn = t.type({ checkInId: t.string, studentId: t.string, code: t.string, status: t.string });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Timed {
  readonly label: string;
  readonly r: HttpResult;
  readonly ms: number;
}

const timed = async (label: string, send: () => Promise<HttpResult>): Promise<Timed> => {
  const started = performance.now();
  const r = await send();
  return { label, r, ms: performance.now() - started };
};

/** The deadline's answer: 503 STORE_UNAVAILABLE in the envelope, saying when to try again. */
const expectUnavailable = (r: HttpResult): void => {
  expectEnvelope(r, 503, 'STORE_UNAVAILABLE');
  expect(r.headers.get('retry-after'), 'Retry-After').to.equal('2');
};

interface Backend {
  readonly name: string;
  start(): Promise<{ svc: TestService; store: Stall; dispose(): Promise<void> }>;
}

const embedded: Backend = {
  name: 'the embedded store, its LevelDB stalled',
  async start() {
    const level = stallingLevelDown();
    const svc = await startTestService({
      env: { REQUEST_DEADLINE_MS: String(DEADLINE_MS) },
      idempotency: { leaseMs: LEASE_MS },
      levelDown: level.factory,
    });
    return {
      svc,
      store: level,
      async dispose() {
        level.resume();
        await svc.dispose();
      },
    };
  },
};

const behindProxy: Backend = {
  name: `${couchServerLabel()} behind a proxy that freezes`,
  async start() {
    const couch: CouchServer = await startCouchServer();
    const proxy = await freezingProxy(couch.url);
    const svc = await startTestService({
      env: { COUCHDB_URL: proxy.url, REQUEST_DEADLINE_MS: String(DEADLINE_MS) },
      idempotency: { leaseMs: LEASE_MS },
    });
    return {
      svc,
      store: proxy,
      async dispose() {
        proxy.resume();
        await svc.dispose();
        await proxy.close();
        await couch.dispose();
      },
    };
  },
};

for (const backend of [embedded, behindProxy])
  describe(`every request ends by its deadline, whatever the store does: ${backend.name}`, function () {
    this.timeout(90_000);
    let svc: TestService;
    const h = harnessOf(() => svc);
    let store: Stall;
    let dispose: () => Promise<void> = async () => undefined;
    let classId: string;
    let sessionId: string;
    let studentIds: ReadonlyArray<string>;
    const url = (p: string) => `${h.url}${p}`;

    beforeEach(async () => {
      ({ svc, store, dispose } = await backend.start());
      ({ classId, sessionId, studentIds } = await seedSmallRoster(h.url, ['Ana', 'Bia', 'Caio']));
    });
    afterEach(() => dispose());

    const checkIn = (studentId: string, key: string) =>
      call(url('/api/v1/check-in'), {
        method: 'POST',
        headers: mutationHeaders(TOKENS.CHAMADOR, key),
        body: JSON.stringify({ studentId, sessionId }),
      });
    const checkInEvents = async (studentId: string) =>
      (await h.svc.store.db.events.find({ selector: { type: 'CHECK_IN', subjectId: studentId }, limit: 100 }))
        .docs.length;
    const active = async (studentId: string) =>
      decodeAs(
        t.type({ checkIn: CheckIn }),
        (
          await call(url(`/api/v1/check-in/active?studentId=${studentId}&sessionId=${sessionId}`), {
            headers: authHeaders(TOKENS.CHAMADOR),
          })
        ).json,
      ).checkIn;
    /** Sends again while answered 503 (a tablet does, with the same key), at most `times` times. */
    const untilAnswered = async (send: () => Promise<HttpResult>, times = 40): Promise<HttpResult> => {
      for (let i = 0; i < times; i += 1) {
        const r = await send();
        if (r.status !== 503) return r;
        await sleep(250);
      }
      throw new Error(`still 503 after ${times} tries`);
    };

    it('answers every request sent while the store stalls by its deadline: 503 STORE_UNAVAILABLE with Retry-After, or what it can answer without the store', async () => {
      const [ana = '', bia = ''] = studentIds;
      store.stall();
      const answers = await Promise.all([
        timed('check-in', () => checkIn(ana, crypto.randomUUID())),
        timed('student creation', () =>
          call(url('/api/v1/students'), {
            method: 'POST',
            headers: mutationHeaders(TOKENS.ADMIN),
            body: JSON.stringify({ displayName: 'Duda', guardianName: 'G', phones: [], classId }),
          }),
        ),
        timed('offline sync', () =>
          call(url('/api/v1/sync/events'), {
            method: 'POST',
            headers: mutationHeaders(TOKENS.CHAMADOR),
            body: JSON.stringify({
              events: [
                {
                  eventId: crypto.randomUUID(),
                  type: 'MARK_PRESENT',
                  studentId: bia,
                  sessionId,
                  clientTimestamp: new Date().toISOString(),
                },
              ],
            }),
          }),
        ),
        timed('a student read', () =>
          call(url(`/api/v1/students/${bia}`), { headers: authHeaders(TOKENS.ADMIN) }),
        ),
        timed('health', () => call(url('/api/v1/health'))),
      ]);
      store.resume();
      for (const { label, r, ms } of answers) {
        expect(ms, `${label}: answered in ${Math.round(ms)} ms`).to.be.below(DEADLINE_MS + SLACK_MS);
        if (r.status >= 200 && r.status < 300) continue;
        expectUnavailable(r);
      }
      const mutations = answers.filter((a) => a.label !== 'a student read' && a.label !== 'health');
      expect(
        mutations.map((a) => a.r.status),
        'no mutation can be stored while the store stalls',
      ).to.deep.equal([503, 503, 503]);
      // Answered once, at its deadline: the service says so, and says what the request went on to.
      expect(
        h.svc.logLines().filter((l) => l.msg === 'request answered 503 at its deadline').length,
      ).to.be.at.least(3);
    });

    it('a keyed check-in answered 503 at its deadline takes effect once: a retry during the stall is 503 again, and the retry after it gets the first attempt’s check-in', async () => {
      const [ana = ''] = studentIds;
      const key = crypto.randomUUID();
      store.stall();
      const first = await timed('check-in', () => checkIn(ana, key));
      expectUnavailable(first.r);
      expect(first.ms).to.be.below(DEADLINE_MS + SLACK_MS);
      // The first attempt is still held by the store; its retry waits on its claim, and is cut too.
      const during = await timed('its retry', () => checkIn(ana, key));
      expectUnavailable(during.r);
      expect(during.ms).to.be.below(DEADLINE_MS + SLACK_MS);
      // Within the store's own timeout the first attempt's writes land, and it goes on to its answer,
      // which the retry replays. On a loaded machine the two cut answers may outlast that timeout: the
      // first attempt then fails, and the retry runs the check-in itself (0046: either way, once).
      store.resume();
      const retry = await untilAnswered(() => checkIn(ana, key));
      expect(retry.status, retry.text).to.equal(201);
      const firstId = first.r.headers.get('x-correlation-id');
      const endOfFirst = () =>
        h.svc
          .logLines()
          .find(
            (l) =>
              l.correlationId === firstId &&
              (l.msg === 'a request answered at its deadline has ended' ||
                l.msg === 'a request answered at its deadline has failed'),
          );
      for (let i = 0; i < 50 && endOfFirst() === undefined; i += 1) await sleep(100);
      const firstEnd = endOfFirst();
      expect(firstEnd, 'the first attempt ended, and the log says how').not.to.equal(undefined);
      // The first attempt's answer is kept after it is rendered: when that ledger write failed (the
      // store timed out on it, which says nothing of whether it landed), the retry waits the claim's
      // lease out and runs, and the keyed check-in answers the same check-in without a replay.
      const ledgerWriteFailed = h.svc
        .logLines()
        .some((l) => l.correlationId === firstId && l.msg === 'idempotency ledger write failed');
      const replayed = retry.headers.get('idempotent-replayed');
      const how = `the first attempt ended: ${JSON.stringify(firstEnd)}; its ledger write failed: ${ledgerWriteFailed}`;
      if (firstEnd?.status !== 201) expect(replayed, how).to.equal(null);
      else if (!ledgerWriteFailed) expect(replayed, how).to.equal('true');
      expect(decodeAs(CheckIn, retry.json).checkInId).to.equal((await active(ana)).checkInId);
      expect(await checkInEvents(ana), 'one CHECK_IN event').to.equal(1);
      // A new key is a new request: the child is in already.
      expectEnvelope(await checkIn(ana, crypto.randomUUID()), 409, 'CONFLICT');
    });

    if (backend === behindProxy)
      it('a claim that lands after its writer gave up (the node woke past the store timeout) does not make a second check-in: the retry runs the check-in once', async () => {
        const [ana = ''] = studentIds;
        const key = crypto.randomUUID();
        store.stall();
        expectUnavailable(await checkIn(ana, key));
        // Past the store's silence limit (5 s): the claim's write failed for its writer, which gave
        // up; the node still holds it, and stores it when it wakes.
        await sleep(6_500);
        store.resume();
        const retry = await untilAnswered(() => checkIn(ana, key));
        expect(retry.status, retry.text).to.equal(201);
        expect(
          retry.headers.get('idempotent-replayed'),
          'nothing to replay: the first attempt failed',
        ).to.equal(null);
        expect(decodeAs(CheckIn, retry.json).checkInId).to.equal((await active(ana)).checkInId);
        expect(await checkInEvents(ana), 'one CHECK_IN event').to.equal(1);
      });

    it('a replication call while the store stalls is answered 503 by its deadline, in CouchDB’s shape', async () => {
      store.stall();
      const diff = await timed('_revs_diff', () =>
        call(url('/api/v1/replication/events/_revs_diff'), {
          method: 'POST',
          headers: { ...authHeaders(TOKENS.CHAMADOR), 'Content-Type': 'application/json' },
          body: JSON.stringify({ [`event:${crypto.randomUUID()}`]: ['1-a'] }),
        }),
      );
      store.resume();
      expectUnavailable(diff.r);
      expect(diff.ms).to.be.below(DEADLINE_MS + SLACK_MS);
      expect(diff.r.json).to.deep.include({ name: 'service_unavailable' });
    });

    it('a tablet’s longpoll waits for a change past the deadline: the feed has its own bound', async () => {
      const tablet = authHeaders(TOKENS.CHAMADOR);
      const Changes = t.type({ results: t.array(t.unknown), last_seq: t.union([t.string, t.number]) });
      const feed = (query: string) =>
        timed('_changes', () =>
          call(url(`/api/v1/replication/roster/_changes?${query}`), { headers: tablet }),
        );
      // The roster follows the seed a moment later: a longpoll from the end once nothing more comes.
      for (let attempt = 0; attempt < 5; attempt += 1) {
        const now = decodeAs(Changes, (await feed('since=0')).r.json);
        const since = encodeURIComponent(String(now.last_seq));
        const waited = await feed(`feed=longpoll&since=${since}&timeout=${DEADLINE_MS + 1_500}`);
        expect(waited.r.status, waited.r.text).to.equal(200);
        if (decodeAs(Changes, JSON.parse(waited.r.text.trim())).results.length > 0) continue;
        expect(waited.ms, 'it waited for its own timeout').to.be.at.least(DEADLINE_MS + 1_000);
        return;
      }
      throw new Error('the roster kept changing: no longpoll waited');
    });
  });

/** An SMS gateway that holds every message unanswered while `hang` is set, and takes it (200) otherwise. */
const slowGateway = async () => {
  const held: ServerResponse[] = [];
  let taken = 0;
  const state = { hang: true };
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (state.hang) held.push(res);
      else {
        taken += 1;
        res.writeHead(200).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address: AddressInfo | string | null = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    url: `http://127.0.0.1:${address.port}/sms`,
    state,
    taken: () => taken,
    async close() {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
};

describe('a page whose SMS gateway does not answer, within the deadline (decisions 0041, 0046)', function () {
  this.timeout(60_000);
  let gateway: Awaited<ReturnType<typeof slowGateway>>;
  const h = useService(async () => {
    gateway = await slowGateway();
    return { env: { NOTIFY_WEBHOOK_URL: gateway.url, REQUEST_DEADLINE_MS: String(DEADLINE_MS) } };
  }, 'test');
  afterEach(() => gateway.close());

  it('is answered NOTIFICATION_FAILED before the deadline, and sent once when the kiosk sends it again under its key', async () => {
    const roster = await h.seedRoster({
      date: new Date().toISOString().slice(0, 10),
      students: [
        {
          displayName: 'Ana',
          guardianName: 'Rosa',
          phones: [{ number: '+55 11 98765-4321', qualifier: 'mãe' }],
        },
      ],
    });
    const { sessionId } = roster;
    const studentId = roster.student('Ana');
    const checkedIn = await call(`${h.url}/api/v1/check-in`, {
      method: 'POST',
      headers: mutationHeaders(TOKENS.CHAMADOR),
      body: JSON.stringify({ studentId, sessionId }),
    });
    const { checkInId } = decodeAs(CheckIn, checkedIn.json);
    const key = crypto.randomUUID();
    const page = () =>
      call(`${h.url}/api/v1/check-ins/${checkInId}/page`, {
        method: 'POST',
        headers: mutationHeaders(TOKENS.CHAMADOR, key),
        body: JSON.stringify({ message: 'Venha à sala 3.' }),
      });
    const first = await timed('page', page);
    // The notifier's own answer, within the deadline: not the deadline's STORE_UNAVAILABLE.
    expectEnvelope(first.r, 503, 'NOTIFICATION_FAILED');
    expect(first.ms).to.be.below(DEADLINE_MS + SLACK_MS);
    gateway.state.hang = false;
    const again = await page();
    expect(again.status, again.text).to.equal(201);
    expect(decodeAs(t.type({ status: t.string, phonesPaged: t.number }), again.json)).to.deep.include({
      status: 'SENT',
      phonesPaged: 1,
    });
    expect(gateway.taken(), 'the message taken once').to.equal(1);
  });
});
