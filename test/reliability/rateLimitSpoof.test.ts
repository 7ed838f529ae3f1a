/**
 * Login and refresh limits (5 and 10 requests per 60 s per client IP; every request counts) against a
 * client that forges its address on every request. With the default configuration (TRUST_PROXY unset)
 * the address is the socket's, so no forwarding header may reset or split a counter. A control run with
 * TRUST_PROXY=loopback shows the same requests would be told apart if the header were trusted, so the
 * default's result is not an accident of the test.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { ADMIN_EMAIL, ADMIN_PASSWORD, jwtEnv, seed } from '../support/auth.js';
import { call, expectEnvelope, type HttpResult } from '../support/http.js';
import { startTestService, type TestService } from '../support/testService.js';
import { figure } from './figures.js';
import { since, tallyText } from './helpers.js';

const ROUNDS = 30;

/** A different forged origin on every request, in every header a proxy might use. */
const spoofed = (i: number): Record<string, string> => {
  const v4 = `203.0.113.${(i % 250) + 1}`;
  const v6 = `2001:db8::${(i + 1).toString(16)}`;
  const forms: ReadonlyArray<Record<string, string>> = [
    { 'X-Forwarded-For': v4 },
    { 'X-Forwarded-For': v6 },
    { 'X-Forwarded-For': `${v4}, 10.0.0.${i % 250}` },
    { 'X-Forwarded-For': `${v4}, 127.0.0.1` },
    { 'X-Real-IP': v4, 'X-Forwarded-For': v6 },
    { Forwarded: `for=${v4};proto=https`, 'X-Forwarded-For': v4 },
    { 'True-Client-IP': v4, 'CF-Connecting-IP': v4, 'X-Client-IP': v4, 'X-Forwarded-For': `::ffff:${v4}` },
  ];
  return forms[i % forms.length] ?? {};
};

/** How many requests got an answer other than 429 before the first 429, and what came after it. */
const passedBefore429 = (results: ReadonlyArray<HttpResult>) => {
  const first = results.findIndex((r) => r.status === 429);
  return {
    passed: first === -1 ? results.length : first,
    afterFirst429: results.slice(first === -1 ? results.length : first).map((r) => r.status),
  };
};

describe('reliability: rate limits under a forged X-Forwarded-For', function () {
  this.timeout(60_000);
  let svc: TestService;
  let now: number;
  const post = (path: string, body: unknown, headers: Record<string, string>) =>
    call(`${svc.url}${path}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
  /** Valid and wrong passwords interleaved: a limit that counted only failures would reopen here. */
  const login = (i: number) =>
    post(
      '/api/v1/auth/login',
      { email: ADMIN_EMAIL, password: i % 2 === 0 ? ADMIN_PASSWORD : `wrong ${randomUUID()}` },
      spoofed(i),
    );
  const refresh = (i: number) => post('/api/v1/auth/refresh', { refreshToken: 'R'.repeat(43) }, spoofed(i));

  describe('default configuration (TRUST_PROXY unset)', () => {
    beforeEach(async () => {
      now = Date.parse('2026-11-25T12:00:00.000Z');
      svc = await startTestService({ env: jwtEnv(), clock: () => new Date(now) });
      await seed(svc.url);
    });
    afterEach(() => svc.dispose());

    it(`login: ${ROUNDS} requests, each from a forged address → 5 pass, then 429 with Retry-After`, async () => {
      const results: HttpResult[] = [];
      for (let i = 0; i < ROUNDS; i += 1) results.push(await login(i));
      const { passed, afterFirst429 } = passedBefore429(results);
      figure(
        'rate limit, forged XFF (login)',
        `${passed} of ${ROUNDS} passed before the first 429 (${tallyText(results.slice(0, passed).map((r) => r.status))}); ` +
          `after it ${tallyText(afterFirst429)}`,
      );
      expect(passed).to.equal(5);
      expect(afterFirst429).to.deep.equal(Array.from({ length: ROUNDS - 5 }, () => 429));
      for (const r of results.slice(5)) {
        expectEnvelope(r, 429, 'RATE_LIMITED');
        expect(Number(r.headers.get('retry-after'))).to.be.within(1, 60);
      }
      // The window is per client, not forever: a minute later the same socket may try again.
      now += 60_001;
      expect((await login(0)).status).to.equal(200);
    });

    it(`refresh: ${ROUNDS} requests, each from a forged address → 10 pass, then 429`, async () => {
      const results: HttpResult[] = [];
      for (let i = 0; i < ROUNDS; i += 1) results.push(await refresh(i));
      const { passed, afterFirst429 } = passedBefore429(results);
      figure(
        'rate limit, forged XFF (refresh)',
        `${passed} of ${ROUNDS} passed before the first 429; after it ${tallyText(afterFirst429)}`,
      );
      expect(passed).to.equal(10);
      expect(afterFirst429).to.deep.equal(Array.from({ length: ROUNDS - 10 }, () => 429));
      for (const r of results.slice(10)) expectEnvelope(r, 429, 'RATE_LIMITED');
    });

    it(`login: ${ROUNDS} concurrent requests, each from a forged address → at most 5 pass`, async () => {
      const started = process.hrtime.bigint();
      const results = await Promise.all(Array.from({ length: ROUNDS }, (_, i) => login(i)));
      const elapsed = since(started);
      const passed = results.filter((r) => r.status !== 429).length;
      figure(
        'rate limit, forged XFF (concurrent login)',
        `${passed} of ${ROUNDS} concurrent passed (${tallyText(results.map((r) => r.status))}); ${elapsed} ms`,
      );
      expect(passed).to.be.at.most(5);
      for (const r of results.filter((x) => x.status === 429)) expectEnvelope(r, 429, 'RATE_LIMITED');
    });
  });

  describe('control: TRUST_PROXY=loopback', () => {
    beforeEach(async () => {
      now = Date.parse('2026-11-25T12:00:00.000Z');
      svc = await startTestService({ env: jwtEnv({ TRUST_PROXY: 'loopback' }), clock: () => new Date(now) });
    });
    afterEach(() => svc.dispose());

    it('a trusted proxy’s X-Forwarded-For names the client: distinct clients are counted apart, one client is limited', async () => {
      // Malformed bodies: every request counts, and no password hashing slows the run.
      const distinct: HttpResult[] = [];
      for (let i = 0; i < 12; i += 1) {
        distinct.push(await post('/api/v1/auth/login', {}, { 'X-Forwarded-For': `198.51.100.${i + 1}` }));
      }
      const same: HttpResult[] = [];
      for (let i = 0; i < 12; i += 1) {
        same.push(await post('/api/v1/auth/login', {}, { 'X-Forwarded-For': '198.51.100.200' }));
      }
      const d = passedBefore429(distinct).passed;
      const s = passedBefore429(same).passed;
      figure(
        'rate limit, trusted proxy (control)',
        `12 clients × 1 request → ${d} passed; 1 client × 12 requests → ${s} passed before 429`,
      );
      expect(d).to.equal(12);
      expect(s).to.equal(5);
    });
  });
});
