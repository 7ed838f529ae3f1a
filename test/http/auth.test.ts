/** Authentication in JWT mode, black-box: login, tokens, refresh rotation and reuse, revoke, validate. */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import jwt from 'jsonwebtoken';
import { hashToken } from '../../src/crypto/tokens.js';
import { sessionStore } from '../../src/store/sessions.js';
import {
  ADMIN_EMAIL,
  ADMIN_PASSWORD,
  bearerMutation,
  createAndSignIn,
  createUser,
  decodeTokens,
  jsonPost,
  login,
  loginAttempt,
  TEST_JWT_SECRET,
  useJwtService,
} from '../support/auth.js';
import { call, expectEnvelope } from '../support/http.js';
import { DEV_TOKENS } from '../support/testService.js';

describe('authentication (JWT mode)', function () {
  this.timeout(60_000);
  let now: number;
  const h = useJwtService(() => {
    now = Date.parse('2026-11-25T12:00:00Z');
    return { env: { SESSION_TTL_SECONDS: '3600' }, clock: () => new Date(now) };
  }, 'test');
  const url = (p: string) => `${h.url}${p}`;

  describe('seed', () => {
    it("seeds a demo roster a newcomer can use at once: 20 students, two classes, today's sessions", async () => {
      const admin = await login(h.url, ADMIN_EMAIL, ADMIN_PASSWORD);
      const students = await h.get('/api/v1/students?limit=50', admin.accessToken);
      expect(students.status, students.text).to.equal(200);
      expect(JSON.stringify(students.json).match(/"studentId"/g)).to.have.length(20);
      const today = new Date(now).toISOString().slice(0, 10);
      const sessions = await h.get(`/api/v1/sessions?date=${today}`, admin.accessToken);
      expect(JSON.stringify(sessions.json).match(/"sessionId"/g)).to.have.length(2);
    });

    it('a second seed → 409 ALREADY_SEEDED', async () => {
      expectEnvelope(await call(url('/api/v1/_seed'), { method: 'POST' }), 409, 'ALREADY_SEEDED');
    });
  });

  describe('login', () => {
    it('returns the contract fields; the email is matched case-insensitively', async () => {
      const r = await call(
        url('/api/v1/auth/login'),
        jsonPost({ email: ADMIN_EMAIL.toUpperCase(), password: ADMIN_PASSWORD }),
      );
      expect(r.status).to.equal(200);
      const tokens = decodeTokens(r.json);
      expect(r.json).to.include.keys(
        'accessToken',
        'refreshToken',
        'csrfToken',
        'expiresAt',
        'accessTokenExpiresAt',
        'user',
      );
      expect(tokens.expiresAt).to.equal(new Date(now + 900_000).toISOString());
      expect(tokens.user).to.deep.include({ email: ADMIN_EMAIL, role: 'ADMIN' });
      expect(tokens.refreshToken).to.match(/^[A-Za-z0-9_-]{43}$/);
      const claims = jwt.verify(tokens.accessToken, TEST_JWT_SECRET, {
        algorithms: ['HS256'],
        clockTimestamp: now / 1000,
      });
      expect(claims).to.deep.include({
        userId: tokens.user.userId,
        roles: ['ADMIN'],
        primaryRole: 'ADMIN',
        sessionId: tokens.sessionId,
      });
    });

    it('stores only the SHA-256 of the refresh token', async () => {
      const tokens = await login(h.url, ADMIN_EMAIL, ADMIN_PASSWORD);
      const session = await sessionStore(h.svc.store.db.private).get(tokens.sessionId);
      expect(session?.refreshTokenHash).to.equal(hashToken(tokens.refreshToken));
      const raw = JSON.stringify(await h.svc.store.db.private.allDocs({ include_docs: true }));
      expect(raw).not.to.contain(tokens.refreshToken);
    });

    it('a wrong password and an unknown email get the same 401 message', async () => {
      const t0 = process.hrtime.bigint();
      const wrong = await loginAttempt(h.url, ADMIN_EMAIL, 'not the password');
      const t1 = process.hrtime.bigint();
      const unknown = await loginAttempt(h.url, 'nobody@chamada.test', 'whatever it is');
      const t2 = process.hrtime.bigint();
      const a = expectEnvelope(wrong, 401, 'UNAUTHORIZED');
      const b = expectEnvelope(unknown, 401, 'UNAUTHORIZED');
      expect(a.message).to.equal(b.message);
      process.stdout.write(
        `      wrong password ${Number(t1 - t0) / 1e6} ms, unknown email ${Number(t2 - t1) / 1e6} ms (both run PBKDF2)\n`,
      );
    });

    it('a deactivated user cannot sign in', async () => {
      const admin = await login(h.url, ADMIN_EMAIL, ADMIN_PASSWORD);
      const userId = await createUser(h.url, admin.accessToken, {
        email: 'caller@chamada.test',
        displayName: 'C',
        roles: ['CHAMADOR'],
        password: 'caller password 1',
      });
      const d = await h.send('POST', `/api/v1/users/${userId}/deactivate`, undefined, admin.accessToken);
      expect(d.status, d.text).to.equal(200);
      expectEnvelope(
        await loginAttempt(h.url, 'caller@chamada.test', 'caller password 1'),
        401,
        'UNAUTHORIZED',
      );
    });
  });

  describe('access tokens', () => {
    let admin: Awaited<ReturnType<typeof login>>;
    beforeEach(async () => {
      admin = await login(h.url, ADMIN_EMAIL, ADMIN_PASSWORD);
    });
    const nowS = () => Math.floor(now / 1000);
    const claims = () => ({
      userId: admin.user.userId,
      roles: ['ADMIN'],
      primaryRole: 'ADMIN',
      sessionId: admin.sessionId,
      csrfToken: admin.csrfToken,
      iat: nowS() - 5,
      exp: nowS() + 600,
    });
    const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
    /** A second ADMIN, `x`@chamada.test, signed in. */
    const anotherAdmin = (x: string) =>
      createAndSignIn(h.url, admin.accessToken, {
        email: `${x}@chamada.test`,
        displayName: x.toUpperCase(),
        roles: ['ADMIN'],
        password: `${x} password 12`,
      });
    const get = (token: string) => h.get('/api/v1/users', token);

    it('a fresh token opens an ADMIN route', async () => {
      expect((await get(admin.accessToken)).status).to.equal(200);
    });

    const vectors: ReadonlyArray<[string, () => string]> = [
      ['alg none', () => `${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims())}.`],
      ['HS512', () => jwt.sign(claims(), TEST_JWT_SECRET, { algorithm: 'HS512' })],
      [
        'an RS256 header',
        () => {
          const [, p, s] = jwt.sign(claims(), TEST_JWT_SECRET, { algorithm: 'HS256' }).split('.');
          return `${b64({ alg: 'RS256', typ: 'JWT' })}.${p}.${s}`;
        },
      ],
      [
        'a stripped signature',
        () =>
          `${jwt.sign(claims(), TEST_JWT_SECRET, { algorithm: 'HS256' }).split('.').slice(0, 2).join('.')}.`,
      ],
      [
        'a wrong key',
        () => jwt.sign(claims(), 'another-secret-another-secret-another', { algorithm: 'HS256' }),
      ],
      [
        'an expired token',
        () => jwt.sign({ ...claims(), exp: nowS() - 1 }, TEST_JWT_SECRET, { algorithm: 'HS256' }),
      ],
      [
        'a token without exp',
        () => {
          const { exp: _e, ...rest } = claims();
          return jwt.sign(rest, TEST_JWT_SECRET, { algorithm: 'HS256' });
        },
      ],
      [
        'a token issued in the future',
        () =>
          jwt.sign({ ...claims(), iat: nowS() + 3600, exp: nowS() + 7200 }, TEST_JWT_SECRET, {
            algorithm: 'HS256',
          }),
      ],
      [
        'tampered claims',
        () => {
          const [h, , s] = admin.accessToken.split('.');
          return `${h}.${b64({ ...claims(), userId: randomUUID() })}.${s}`;
        },
      ],
      [
        'a token for a session that does not exist',
        () => jwt.sign({ ...claims(), sessionId: randomUUID() }, TEST_JWT_SECRET, { algorithm: 'HS256' }),
      ],
      ['a development token in JWT mode', () => DEV_TOKENS.DEV_ADMIN_TOKEN],
      ['garbage', () => 'x.y.z'],
    ];
    for (const [what, token] of vectors) {
      it(`rejects ${what} → 401 UNAUTHORIZED`, async () => {
        expectEnvelope(await get(token()), 401, 'UNAUTHORIZED');
      });
    }

    it('accepts a token with the older single `role` claim', async () => {
      const { roles: _r, primaryRole: _p, ...rest } = claims();
      const legacy = jwt.sign({ ...rest, role: 'ADMIN' }, TEST_JWT_SECRET, { algorithm: 'HS256' });
      expect((await get(legacy)).status).to.equal(200);
    });

    it('a revoked session → 401 on the very next request', async () => {
      const r = await h.send('POST', '/api/v1/auth/revoke', undefined, admin.accessToken);
      expect(r.status, r.text).to.equal(200);
      expect(r.json).to.deep.equal({ revoked: true, sessionId: admin.sessionId });
      expectEnvelope(await get(admin.accessToken), 401, 'UNAUTHORIZED');
    });

    it('a deactivated user → 401 on the very next request, not after the token TTL', async () => {
      const { userId: other, tokens: x } = await anotherAdmin('x');
      expect((await get(x.accessToken)).status).to.equal(200);
      const d = await h.send('POST', `/api/v1/users/${other}/deactivate`, undefined, admin.accessToken);
      expect(d.status, d.text).to.equal(200);
      expectEnvelope(await get(x.accessToken), 401, 'UNAUTHORIZED');
    });

    it('a demotion takes effect on the next request: the token still says ADMIN, the store does not', async () => {
      const { userId: other, tokens: y } = await anotherAdmin('y');
      const p = await h.send('PATCH', `/api/v1/users/${other}`, { roles: ['CHAMADOR'] }, admin.accessToken);
      expect(p.status, p.text).to.equal(200);
      expectEnvelope(await get(y.accessToken), 403, 'FORBIDDEN_ROLE');
    });

    it('in bearer mode an X-CSRF-Token that does not match the session → 403 on a mutation', async () => {
      const r = await call(url('/api/v1/auth/revoke'), {
        method: 'POST',
        headers: { ...bearerMutation(admin.accessToken), 'X-CSRF-Token': randomUUID() },
      });
      expectEnvelope(r, 403, 'CSRF_TOKEN_INVALID');
    });
  });

  describe('refresh', () => {
    const refresh = (token: string) => call(url('/api/v1/auth/refresh'), jsonPost({ refreshToken: token }));

    it('rotates: a new pair, the old session replaced by the new one', async () => {
      const first = await login(h.url, ADMIN_EMAIL, ADMIN_PASSWORD);
      const r = await refresh(first.refreshToken);
      expect(r.status, r.text).to.equal(200);
      const second = decodeTokens(r.json);
      expect(second.refreshToken).not.to.equal(first.refreshToken);
      expect(second.sessionId).not.to.equal(first.sessionId);
      expect(second.csrfToken).not.to.equal(first.csrfToken);
      const old = await sessionStore(h.svc.store.db.private).get(first.sessionId);
      expect(old).to.deep.include({ replacedBy: second.sessionId, revokeReason: 'ROTATED' });
      expect(old?.revokedAt).to.be.a('string');
      expect((await h.get('/api/v1/users', second.accessToken)).status).to.equal(200);
    });

    it('reuse of a replaced token → 401 COMPROMISED_SESSION and every session of the user revoked', async () => {
      const first = await login(h.url, ADMIN_EMAIL, ADMIN_PASSWORD);
      const elsewhere = await login(h.url, ADMIN_EMAIL, ADMIN_PASSWORD);
      const second = decodeTokens((await refresh(first.refreshToken)).json);
      expectEnvelope(await refresh(first.refreshToken), 401, 'COMPROMISED_SESSION');
      for (const token of [second.accessToken, elsewhere.accessToken]) {
        expectEnvelope(await h.get('/api/v1/users', token), 401, 'UNAUTHORIZED');
      }
      expectEnvelope(await refresh(second.refreshToken), 401, 'COMPROMISED_SESSION');
      const reused = await sessionStore(h.svc.store.db.private).get(first.sessionId);
      expect(reused?.suspectedCompromiseAt).to.be.a('string');
    });

    it('concurrent refreshes with one token: at most one succeeds', async () => {
      const first = await login(h.url, ADMIN_EMAIL, ADMIN_PASSWORD);
      const results = await Promise.all(Array.from({ length: 10 }, () => refresh(first.refreshToken)));
      const ok = results.filter((r) => r.status === 200).length;
      expect(ok).to.be.at.most(1);
      for (const r of results.filter((x) => x.status !== 200)) expect(r.status).to.equal(401);
      process.stdout.write(`      10 concurrent refreshes: ${ok} rotation won\n`);
    });

    it('an unknown refresh token → 401 UNAUTHORIZED', async () => {
      expectEnvelope(await refresh('A'.repeat(43)), 401, 'UNAUTHORIZED');
    });

    it("a refresh after the session's end → 401 SESSION_EXPIRED, even within the refresh token's 7 days", async () => {
      const first = await login(h.url, ADMIN_EMAIL, ADMIN_PASSWORD);
      now += 3_600_000;
      expectEnvelope(await refresh(first.refreshToken), 401, 'SESSION_EXPIRED');
      now += 604_800_000;
      expectEnvelope(await refresh(first.refreshToken), 401, 'SESSION_EXPIRED');
    });

    it("refreshes rotate tokens within the login's lifetime and never extend it", async () => {
      const loginAt = now;
      const end = new Date(loginAt + 3_600_000).toISOString();
      let tokens = await login(h.url, ADMIN_EMAIL, ADMIN_PASSWORD);
      // A client refreshing every 14 minutes, as an access token's life runs out.
      for (let i = 0; i < 4; i++) {
        now += 14 * 60_000;
        const r = await refresh(tokens.refreshToken);
        expect(r.status, r.text).to.equal(200);
        expect(r.json).to.deep.include({ sessionExpiresAt: end, refreshTokenExpiresAt: end });
        tokens = decodeTokens(r.json);
      }
      // 56 minutes after sign-in: the access token may live 4 more minutes, not 15.
      expect(tokens.expiresAt).to.equal(end);
      const claims = jwt.verify(tokens.accessToken, TEST_JWT_SECRET, {
        algorithms: ['HS256'],
        clockTimestamp: now / 1000,
      });
      expect(claims).to.deep.include({ exp: Date.parse(end) / 1000 });
      now = loginAt + 3_600_000;
      expectEnvelope(await refresh(tokens.refreshToken), 401, 'SESSION_EXPIRED');
      expectEnvelope(await h.get('/api/v1/users', tokens.accessToken), 401, 'SESSION_EXPIRED');
    });

    it('an expired access token of a live session stays 401 UNAUTHORIZED: a refresh cures it', async () => {
      const tokens = await login(h.url, ADMIN_EMAIL, ADMIN_PASSWORD);
      now += 15 * 60_000;
      expectEnvelope(await h.get('/api/v1/users', tokens.accessToken), 401, 'UNAUTHORIZED');
      expect((await refresh(tokens.refreshToken)).status).to.equal(200);
    });
  });

  describe('session validate', () => {
    it('answers ACTIVE with expiry and server time, then 401 SESSION_EXPIRED past the session lifetime', async () => {
      const tokens = await login(h.url, ADMIN_EMAIL, ADMIN_PASSWORD);
      const body = { sessionId: tokens.sessionId, clientTime: new Date(now + 2_000).toISOString() };
      const ok = await h.send('POST', '/api/v1/session/validate', body, tokens.accessToken);
      expect(ok.status, ok.text).to.equal(200);
      expect(ok.json).to.deep.equal({
        status: 'ACTIVE',
        expiresAt: new Date(now + 3_600_000).toISOString(),
        serverTime: new Date(now).toISOString(),
        clockSkewMs: 2_000,
      });
      // The access token (15 min) outlives a shortened session here: SESSION_TTL_SECONDS=3600, then 61 min later...
      now += 3_600_000;
      const late = jwt.sign(
        {
          userId: tokens.user.userId,
          roles: ['ADMIN'],
          primaryRole: 'ADMIN',
          sessionId: tokens.sessionId,
          csrfToken: tokens.csrfToken,
          iat: now / 1000 - 1,
          exp: now / 1000 + 600,
        },
        TEST_JWT_SECRET,
        { algorithm: 'HS256' },
      );
      const expired = await h.send('POST', '/api/v1/session/validate', body, late);
      expectEnvelope(expired, 401, 'SESSION_EXPIRED');
    });

    it("after the session's end, its own last access token gets 401 SESSION_EXPIRED from validate", async () => {
      const tokens = await login(h.url, ADMIN_EMAIL, ADMIN_PASSWORD);
      now += 50 * 60_000;
      const last = decodeTokens(
        (await call(url('/api/v1/auth/refresh'), jsonPost({ refreshToken: tokens.refreshToken }))).json,
      );
      now += 10 * 60_000;
      const r = await h.send(
        'POST',
        '/api/v1/session/validate',
        { sessionId: last.sessionId, clientTime: new Date(now).toISOString() },
        last.accessToken,
      );
      expectEnvelope(r, 401, 'SESSION_EXPIRED');
    });

    it("a session id that is not the token's → 401", async () => {
      const tokens = await login(h.url, ADMIN_EMAIL, ADMIN_PASSWORD);
      const r = await h.send(
        'POST',
        '/api/v1/session/validate',
        { sessionId: randomUUID(), clientTime: new Date(now).toISOString() },
        tokens.accessToken,
      );
      expectEnvelope(r, 401, 'UNAUTHORIZED');
    });
  });
});
