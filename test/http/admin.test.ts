/** Users and roles administration, rate limits, cookie mode and the seed, black-box in JWT mode. */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import { EventDoc } from '../../src/domain/event.js';
import { PERMISSIONS } from '../../src/domain/principal.js';
import {
  ADMIN_EMAIL,
  ADMIN_PASSWORD,
  bearerMutation,
  createAndSignIn,
  createUser,
  decodeTokens,
  jsonPost,
  jwtEnv,
  login,
  loginAttempt,
  type TokensWithRefresh,
  useJwtService,
} from '../support/auth.js';
import { harnessOf, TOKENS, useService } from '../support/harness.js';
import { call, expectEnvelope } from '../support/http.js';
import { attendanceProbeRoute, probeRoutes } from '../support/probeRoutes.js';
import {
  authHeaders,
  DEV_TOKENS,
  DEVICE_ID,
  startTestService,
  type TestService,
  twoInstancesOnOneCouch,
} from '../support/testService.js';

const UserC = t.type({
  userId: t.string,
  email: t.string,
  roles: t.array(t.string),
  primaryRole: t.string,
  status: t.string,
  role: t.string,
});
const decodeUser = (json: unknown) => {
  const d = UserC.decode(json);
  if (E.isLeft(d)) throw new Error(`not a user: ${JSON.stringify(json)}`);
  return d.right;
};

describe('users and roles administration', function () {
  this.timeout(60_000);
  const h = useJwtService({ routes: probeRoutes([attendanceProbeRoute]) }, 'test');
  let admin: TokensWithRefresh;
  const url = (p: string) => `${h.url}${p}`;
  const send = (method: string, path: string, body?: unknown, token = admin.accessToken) =>
    h.send(method, path, body, token);

  beforeEach(async () => {
    admin = await login(h.url, ADMIN_EMAIL, ADMIN_PASSWORD);
  });
  /** User `x`: x@chamada.test, named X, password "x password 123". */
  const userNamed = (x: string, roles: string[]) => ({
    email: `${x}@chamada.test`,
    displayName: x.toUpperCase(),
    roles,
    password: `${x} password 123`,
  });
  const signedInUser = (x: string, roles: string[]) =>
    createAndSignIn(h.url, admin.accessToken, userNamed(x, roles));

  describe('users', () => {
    it('creates a user (201, Location), lists it, and refuses a second user with the same email in any case', async () => {
      const r = await send('POST', '/api/v1/users', {
        email: 'Ana@Chamada.test',
        displayName: 'Ana',
        roles: ['CHAMADOR', 'RELATORIOS'],
        password: 'ana password 12',
      });
      expect(r.status, r.text).to.equal(201);
      const ana = decodeUser(r.json);
      expect(r.headers.get('location')).to.equal(`/api/v1/users/${ana.userId}`);
      expect(ana).to.deep.include({
        roles: ['CHAMADOR', 'RELATORIOS'],
        primaryRole: 'CHAMADOR',
        role: 'CHAMADOR',
        status: 'ACTIVE',
      });
      expect(r.text).not.to.contain('password');
      const list = await h.get('/api/v1/users', admin.accessToken);
      expect(JSON.stringify(list.json)).to.contain(ana.userId);
      const dup = await send('POST', '/api/v1/users', {
        email: 'ana@chamada.TEST',
        displayName: 'Ana 2',
        roles: ['CHAMADOR'],
        password: 'ana password 12',
      });
      expectEnvelope(dup, 409, 'CONFLICT');
    });

    it('refuses unknown roles, a primary role outside the roles, short passwords and read-only fields', async () => {
      const base = userNamed('b', ['CHAMADOR']);
      expectEnvelope(
        await send('POST', '/api/v1/users', { ...base, roles: ['NOPE'] }),
        400,
        'VALIDATION_FAILED',
      );
      expectEnvelope(
        await send('POST', '/api/v1/users', { ...base, primaryRole: 'ADMIN' }),
        400,
        'VALIDATION_FAILED',
      );
      expectEnvelope(
        await send('POST', '/api/v1/users', { ...base, password: 'short' }),
        400,
        'VALIDATION_FAILED',
      );
      expectEnvelope(
        await send('POST', '/api/v1/users', { ...base, status: 'ACTIVE' }),
        400,
        'VALIDATION_FAILED',
      );
      const created = await createUser(h.url, admin.accessToken, base);
      expectEnvelope(
        await send('PATCH', `/api/v1/users/${created}`, { userId: randomUUID() }),
        400,
        'VALIDATION_FAILED',
      );
      expectEnvelope(
        await send('PATCH', `/api/v1/users/${created}`, { passwordHash: 'pbkdf2:00:00' }),
        400,
        'VALIDATION_FAILED',
      );
    });

    it('only an ADMIN manages users: CHAMADOR → 403', async () => {
      const { tokens: caller } = await signedInUser('c', ['CHAMADOR']);
      expectEnvelope(await h.get('/api/v1/users', caller.accessToken), 403, 'FORBIDDEN_ROLE');
    });

    it('the last active ADMIN can be neither demoted nor deactivated; with a second ADMIN both work', async () => {
      const me = admin.user.userId;
      const demote = await send('PATCH', `/api/v1/users/${me}`, { roles: ['CHAMADOR'] });
      expect(expectEnvelope(demote, 409, 'CONFLICT').details).to.deep.include({
        reason: 'LAST_ACTIVE_ADMIN',
      });
      expectEnvelope(await send('POST', `/api/v1/users/${me}/deactivate`), 409, 'CONFLICT');
      const other = await createUser(h.url, admin.accessToken, userNamed('d', ['ADMIN']));
      expect((await send('PATCH', `/api/v1/users/${me}`, { roles: ['CHAMADOR'] })).status).to.equal(200);
      const d = await login(h.url, 'd@chamada.test', 'd password 123');
      expectEnvelope(
        await send('POST', `/api/v1/users/${other}/deactivate`, undefined, d.accessToken),
        409,
        'CONFLICT',
      );
    });

    it('two ADMINs deactivating each other at once leave one ADMIN standing', async () => {
      const { userId: other, tokens: e } = await signedInUser('e', ['ADMIN']);
      const [a, b] = await Promise.all([
        send('POST', `/api/v1/users/${other}/deactivate`),
        send('POST', `/api/v1/users/${admin.user.userId}/deactivate`, undefined, e.accessToken),
      ]);
      expect([a.status, b.status].sort()).to.deep.equal([200, 409]);
      const users = await h.svc.stores.users.list();
      expect(users.filter((u) => u.status === 'ACTIVE' && u.roles.includes('ADMIN'))).to.have.length(1);
    });

    it("deactivation is soft, revokes the user's sessions, and a second one → 409", async () => {
      const { userId: id, tokens: f } = await signedInUser('f', ['CHAMADOR']);
      const r = await send('POST', `/api/v1/users/${id}/deactivate`, { reason: 'left the team' });
      expect(decodeUser(r.json).status).to.equal('DEACTIVATED');
      expectEnvelope(
        await call(url('/api/v1/auth/refresh'), jsonPost({ refreshToken: f.refreshToken })),
        401,
        'COMPROMISED_SESSION',
      );
      expectEnvelope(await send('POST', `/api/v1/users/${id}/deactivate`), 409, 'CONFLICT');
      expect(await h.svc.stores.users.get(id)).to.deep.include({ status: 'DEACTIVATED' });
    });

    it("reset-password sets the ADMIN's chosen password and revokes every session of the user", async () => {
      const { userId: id, tokens: g } = await signedInUser('g', ['CHAMADOR']);
      const r = await send('POST', `/api/v1/users/${id}/reset-password`, {
        password: 'a brand new password',
      });
      expect(r.status, r.text).to.equal(200);
      expect(r.json).to.deep.include({ userId: id, sessionsRevoked: 1 });
      expectEnvelope(
        await call(url('/api/v1/auth/revoke'), { method: 'POST', headers: bearerMutation(g.accessToken) }),
        401,
        'UNAUTHORIZED',
      );
      expectEnvelope(await loginAttempt(h.url, 'g@chamada.test', 'g password 123'), 401, 'UNAUTHORIZED');
      expect((await loginAttempt(h.url, 'g@chamada.test', 'a brand new password')).status).to.equal(200);
    });

    it('an unknown user → 404', async () => {
      expectEnvelope(
        await send('PATCH', `/api/v1/users/${randomUUID()}`, { displayName: 'x' }),
        404,
        'NOT_FOUND',
      );
    });

    it('every change appends an immutable user event', async () => {
      const id = await createUser(h.url, admin.accessToken, userNamed('h', ['CHAMADOR']));
      await send('PATCH', `/api/v1/users/${id}`, { displayName: 'Helena' });
      await send('POST', `/api/v1/users/${id}/reset-password`, { password: 'another password 1' });
      await send('POST', `/api/v1/users/${id}/deactivate`);
      const all = await h.svc.store.db.events.allDocs({ include_docs: true });
      const events = all.rows.flatMap((r) => {
        const d = EventDoc.decode(r.doc);
        return E.isRight(d) && d.right.subjectId === id ? [d.right] : [];
      });
      expect(events.map((e) => e.type).sort()).to.deep.equal([
        'USER_CREATED',
        'USER_DEACTIVATED',
        'USER_PASSWORD_RESET',
        'USER_UPDATED',
      ]);
      expect(events.every((e) => e.actor.userId === admin.user.userId)).to.equal(true);
      expect(JSON.stringify(events)).not.to.contain('pbkdf2');
    });
  });

  describe('roles', () => {
    it('lists the four system roles, which cannot be changed or deleted', async () => {
      const r = await h.get('/api/v1/roles', admin.accessToken);
      expect(JSON.stringify(r.json)).to.contain('"name":"ADMIN"').and.contain('"name":"CADASTRO"');
      expectEnvelope(await send('DELETE', '/api/v1/roles/ADMIN'), 409, 'CONFLICT');
      expectEnvelope(await send('PATCH', '/api/v1/roles/CHAMADOR', { permissions: [] }), 409, 'CONFLICT');
    });

    it('a custom role with `attendance` opens attendance routes, and nothing ADMIN-only', async () => {
      const role = await send('POST', '/api/v1/roles', {
        name: 'PORTEIRO',
        display_name: 'Porteiro',
        permissions: ['attendance'],
      });
      expect(role.status, role.text).to.equal(201);
      expect(role.json).to.deep.include({ name: 'PORTEIRO', permissions: ['attendance'], is_system: 0 });
      const { tokens: p } = await signedInUser('p', ['PORTEIRO']);
      // The login answer says what the role grants, so a client offers only what the user may do.
      expect(p.user.permissions).to.deep.equal(['attendance']);
      expect(admin.user.permissions).to.have.members([...PERMISSIONS]);
      expect((await h.get('/api/v1/_probe/attendance', p.accessToken)).status).to.equal(200);
      expectEnvelope(await h.get('/api/v1/_probe/chamador', p.accessToken), 403, 'FORBIDDEN_ROLE');
      expectEnvelope(await h.get('/api/v1/users', p.accessToken), 403, 'FORBIDDEN_ROLE');
    });

    it('refuses a duplicate name, unknown permissions, and deleting a role someone holds', async () => {
      expect(
        (
          await send('POST', '/api/v1/roles', {
            name: 'MONITOR',
            display_name: 'Monitor',
            permissions: ['reports'],
          })
        ).status,
      ).to.equal(201);
      expectEnvelope(
        await send('POST', '/api/v1/roles', { name: 'MONITOR', display_name: 'x' }),
        409,
        'CONFLICT',
      );
      expectEnvelope(
        await send('POST', '/api/v1/roles', {
          name: 'OTHER',
          display_name: 'x',
          permissions: ['everything'],
        }),
        400,
        'VALIDATION_FAILED',
      );
      await createUser(h.url, admin.accessToken, userNamed('m', ['MONITOR']));
      expectEnvelope(await send('DELETE', '/api/v1/roles/MONITOR'), 409, 'CONFLICT');
      expect(
        (await send('POST', '/api/v1/roles', { name: 'UNUSED', display_name: 'Unused' })).status,
      ).to.equal(201);
      const del = await send('DELETE', '/api/v1/roles/UNUSED');
      expect(del.status, del.text).to.equal(200);
      expectEnvelope(await send('DELETE', '/api/v1/roles/UNUSED'), 404, 'NOT_FOUND');
    });
  });
});

describe('login and refresh rate limits', function () {
  this.timeout(60_000);
  const h = useService({ env: jwtEnv() }, 'test');

  const attempt = (headers: Record<string, string> = {}) =>
    call(
      `${h.url}/api/v1/auth/login`,
      jsonPost({ email: 'nobody@chamada.test', password: 'wrong password' }, headers),
    );

  it('the 6th login within 60 s → 429 RATE_LIMITED with Retry-After; every request counts', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 5; i += 1) statuses.push((await attempt()).status);
    expect(statuses).to.deep.equal([401, 401, 401, 401, 401]);
    const sixth = await attempt();
    expectEnvelope(sixth, 429, 'RATE_LIMITED');
    const retryAfter = Number(sixth.headers.get('retry-after'));
    expect(retryAfter).to.be.within(1, 60);
    expect(sixth.headers.get('ratelimit-policy')).to.equal('"login";q=5;w=60');
    expect(sixth.headers.get('ratelimit')).to.equal(`"login";r=0;t=${retryAfter}`);
    // A malformed body counts too: the limit comes before validation.
    const malformed = await call(`${h.url}/api/v1/auth/login`, jsonPost({ nope: true }));
    expectEnvelope(malformed, 429, 'RATE_LIMITED');
  });

  it('a forged X-Forwarded-For does not reset the counter (no trusted proxy configured)', async () => {
    for (let i = 0; i < 5; i += 1) await attempt({ 'X-Forwarded-For': `198.51.100.${i}` });
    expectEnvelope(await attempt({ 'X-Forwarded-For': '198.51.100.77' }), 429, 'RATE_LIMITED');
  });

  it('refresh allows 10 per 60 s, then 429', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 11; i += 1) {
      statuses.push(
        (await call(`${h.url}/api/v1/auth/refresh`, jsonPost({ refreshToken: 'B'.repeat(43) }))).status,
      );
    }
    expect(statuses.slice(0, 10).every((s) => s === 401)).to.equal(true);
    expect(statuses[10]).to.equal(429);
  });
});

describe('the per-device limit shared by two instances on one CouchDB-protocol server', function () {
  this.timeout(60_000);
  const instances = twoInstancesOnOneCouch({
    RATE_LIMIT_REQUESTS: '4',
    RATE_LIMIT_WINDOW_SECONDS: '3600',
    RATE_LIMIT_EXCHANGE_MS: '100',
  });

  it('what one instance counted, the other refuses once they have exchanged (within a second)', async () => {
    const { a, b } = instances();
    const users = (svc: TestService) => harnessOf(() => svc).get('/api/v1/users');
    for (let i = 0; i < 4; i += 1) expect((await users(a)).status).to.equal(200);
    // Several exchange periods: A has written its counts, B has read them. Alone, B would allow four.
    await new Promise((r) => setTimeout(r, 600));
    const refused = await users(b);
    expectEnvelope(refused, 429, 'RATE_LIMITED');
    expect(Number(refused.headers.get('retry-after'))).to.be.greaterThan(0);
  });
});

describe('rate limit of every authenticated route, per principal and device', function () {
  this.timeout(60_000);
  let now: number;
  const h = useService(() => {
    now = Date.parse('2026-11-29T09:00:00Z');
    return {
      env: { RATE_LIMIT_REQUESTS: '3', RATE_LIMIT_WINDOW_SECONDS: '60' },
      clock: () => new Date(now),
    };
  }, 'test');

  const OTHER_DEVICE = '0d6a4d3c-5b2e-4f1a-9c8b-7a6f5e4d3c2b';
  const users = (token: string = DEV_TOKENS.DEV_ADMIN_TOKEN, device: string = DEVICE_ID) =>
    call(`${h.url}/api/v1/users`, { headers: { ...authHeaders(token), 'X-Device-Id': device } });

  it('answers with RateLimit and RateLimit-Policy, then 429 with Retry-After past the quota, every route sharing it', async () => {
    const first = await users();
    expect(first.status, first.text).to.equal(200);
    expect(first.headers.get('ratelimit-policy')).to.equal('"device";q=3;w=60');
    expect(first.headers.get('ratelimit')).to.equal('"device";r=2;t=60');
    now += 20_000;
    // Another route, the same bucket; a refusal by role counts too.
    const second = await h.get('/api/v1/students');
    expect(second.headers.get('ratelimit')).to.equal('"device";r=1;t=40');
    expect((await users()).headers.get('ratelimit')).to.equal('"device";r=0;t=40');
    const refused = await users();
    expectEnvelope(refused, 429, 'RATE_LIMITED');
    // The refusal counts (four in this minute): in the next minute those four weigh as the share of it
    // the sliding window still overlaps, 4 × (60 − t) / 60, so one more fits once that is 2, at +30 s
    // into it: 40 s + 30 s from now.
    expect(refused.headers.get('retry-after')).to.equal('70');
    expect(refused.headers.get('ratelimit')).to.equal('"device";r=0;t=70');
    now += 70_000;
    // Replication is an authenticated route too, counted in the same bucket; obeying Retry-After is enough.
    const replication = await h.get('/api/v1/replication/roster/');
    expect(replication.status, replication.text).to.equal(200);
    expect(replication.headers.get('ratelimit')).to.equal('"device";r=0;t=30');
    now += 20_000;
    // 50 s into the minute the previous one weighs 4 × 10 / 60: a second request of this minute fits.
    const later = await users();
    expect(later.status, later.text).to.equal(200);
    expect(later.headers.get('ratelimit')).to.equal('"device";r=0;t=10');
  });

  it('another device of the same user, and another user on the same device, have buckets of their own', async () => {
    for (let i = 0; i < 4; i += 1) await users();
    expect((await users()).status).to.equal(429);
    expect((await users(DEV_TOKENS.DEV_ADMIN_TOKEN, OTHER_DEVICE)).status).to.equal(200);
    const caller = await h.get('/api/v1/students', TOKENS.CHAMADOR);
    expect(caller.status, caller.text).to.equal(200);
  });

  it('RATE_LIMIT_REQUESTS=0 turns it off (load generators): no 429, no RateLimit fields', async () => {
    const off = await startTestService({ env: { RATE_LIMIT_REQUESTS: '0' } });
    try {
      for (let i = 0; i < 5; i += 1) {
        const r = await harnessOf(() => off).get('/api/v1/users');
        expect(r.status).to.equal(200);
        expect(r.headers.get('ratelimit-policy')).to.equal(null);
      }
    } finally {
      await off.dispose();
    }
  });

  it('an anonymous or device-less request is refused before it is counted (no principal and device to count)', async () => {
    expectEnvelope(await call(`${h.url}/api/v1/users`), 401, 'UNAUTHORIZED');
    const first = await users();
    expect(first.headers.get('ratelimit')).to.equal('"device";r=2;t=60');
  });
});

describe('cookie session mode', function () {
  this.timeout(60_000);
  const h = useJwtService({ env: { SESSION_MODE: 'cookie' } }, 'test');

  const cookieOf = (setCookie: string | null): string => (setCookie ?? '').split(';')[0] ?? '';

  it('login sets an httpOnly, Secure, SameSite=Strict refresh cookie and leaves the token out of the body', async () => {
    const r = await call(
      `${h.url}/api/v1/auth/login`,
      jsonPost({ email: ADMIN_EMAIL, password: ADMIN_PASSWORD }),
    );
    expect(r.status).to.equal(200);
    const setCookie = r.headers.get('set-cookie') ?? '';
    // The cookie lives as long as the session (24 h), not the refresh token's 7 days: it could not be used after.
    expect(setCookie).to.match(
      /^chamada_refresh=[A-Za-z0-9_-]{43}; Path=\/api\/v1\/auth; Max-Age=86400; HttpOnly; Secure; SameSite=Strict$/,
    );
    expect(r.json).not.to.have.property('refreshToken');
  });

  it("refresh needs the cookie and the session's X-CSRF-Token; mutations need X-CSRF-Token", async () => {
    const r = await call(
      `${h.url}/api/v1/auth/login`,
      jsonPost({ email: ADMIN_EMAIL, password: ADMIN_PASSWORD }),
    );
    const cookie = cookieOf(r.headers.get('set-cookie'));
    const { csrfToken, accessToken } = decodeTokens({ ...(r.json as object), refreshToken: 'unused' });
    expectEnvelope(
      await call(`${h.url}/api/v1/auth/refresh`, jsonPost({}, { Cookie: cookie })),
      403,
      'CSRF_TOKEN_INVALID',
    );
    const ok = await call(
      `${h.url}/api/v1/auth/refresh`,
      jsonPost({}, { Cookie: cookie, 'X-CSRF-Token': csrfToken }),
    );
    expect(ok.status, ok.text).to.equal(200);
    expect(cookieOf(ok.headers.get('set-cookie'))).not.to.equal(cookie);
    const { csrfToken: newCsrf, accessToken: newAccess } = decodeTokens({
      ...(ok.json as object),
      refreshToken: 'unused',
    });
    expect(accessToken).not.to.equal(newAccess);
    expectEnvelope(
      await call(`${h.url}/api/v1/auth/revoke`, { method: 'POST', headers: bearerMutation(newAccess) }),
      403,
      'CSRF_TOKEN_INVALID',
    );
    const revoke = await call(`${h.url}/api/v1/auth/revoke`, {
      method: 'POST',
      headers: { ...bearerMutation(newAccess), 'X-CSRF-Token': newCsrf },
    });
    expect(revoke.status, revoke.text).to.equal(200);
    expect(revoke.headers.get('set-cookie')).to.match(/^chamada_refresh=; .*Max-Age=0/);
  });
});

describe('seed in production', () => {
  it('is unavailable: 404', async () => {
    const svc = await startTestService({ env: jwtEnv({ NODE_ENV: 'production' }) });
    try {
      expectEnvelope(await call(`${svc.url}/api/v1/_seed`, { method: 'POST' }), 404, 'NOT_FOUND');
    } finally {
      await svc.dispose();
    }
  });
});
