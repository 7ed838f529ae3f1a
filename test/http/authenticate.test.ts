import { expect } from 'chai';
import * as E from 'fp-ts/lib/Either.js';
import jwt from 'jsonwebtoken';
import { devAuthenticator, jwtAuthenticator, jwtKey } from '../../src/http/authenticate.js';

const SECRET = 'a-test-secret-of-at-least-32-bytes!!';
const NOW = new Date('2026-11-25T12:00:00Z');
const nowSeconds = Math.floor(NOW.getTime() / 1000);

const base = {
  userId: 'u-1',
  roles: ['CHAMADOR', 'RELATORIOS'],
  primaryRole: 'CHAMADOR',
  sessionId: 's-1',
  csrfToken: 'c-1',
  iat: nowSeconds - 10,
  exp: nowSeconds + 900,
};

const sign = (claims: object, secret = SECRET, algorithm: jwt.Algorithm = 'HS256') =>
  jwt.sign(claims, secret, { algorithm });

const unsigned = (claims: object, alg = 'none') =>
  `${Buffer.from(JSON.stringify({ alg, typ: 'JWT' })).toString('base64url')}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.`;

describe('JWT authenticator', () => {
  const auth = jwtAuthenticator({ key: jwtKey(SECRET), clock: () => NOW });

  it('accepts a valid HS256 token and reads roles and primary role', async () => {
    const r = await auth.authenticate(sign(base));
    expect(r).to.deep.equal(
      E.right({
        userId: 'u-1',
        roles: ['CHAMADOR', 'RELATORIOS'],
        primaryRole: 'CHAMADOR',
        permissions: ['attendance', 'students.search', 'reports'],
        sessionId: 's-1',
        csrfToken: 'c-1',
        authMode: 'jwt',
      }),
    );
  });

  it('accepts an older token with a single `role` claim', async () => {
    const { roles: _r, primaryRole: _p, ...rest } = base;
    const r = await auth.authenticate(sign({ ...rest, role: 'ADMIN' }));
    expect(E.isRight(r) && r.right.roles).to.deep.equal(['ADMIN']);
  });

  const { exp: _exp, ...withoutExp } = base;
  const rejected: ReadonlyArray<[string, string]> = [
    ['alg none', unsigned(base)],
    ['HS512', sign(base, SECRET, 'HS512')],
    [
      'an RS256 header over an HMAC signature',
      (() => {
        const [, payload, sig] = sign(base).split('.');
        return `${Buffer.from(JSON.stringify({ alg: 'RS256', typ: 'JWT' })).toString('base64url')}.${payload}.${sig}`;
      })(),
    ],
    ['a stripped signature', `${sign(base).split('.').slice(0, 2).join('.')}.`],
    ['a wrong key', sign(base, 'another-secret-of-at-least-32-bytes!')],
    ['an expired token', sign({ ...base, exp: nowSeconds - 1 })],
    ['a token without exp', sign(withoutExp)],
    ['a token issued in the future', sign({ ...base, iat: nowSeconds + 3600 })],
    [
      'tampered claims',
      (() => {
        const [h, , s] = sign(base).split('.');
        return `${h}.${Buffer.from(JSON.stringify({ ...base, roles: ['ADMIN'] })).toString('base64url')}.${s}`;
      })(),
    ],
    ['a primary role the token does not hold', sign({ ...base, primaryRole: 'ADMIN' })],
    ['a token without sessionId', sign({ ...base, sessionId: undefined })],
    ['garbage', 'not.a.jwt'],
  ];
  for (const [what, token] of rejected) {
    it(`rejects ${what} with 401 UNAUTHORIZED`, async () => {
      const r = await auth.authenticate(token);
      expect(E.isLeft(r) && r.left.code).to.equal('UNAUTHORIZED');
    });
  }

  it('asks the principal check (sessions, users) and honours its refusal', async () => {
    const checked = jwtAuthenticator({
      key: jwtKey(SECRET),
      clock: () => NOW,
      checkPrincipal: async () =>
        E.left({ _tag: 'ApiError', code: 'UNAUTHORIZED', status: 401, message: 'revoked' }),
    });
    const r = await checked.authenticate(sign(base));
    expect(E.isLeft(r) && r.left.message).to.equal('revoked');
  });
});

describe('JWT authenticator on a token it has verified before', () => {
  it('refuses it once it expires, and asks the principal check on every use', async () => {
    let now = NOW;
    let checks = 0;
    let revoked = false;
    const auth = jwtAuthenticator({
      key: jwtKey(SECRET),
      clock: () => now,
      checkPrincipal: async (p) => {
        checks += 1;
        return revoked
          ? E.left({ _tag: 'ApiError', code: 'UNAUTHORIZED', status: 401, message: 'revoked' })
          : E.right(p);
      },
    });
    const token = sign(base);
    expect(E.isRight(await auth.authenticate(token))).to.equal(true);
    expect(E.isRight(await auth.authenticate(token))).to.equal(true);
    expect(checks, 'the session is checked on each request, remembered or not').to.equal(2);
    revoked = true;
    const afterRevocation = await auth.authenticate(token);
    expect(E.isLeft(afterRevocation) && afterRevocation.left.message).to.equal('revoked');
    revoked = false;
    now = new Date((base.exp + 1) * 1000);
    const expired = await auth.authenticate(token);
    // Expired inside a live session: a plain 401 a refresh cures. The check runs once more to tell
    // this apart from a token that expired with its session (SESSION_EXPIRED, decision 0013).
    expect(E.isLeft(expired) && expired.left.code).to.equal('UNAUTHORIZED');
    expect(checks).to.equal(4);
    const sessionEnded = jwtAuthenticator({
      key: jwtKey(SECRET),
      clock: () => now,
      checkPrincipal: async () =>
        E.left({ _tag: 'ApiError', code: 'SESSION_EXPIRED', status: 401, message: 'ended' }),
    });
    const ended = await sessionEnded.authenticate(token);
    expect(E.isLeft(ended) && ended.left.code).to.equal('SESSION_EXPIRED');
  });

  it('still refuses a token whose claims were changed after a verified one was remembered', async () => {
    const auth = jwtAuthenticator({ key: jwtKey(SECRET), clock: () => NOW });
    const token = sign(base);
    expect(E.isRight(await auth.authenticate(token))).to.equal(true);
    const [h, , sig] = token.split('.');
    const tampered = `${h}.${Buffer.from(JSON.stringify({ ...base, roles: ['ADMIN'], primaryRole: 'ADMIN' })).toString('base64url')}.${sig}`;
    const r = await auth.authenticate(tampered);
    expect(E.isLeft(r) && r.left.code).to.equal('UNAUTHORIZED');
  });
});

describe('development authenticator', () => {
  const auth = devAuthenticator({ admin: 'admin-token-0123456789', caller: 'caller-token-0123456789' });

  it('maps each fixed token to its fixed user and role', async () => {
    const admin = await auth.authenticate('admin-token-0123456789');
    const caller = await auth.authenticate('caller-token-0123456789');
    expect(E.isRight(admin) && admin.right).to.deep.include({ userId: 'dev-admin', primaryRole: 'ADMIN' });
    expect(E.isRight(caller) && caller.right).to.deep.include({
      userId: 'dev-caller',
      primaryRole: 'CHAMADOR',
    });
  });

  it('rejects a token that is not configured, and a prefix of a real one', async () => {
    expect(E.isLeft(await auth.authenticate('reports-token-0123456789'))).to.equal(true);
    expect(E.isLeft(await auth.authenticate('admin-token'))).to.equal(true);
  });

  it('rejects a valid JWT: development mode knows only its fixed tokens', async () => {
    expect(E.isLeft(await auth.authenticate(sign(base)))).to.equal(true);
  });
});
