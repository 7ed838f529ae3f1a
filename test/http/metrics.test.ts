/** `GET /metrics` (decision 0021), black-box: who may read it, and that each counter moves as it should. */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { useService, useServiceOnCouch } from '../support/harness.js';
import { call, expectEnvelope } from '../support/http.js';
import { parseExposition, type Sample, sampleSum } from '../support/prometheus.js';
import { syncEvents } from '../support/seed.js';
import { makeTablet } from '../support/tablet.js';
import {
  authHeaders,
  DEV_TOKENS,
  mutationHeaders,
  startTestService,
  type TestService,
} from '../support/testService.js';

const TOKEN = 'metrics-token-0123456789-abcdefghijklmnop';
const BEARER = { Authorization: `Bearer ${TOKEN}` };
const HTTP = 'chamada_http_request_duration_seconds_count';
const today = () => new Date().toISOString().slice(0, 10);

const scrapeOf = async (svc: TestService): Promise<ReadonlyArray<Sample>> => {
  const r = await call(`${svc.url}/metrics`, { headers: BEARER });
  expect(r.status, r.text).to.equal(200);
  return parseExposition(r.text);
};

/** How much each named sample moved between two scrapes. */
const movedBy =
  (before: ReadonlyArray<Sample>, after: ReadonlyArray<Sample>) =>
  (name: string, labels: Readonly<Record<string, string>> = {}): number =>
    sampleSum(after, name, labels) - sampleSum(before, name, labels);

describe('GET /metrics: who may read it', function () {
  this.timeout(60_000);

  it('does not exist when neither METRICS_TOKEN nor METRICS_ALLOW is set: the 404 of an unknown path', async () => {
    const svc = await startTestService();
    try {
      const metrics = expectEnvelope(await call(`${svc.url}/metrics`, { headers: BEARER }), 404, 'NOT_FOUND');
      const unknown = expectEnvelope(await call(`${svc.url}/no-such-path`), 404, 'NOT_FOUND');
      expect(metrics.message).to.equal(unknown.message);
    } finally {
      await svc.dispose();
    }
  });

  describe('with METRICS_TOKEN', () => {
    const h = useService({ env: { METRICS_TOKEN: TOKEN } });

    it('refuses a scrape without the token, or with another one, with 401 in the error envelope', async () => {
      expectEnvelope(await call(`${h.url}/metrics`), 401, 'UNAUTHORIZED');
      expectEnvelope(
        await call(`${h.url}/metrics`, { headers: { Authorization: `Bearer ${TOKEN}x` } }),
        401,
        'UNAUTHORIZED',
      );
      expectEnvelope(
        await call(`${h.url}/metrics`, { headers: authHeaders(DEV_TOKENS.DEV_ADMIN_TOKEN) }),
        401,
        'UNAUTHORIZED',
      );
    });

    it('answers the text exposition format to the token, with the process metrics, and never logs the token', async () => {
      const r = await call(`${h.url}/metrics`, { headers: BEARER });
      expect(r.status).to.equal(200);
      expect(r.headers.get('content-type')).to.match(/^text\/plain; version=0\.0\.4/);
      expect(r.headers.get('cache-control')).to.equal('no-store');
      const samples = parseExposition(r.text);
      expect(sampleSum(samples, 'process_cpu_user_seconds_total')).to.be.greaterThan(0);
      expect(r.text).to.contain('# TYPE chamada_http_request_duration_seconds histogram');
      expect(h.svc.rawLog()).not.to.contain(TOKEN);
      const line = h.svc.logLines().find((l) => l.route === 'GET /metrics' && l.status === 200);
      expect(line, 'the scrape is logged by its route').not.to.equal(undefined);
    });
  });

  describe('with METRICS_ALLOW', () => {
    it('refuses an address outside the list with 403, a forged X-Forwarded-For included', async () => {
      const svc = await startTestService({ env: { METRICS_ALLOW: '192.0.2.0/24, 2001:db8::/32' } });
      try {
        expectEnvelope(await call(`${svc.url}/metrics`), 403, 'FORBIDDEN_ROLE');
        expectEnvelope(
          await call(`${svc.url}/metrics`, { headers: { 'X-Forwarded-For': '192.0.2.7' } }),
          403,
          'FORBIDDEN_ROLE',
        );
        // No token is configured: one sent opens nothing.
        expectEnvelope(await call(`${svc.url}/metrics`, { headers: BEARER }), 403, 'FORBIDDEN_ROLE');
      } finally {
        await svc.dispose();
      }
    });

    it('answers an allowed address without a token, beside a configured token', async () => {
      const svc = await startTestService({ env: { METRICS_ALLOW: 'loopback', METRICS_TOKEN: TOKEN } });
      try {
        const r = await call(`${svc.url}/metrics`);
        expect(r.status, r.text).to.equal(200);
        expect(r.text).to.contain('chamada_pipeline_pending_events');
      } finally {
        await svc.dispose();
      }
    });
  });
});

describe('GET /metrics: the counters move', function () {
  this.timeout(60_000);
  const h = useService({ env: { METRICS_TOKEN: TOKEN } });
  let sessionId: string;
  let ana: string;
  const mark = (type: string, clientTimestamp: string) => ({
    eventId: randomUUID(),
    type,
    studentId: ana,
    sessionId,
    clientTimestamp,
  });
  const checkIn = (key: string) =>
    call(`${h.url}/api/v1/check-in`, {
      method: 'POST',
      headers: mutationHeaders(DEV_TOKENS.DEV_CALLER_TOKEN, key),
      body: JSON.stringify({ sessionId, studentId: ana }),
    });

  before(async () => {
    const roster = await h.seedRoster({ students: ['Ana'], date: today() });
    sessionId = roster.sessionId;
    ana = roster.student('Ana');
  });

  it('a check-in and its replay: two requests under the route template and status, one replay, a page projected', async () => {
    const before = await scrapeOf(h.svc);
    const key = randomUUID();
    const first = await checkIn(key);
    expect(first.status, first.text).to.equal(201);
    const replay = await checkIn(key);
    expect(replay.headers.get('idempotent-replayed')).to.equal('true');
    const moved = movedBy(before, await scrapeOf(h.svc));
    const checkInRoute = { method: 'POST', route: '/api/v1/check-in', status: '201' };
    expect(moved(HTTP, checkInRoute)).to.equal(2);
    expect(moved('chamada_http_request_duration_seconds_bucket', { ...checkInRoute, le: '+Inf' })).to.equal(
      2,
    );
    expect(moved('chamada_http_request_duration_seconds_sum', checkInRoute)).to.be.greaterThan(0);
    expect(moved('chamada_idempotency_replays_total', { route: '/api/v1/check-in' })).to.equal(1);
    // The check-in's event was projected in a page before the 201: the pages, their changes, their time.
    expect(moved('chamada_pipeline_page_seconds_count')).to.be.at.least(1);
    expect(moved('chamada_pipeline_page_seconds_sum')).to.be.greaterThan(0);
    expect(moved('chamada_pipeline_page_changes_sum')).to.be.at.least(1);
    expect(moved('chamada_pipeline_page_changes_count')).to.equal(
      moved('chamada_pipeline_page_seconds_count'),
    );
  });

  it('the sixth login within a minute: one rate-limit refusal, counted as a 429', async () => {
    const before = await scrapeOf(h.svc);
    const statuses: number[] = [];
    for (let i = 0; i < 6; i += 1) {
      const r = await call(`${h.url}/api/v1/auth/login`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ email: 'nobody@chamada.test', password: 'wrong password' }),
      });
      statuses.push(r.status);
    }
    expect(statuses[5]).to.equal(429);
    const moved = movedBy(before, await scrapeOf(h.svc));
    expect(moved('chamada_rate_limit_refusals_total', { scope: 'login' })).to.equal(1);
    expect(moved(HTTP, { route: '/api/v1/auth/login', status: '429' })).to.equal(1);
  });

  it('a synced mark that loses to an ADMIN: one conflict decided by ADMIN_PRECEDENCE', async () => {
    const before = await scrapeOf(h.svc);
    await syncEvents(h.url, [mark('MARK_ABSENT', `${today()}T09:00:00.000Z`)], DEV_TOKENS.DEV_ADMIN_TOKEN);
    const lost = await syncEvents(h.url, [mark('MARK_PRESENT', `${today()}T10:00:00.000Z`)]);
    expect(lost.synced[0]?.status).to.equal('CONFLICT_SUPERSEDED');
    const moved = movedBy(before, await scrapeOf(h.svc));
    expect(moved('chamada_pipeline_conflicts_total', { policy: 'ADMIN_PRECEDENCE' })).to.equal(1);
    expect(moved('chamada_pipeline_conflicts_total')).to.equal(1);
    expect(moved(HTTP, { route: '/api/v1/sync/events', status: '200' })).to.equal(2);
  });

  it('a tablet pull and push: documents served, accepted and refused, under the replication templates', async () => {
    const tablet = makeTablet(h.url, DEV_TOKENS.DEV_CALLER_TOKEN);
    try {
      await h.svc.deps.sync.pipeline.catchUp();
      await h.svc.deps.replication.reconciler.refresh();
      const before = await scrapeOf(h.svc);
      const pulled = await tablet.pull();
      expect(pulled.docs_read).to.be.greaterThan(0);
      const good = mark('MARK_PRESENT', new Date().toISOString());
      const unknownChild = { ...good, eventId: randomUUID(), studentId: randomUUID() };
      for (const e of [good, unknownChild]) await tablet.outbox.put({ _id: `event:${e.eventId}`, ...e });
      const pushed = await tablet.push();
      expect([pushed.docs_written, pushed.doc_write_failures]).to.deep.equal([1, 1]);
      const moved = movedBy(before, await scrapeOf(h.svc));
      expect(moved('chamada_replication_pulled_documents_total')).to.equal(pulled.docs_read);
      expect(moved('chamada_replication_pushed_documents_total', { outcome: 'accepted' })).to.equal(1);
      expect(moved('chamada_replication_pushed_documents_total', { outcome: 'refused' })).to.equal(1);
      expect(
        moved(HTTP, { method: 'POST', route: '/api/v1/replication/events/_bulk_docs', status: '201' }),
      ).to.equal(1);
      expect(moved(HTTP, { route: '/api/v1/replication/roster/_changes' })).to.be.greaterThan(0);
      // Document ids never become labels.
      const routes = (await scrapeOf(h.svc)).flatMap((s) => (s.name === HTTP ? [s.labels.route ?? ''] : []));
      expect(routes.filter((r) => r.includes(ana) || r.includes(good.eventId))).to.deep.equal([]);
    } finally {
      await tablet.close();
    }
  });

  it('an undecodable event document: one quarantine, and no backlog once it is projected', async () => {
    const before = await scrapeOf(h.svc);
    await h.svc.store.db.events.put({ _id: `event:${randomUUID()}`, poison: true });
    await h.svc.deps.sync.pipeline.catchUp();
    const after = await scrapeOf(h.svc);
    const moved = movedBy(before, after);
    expect(moved('chamada_pipeline_quarantined_total', { reason: 'UNDECODABLE_EVENT' })).to.equal(1);
    expect(sampleSum(after, 'chamada_pipeline_pending_events')).to.equal(0);
    expect(sampleSum(after, 'chamada_pipeline_lag_seconds')).to.equal(0);
  });

  it('a path no route serves is counted as `unmatched`, never by its URL', async () => {
    const before = await scrapeOf(h.svc);
    const path = `/api/v1/no-such-thing/${randomUUID()}`;
    expectEnvelope(await call(`${h.url}${path}`), 404, 'NOT_FOUND');
    const after = await scrapeOf(h.svc);
    expect(movedBy(before, after)(HTTP, { method: 'GET', route: 'unmatched', status: '404' })).to.equal(1);
    expect(after.some((s) => Object.values(s.labels).some((v) => v.includes(path)))).to.equal(false);
  });
});

describe('GET /metrics: the pipeline backlog', function () {
  this.timeout(60_000);

  let now = new Date();
  const h = useService(() => {
    now = new Date(`${today()}T10:05:00.000Z`);
    return { env: { METRICS_TOKEN: TOKEN }, clock: () => now };
  });

  it('counts the events stored and not projected, and the age of the oldest by the service clock', async () => {
    await h.svc.deps.sync.pipeline.catchUp();
    const idle = await scrapeOf(h.svc);
    expect(sampleSum(idle, 'chamada_pipeline_pending_events')).to.equal(0);
    // A stopped pipeline projects nothing more: what is stored from now on waits.
    await h.svc.deps.sync.pipeline.stop();
    const stored = (minute: string) => ({
      _id: `event:${randomUUID()}`,
      serverTimestamp: `${today()}T10:0${minute}:00.000Z`,
    });
    await h.svc.store.db.events.bulkDocs([stored('0'), stored('2'), stored('4')]);
    const waiting = await scrapeOf(h.svc);
    expect(sampleSum(waiting, 'chamada_pipeline_pending_events')).to.equal(3);
    expect(sampleSum(waiting, 'chamada_pipeline_lag_seconds')).to.equal(300);
  });
});

describe('GET /metrics while the store is down (CouchDB-protocol server)', function () {
  this.timeout(60_000);
  const { h, couch } = useServiceOnCouch({ env: { METRICS_TOKEN: TOKEN } });

  it('still answers, counting the 503s and the store errors they met', async () => {
    const before = await scrapeOf(h.svc);
    await couch().stop();
    expectEnvelope(
      await call(`${h.url}/api/v1/classes`, { headers: authHeaders(DEV_TOKENS.DEV_ADMIN_TOKEN) }),
      503,
      'STORE_UNAVAILABLE',
    );
    expectEnvelope(await call(`${h.url}/api/v1/health`), 503, 'STORE_UNAVAILABLE');
    const moved = movedBy(before, await scrapeOf(h.svc));
    expect(moved('chamada_store_errors_total', { source: 'request' })).to.equal(1);
    expect(moved('chamada_store_errors_total', { source: 'scrape' })).to.equal(1);
    expect(moved(HTTP, { route: '/api/v1/classes', status: '503' })).to.equal(1);
    expect(moved(HTTP, { route: '/api/v1/health', status: '503' })).to.equal(1);
    await couch().restart();
    expect((await call(`${h.url}/api/v1/health`)).status).to.equal(200);
  });
});
