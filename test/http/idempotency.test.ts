/** Black-box tests of idempotent mutations through the real app, on counting probe routes. */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import { needsIdempotencyKey } from '../../src/http/route.js';
import { TOKENS, useService } from '../support/harness.js';
import { call, expectEnvelope, type HttpResult, issuePaths } from '../support/http.js';
import { agentHeaders, issueAgent } from '../support/printAgents.js';
import { countingRoutes, probeRoutes, type SideEffects } from '../support/probeRoutes.js';
import { authHeaders, mutationHeaders, startTestService } from '../support/testService.js';

const DAY = 86_400_000;

const sameResponse = (a: HttpResult, b: HttpResult) => {
  expect(b.status).to.equal(a.status);
  expect(b.text).to.equal(a.text);
  for (const h of ['location', 'content-type', 'x-correlation-id'])
    expect(b.headers.get(h), h).to.equal(a.headers.get(h));
};

describe('idempotent mutations', () => {
  let effects: SideEffects;
  let now: number;
  const h = useService(() => {
    effects = { items: 0, flaky: 0, missing: 0 };
    now = Date.parse('2026-11-25T12:00:00Z');
    return {
      routes: probeRoutes(countingRoutes(effects, 20)),
      clock: () => new Date(now),
      idempotency: { leaseMs: 2_000, pollMs: 5 },
    };
  }, 'test');
  const post = (path: string, body: unknown, headers: Record<string, string>) =>
    call(`${h.url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });

  it('a replay returns the original status, headers and body, byte for byte, with no second side effect', async () => {
    const headers = mutationHeaders(TOKENS.CHAMADOR);
    const first = await post('/api/v1/_probe/items', { name: 'Ana' }, headers);
    expect(first.status).to.equal(201);
    expect(first.headers.get('location')).to.match(/^\/api\/v1\/_probe\/items\//);
    const again = await post('/api/v1/_probe/items', { name: 'Ana' }, headers);
    sameResponse(first, again);
    expect(again.headers.get('idempotent-replayed')).to.equal('true');
    expect(first.headers.get('idempotent-replayed')).to.equal(null);
    expect(effects.items).to.equal(1);
  });

  it('the same payload with keys in another order and spacing is the same request', async () => {
    const headers = mutationHeaders(TOKENS.CHAMADOR);
    const first = await call(`${h.url}/api/v1/_probe/items`, {
      method: 'POST',
      headers,
      body: '{"name":"Ana"}',
    });
    const again = await call(`${h.url}/api/v1/_probe/items`, {
      method: 'POST',
      headers,
      body: '{ "name" : "Ana" }',
    });
    sameResponse(first, again);
    expect(effects.items).to.equal(1);
  });

  it('the same key with a different payload → 409, no side effect', async () => {
    const headers = mutationHeaders(TOKENS.CHAMADOR);
    await post('/api/v1/_probe/items', { name: 'Ana' }, headers);
    const other = await post('/api/v1/_probe/items', { name: 'Bia' }, headers);
    expectEnvelope(other, 409, 'IDEMPOTENCY_KEY_REUSED_WITH_DIFFERENT_PAYLOAD');
    expect(effects.items).to.equal(1);
  });

  it('the same key used by two principals makes two independent requests', async () => {
    const key = randomUUID();
    const a = await post('/api/v1/_probe/items', { name: 'Ana' }, mutationHeaders(TOKENS.CHAMADOR, key));
    const b = await post('/api/v1/_probe/items', { name: 'Ana' }, mutationHeaders(TOKENS.ADMIN, key));
    expect([a.status, b.status]).to.deep.equal([201, 201]);
    expect(a.headers.get('location')).not.to.equal(b.headers.get('location'));
    expect(effects.items).to.equal(2);
  });

  it('50 concurrent identical requests → exactly one side effect and 50 identical responses', async () => {
    const headers = mutationHeaders(TOKENS.CHAMADOR);
    const results = await Promise.all(
      Array.from({ length: 50 }, () => post('/api/v1/_probe/items', { name: 'Ana' }, headers)),
    );
    expect(effects.items).to.equal(1);
    const [first, ...rest] = results;
    if (first === undefined) throw new Error('no response');
    expect(first.status).to.equal(201);
    for (const r of rest) sameResponse(first, r);
    process.stdout.write(
      `      50 concurrent identical requests: ${effects.items} side effect, ${new Set(results.map((r) => r.text)).size} distinct body\n`,
    );
  });

  it('accepts X-Idempotency-Key as the same header, and refuses two that disagree', async () => {
    const key = randomUUID();
    const { 'Idempotency-Key': _, ...base } = mutationHeaders(TOKENS.CHAMADOR);
    const first = await post('/api/v1/_probe/items', { name: 'Ana' }, { ...base, 'X-Idempotency-Key': key });
    const again = await post('/api/v1/_probe/items', { name: 'Ana' }, { ...base, 'Idempotency-Key': key });
    sameResponse(first, again);
    const clash = await post(
      '/api/v1/_probe/items',
      { name: 'Ana' },
      { ...base, 'Idempotency-Key': key, 'X-Idempotency-Key': randomUUID() },
    );
    expectEnvelope(clash, 400, 'VALIDATION_FAILED');
    expect(effects.items).to.equal(1);
  });

  it('a request refused by validation does not use up its key', async () => {
    const headers = mutationHeaders(TOKENS.CHAMADOR);
    expectEnvelope(await post('/api/v1/_probe/items', { name: 7 }, headers), 400, 'VALIDATION_FAILED');
    expect((await post('/api/v1/_probe/items', { name: 'Ana' }, headers)).status).to.equal(201);
    expect(effects.items).to.equal(1);
  });

  it('a 4xx decided by the handler is stored and replayed without running the handler again', async () => {
    const headers = mutationHeaders(TOKENS.CHAMADOR);
    const path = '/api/v1/_probe/missing/abc';
    const first = await call(`${h.url}${path}`, { method: 'PATCH', headers, body: '{"name":"x"}' });
    expectEnvelope(first, 404, 'NOT_FOUND');
    const again = await call(`${h.url}${path}`, { method: 'PATCH', headers, body: '{"name":"x"}' });
    sameResponse(first, again);
    expect(effects.missing).to.equal(1);
  });

  it('a 500 is not stored: the retry with the same key runs again', async () => {
    const headers = mutationHeaders(TOKENS.CHAMADOR);
    expectEnvelope(await post('/api/v1/_probe/flaky', { name: 'x' }, headers), 500, 'INTERNAL_ERROR');
    const retry = await post('/api/v1/_probe/flaky', { name: 'x' }, headers);
    expect(retry.status).to.equal(200);
    expect(retry.json).to.deep.equal({ attempt: 2 });
  });

  it('a claim whose owner died is released after its lease, and the retry proceeds', async () => {
    const key = randomUUID();
    // A request that claimed the key and never finished (its process died).
    await h.svc.deps.idempotency.ledger.claim({
      key,
      principalId: 'dev-caller',
      fingerprint: 'whatever',
      now,
      leaseMs: 2_000,
      retentionMs: DAY,
    });
    now += 2_001;
    const r = await post('/api/v1/_probe/items', { name: 'Ana' }, mutationHeaders(TOKENS.CHAMADOR, key));
    expect(r.status).to.equal(201);
    expect(effects.items).to.equal(1);
  });

  it('a handler running past its lease keeps the key: a duplicate then waits and replays, it does not run again', async () => {
    // A service of its own whose item creation waits until the test opens the gate.
    let open: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const gated = await startTestService({
      routes: probeRoutes(countingRoutes(effects, 0, () => gate)),
      clock: () => new Date(now),
      idempotency: { leaseMs: 600, pollMs: 5 },
    });
    try {
      const key = randomUUID();
      const headers = mutationHeaders(TOKENS.CHAMADOR, key);
      const send = () =>
        call(`${gated.url}/api/v1/_probe/items`, { method: 'POST', headers, body: '{"name":"Ana"}' });
      const first = send();
      const ledger = gated.deps.idempotency.ledger;
      const leaseOf = async () => {
        const e = await ledger.get(key, 'dev-caller');
        return e?.state === 'pending' ? e.leaseUntil : undefined;
      };
      // Claimed, then the clock passes the claim's lease while the handler still runs.
      for (let i = 0; i < 400 && (await leaseOf()) === undefined; i += 1) await sleep(5);
      now += 10_000;
      // The holder renews it from the clock as it is now (every third of a lease).
      for (let i = 0; i < 400 && ((await leaseOf()) ?? 0) <= now; i += 1) await sleep(5);
      expect(await leaseOf(), 'the lease renewed past the clock').to.be.greaterThan(now);
      const duplicate = send();
      await sleep(50);
      open();
      const [a, b] = await Promise.all([first, duplicate]);
      expect([a.status, b.status]).to.deep.equal([201, 201]);
      expect(b.headers.get('idempotent-replayed')).to.equal('true');
      expect(b.text).to.equal(a.text);
      expect(effects.items, 'the mutation ran once').to.equal(1);
    } finally {
      open();
      await gated.dispose();
    }
  });

  it('entries are purged after 24 hours; the same key is then a new request', async () => {
    const headers = mutationHeaders(TOKENS.CHAMADOR);
    await post('/api/v1/_probe/items', { name: 'Ana' }, headers);
    now += DAY - 1;
    expect(await h.svc.deps.idempotency.ledger.purgeExpired(now)).to.equal(0);
    await post('/api/v1/_probe/items', { name: 'Ana' }, headers);
    expect(effects.items).to.equal(1);
    now += 1;
    expect(await h.svc.deps.idempotency.ledger.purgeExpired(now)).to.equal(1);
    const later = await post('/api/v1/_probe/items', { name: 'Bia' }, headers);
    expect(later.status).to.equal(201);
    expect(effects.items).to.equal(2);
  });

  describe('every mutating route of the registry', () => {
    it('refuses a missing or malformed Idempotency-Key with 400, before any side effect', async () => {
      const mutating = probeRoutes(countingRoutes(effects)).filter(needsIdempotencyKey);
      expect(mutating.length).to.be.greaterThan(0);
      // A print agent's routes open to its own token only (0054): any other is refused before the key is read.
      const agent = await issueAgent(h.url, 'Idempotency-Key check');
      for (const route of mutating) {
        const path = route.path.replace(/\{[^}]+\}/g, randomUUID());
        const method = route.method.toUpperCase();
        for (const key of [undefined, 'not-a-uuid', '6f1c2a8e-9d3b-1c5e-8f7a-1b2c3d4e5f60']) {
          const headers: Record<string, string> = {
            ...(route.auth === 'printAgent' ? agentHeaders(agent) : authHeaders(TOKENS.ADMIN)),
            'Content-Type': 'application/json',
          };
          if (key !== undefined) headers['Idempotency-Key'] = key;
          const r = await call(`${h.url}${path}`, { method, headers, body: '{}' });
          const e = expectEnvelope(r, 400, 'VALIDATION_FAILED');
          expect(issuePaths(e), `${method} ${route.path} with key ${String(key)}`).to.deep.equal([
            'headers.idempotency-key',
          ]);
        }
      }
      expect(effects).to.deep.equal({ items: 0, flaky: 0, missing: 0 });
    });
  });
});
