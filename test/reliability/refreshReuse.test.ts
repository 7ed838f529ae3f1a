/**
 * Refresh tokens as an attacker and a flaky tablet would use them (spec, Authentication 3; decision
 * 0013). Reuse of a rotated token revokes every session of that user (not only the token's own chain)
 * and stops their access tokens at once, rotated ones included. Concurrent refreshes with one token let
 * at most one rotation win and answer the rest 401 in the envelope (the spec's bar); decision 0013 goes
 * further: exactly one wins, the rest are 401 UNAUTHORIZED, and the double send is not treated as theft.
 * The two bars are separate tests, so a run says which one holds.
 *
 * The service trusts the loopback proxy here and every request names its own X-Forwarded-For, so the
 * per-IP login and refresh limits (5 and 10 a minute) stay out of the way of what is measured.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import * as t from 'io-ts';
import {
  ADMIN_EMAIL,
  ADMIN_PASSWORD,
  createUser,
  decodeTokens,
  jwtEnv,
  seed,
  type TokensWithRefresh,
} from '../support/auth.js';
import { call, expectEnvelope, type HttpResult } from '../support/http.js';
import { startTestService, type TestService } from '../support/testService.js';
import { figure } from './figures.js';
import { docsOfType, errorCodeOf, since, tallyText } from './helpers.js';

const CALLER = { email: 'chamador@chamada.test', password: 'chamador password 1' };
const Session = t.type({
  sessionId: t.string,
  userId: t.string,
  revokedAt: t.union([t.string, t.null]),
  revokeReason: t.union([t.string, t.null]),
  suspectedCompromiseAt: t.union([t.string, t.null]),
});

let ipCounter = 0;
/** A fresh client address behind the trusted loopback proxy. */
const freshIp = (): Record<string, string> => {
  ipCounter += 1;
  return { 'X-Forwarded-For': `198.51.${Math.floor(ipCounter / 250) % 250}.${(ipCounter % 250) + 1}` };
};

/** A JWT-mode service with the seeded ADMIN and one CHAMADOR user, and the calls the tests make. */
const harness = () => {
  let svc: TestService | undefined;
  const service = (): TestService => {
    if (svc === undefined) throw new Error('service not started');
    return svc;
  };
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    call(`${service().url}${path}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...freshIp(), ...headers },
      body: JSON.stringify(body),
    });
  const login = async (email: string, password: string): Promise<TokensWithRefresh> => {
    const r = await post('/api/v1/auth/login', { email, password }, { 'X-Device-Id': randomUUID() });
    expect(r.status, r.text).to.equal(200);
    return decodeTokens(r.json);
  };
  const refresh = (token: string): Promise<HttpResult> =>
    post('/api/v1/auth/refresh', { refreshToken: token });
  const state: { admin?: TokensWithRefresh; callerId: string } = { callerId: '' };
  const h = {
    state,
    login,
    refresh,
    async rotate(token: string): Promise<TokensWithRefresh> {
      const r = await refresh(token);
      expect(r.status, r.text).to.equal(200);
      return decodeTokens(r.json);
    },
    /** An authenticated read any role may make. */
    use: (accessToken: string): Promise<HttpResult> =>
      call(`${service().url}/api/v1/students?limit=1`, {
        headers: { Authorization: `Bearer ${accessToken}`, 'X-Device-Id': randomUUID() },
      }),
    sessionsOf: async (userId: string) =>
      (await docsOfType(service().store.db.private, 'session', Session)).filter((s) => s.userId === userId),
    async start() {
      svc = await startTestService({ env: jwtEnv({ TRUST_PROXY: 'loopback' }) });
      await seed(svc.url);
      const admin = await login(ADMIN_EMAIL, ADMIN_PASSWORD);
      state.admin = admin;
      state.callerId = await createUser(svc.url, admin.accessToken, {
        email: CALLER.email,
        displayName: 'Chamador',
        roles: ['CHAMADOR'],
        password: CALLER.password,
      });
    },
    dispose: () => service().dispose(),
  };
  return h;
};

describe('reliability: refresh-token reuse (JWT mode)', function () {
  this.timeout(60_000);
  const h = harness();
  beforeEach(() => h.start());
  afterEach(() => h.dispose());

  it('reuse of a rotated refresh token → 401 COMPROMISED_SESSION; every session of the user dies at once', async () => {
    const { login, rotate, refresh, use } = h;
    // Three devices of one user; device A has rotated twice (A0 → A1 → A2).
    const a0 = await login(CALLER.email, CALLER.password);
    const b = await login(CALLER.email, CALLER.password);
    const c = await login(CALLER.email, CALLER.password);
    const a1 = await rotate(a0.refreshToken);
    const a2 = await rotate(a1.refreshToken);
    const all = { a0, a1, a2, b, c };
    // Before the reuse every access token works, the rotated ones too (they live out their 15 minutes).
    for (const [name, tokens] of Object.entries(all)) {
      expect((await use(tokens.accessToken)).status, `${name} before`).to.equal(200);
    }

    const reuse = await refresh(a0.refreshToken);
    expectEnvelope(reuse, 401, 'COMPROMISED_SESSION');

    const deadAccess: string[] = [];
    for (const [name, tokens] of Object.entries(all)) {
      const r = await use(tokens.accessToken);
      expect(r.status, `${name} after`).to.equal(401);
      expectEnvelope(r, 401, 'UNAUTHORIZED');
      deadAccess.push(name);
    }
    // Every refresh token the user still held is now a revoked one: presenting it is reuse too.
    const refused: string[] = [];
    for (const [name, tokens] of Object.entries({ a1, a2, b, c })) {
      const r = await refresh(tokens.refreshToken);
      expect(r.status, `${name} refresh`).to.equal(401);
      expectEnvelope(r, 401, 'COMPROMISED_SESSION');
      refused.push(name);
    }
    const sessions = await h.sessionsOf(h.state.callerId);
    expect(sessions).to.have.length(5);
    expect(sessions.filter((s) => s.revokedAt === null)).to.deep.equal([]);
    expect(sessions.filter((s) => s.revokeReason === 'ROTATED')).to.deep.equal([]);
    expect(sessions.find((s) => s.sessionId === a0.sessionId)?.suspectedCompromiseAt).to.be.a('string');

    // Another user's session is untouched, and the victim can sign in again (revoked, not deactivated).
    expect((await use(h.state.admin?.accessToken ?? '')).status).to.equal(200);
    const again = await login(CALLER.email, CALLER.password);
    expect((await use(again.accessToken)).status).to.equal(200);

    figure(
      'refresh reuse',
      `token rotated twice, reused → 401 COMPROMISED_SESSION; ${deadAccess.length}/5 access tokens of the user ` +
        `refused at once (2 of them rotated, valid before), ${refused.length}/4 refresh tokens → 401, ` +
        `${sessions.length}/${sessions.length} sessions revoked in the store; other user unaffected; fresh login works`,
    );
  });
});

describe('reliability: refresh-token race (JWT mode)', function () {
  this.timeout(60_000);
  const n = 20;
  const h = harness();
  let first: TokensWithRefresh;
  let results: HttpResult[] = [];
  let summary = '';
  let elapsed = 0;

  // One race, judged against two bars.
  before(async () => {
    await h.start();
    first = await h.login(CALLER.email, CALLER.password);
    const started = process.hrtime.bigint();
    results = await Promise.all(Array.from({ length: n }, () => h.refresh(first.refreshToken)));
    elapsed = since(started);
    summary = tallyText(
      results.map((r) => (r.status === 200 ? '200' : `${r.status} ${errorCodeOf(r) ?? '?'}`)),
    );
  });
  after(() => h.dispose());

  it(`spec: ${n} concurrent refreshes with one token → at most one rotation wins, the rest 401 in the envelope`, () => {
    const winners = results.filter((r) => r.status === 200).length;
    figure('refresh race (spec)', `${n} concurrent refreshes of one token → ${summary}; ${elapsed} ms`);
    expect(winners, summary).to.be.at.most(1);
    for (const r of results.filter((x) => x.status !== 200)) {
      const code = errorCodeOf(r) ?? 'none';
      expect(['UNAUTHORIZED', 'COMPROMISED_SESSION'], summary).to.include(code);
      expectEnvelope(r, 401, code);
    }
  });

  it('decision 0013: exactly one wins, the rest 401 UNAUTHORIZED; the double send is not theft', async () => {
    const winner = results.find((r) => r.status === 200);
    const next = winner === undefined ? undefined : decodeTokens(winner.json);
    const winnerUsable = next === undefined ? 'none' : String((await h.use(next.accessToken)).status);
    const compromised = (await h.sessionsOf(h.state.callerId)).filter(
      (s) => s.suspectedCompromiseAt !== null,
    ).length;
    figure(
      'refresh race (decision 0013)',
      `${summary}; winner's new access token → ${winnerUsable}; ${compromised} sessions marked compromised`,
    );

    expect(summary, 'a benign double send must not be answered as theft').to.equal(
      `1×200, ${n - 1}×401 UNAUTHORIZED`,
    );
    expect(compromised, 'sessions marked compromised by the race').to.equal(0);
    expect(winnerUsable, "the winner's new access token").to.equal('200');
    if (next === undefined) throw new Error('no winner');
    const after = await h.rotate(next.refreshToken);
    expect((await h.use(after.accessToken)).status).to.equal(200);
    // A later, sequential use of the raced token is reuse.
    expectEnvelope(await h.refresh(first.refreshToken), 401, 'COMPROMISED_SESSION');
    expectEnvelope(await h.use(after.accessToken), 401, 'UNAUTHORIZED');
  });
});
