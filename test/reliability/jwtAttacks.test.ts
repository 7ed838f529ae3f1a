/**
 * Reliability row "jwt attacks": forged, tampered, expired and revoked access tokens against a
 * sample of routes (the first read and the first mutation of every protected auth class in the
 * registry). Criterion: every attempt is 401 in the envelope. A control shows the untampered token
 * passes authentication on every sampled route, so the 401s are the attacks' doing.
 *
 * Issuer and audience are not part of this service's tokens (decision 0007: the claims are userId,
 * roles, primaryRole, sessionId, csrfToken, iat, exp) and are not checked, so they are not attacked.
 */
import { createHmac, generateKeyPairSync, type KeyObject, randomUUID, sign } from 'node:crypto';
import { expect } from 'chai';
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import jwt from 'jsonwebtoken';
import { ErrorEnvelope } from '../../src/domain/errors.js';
import { routes } from '../../src/http/registry.js';
import { MUTATING_METHODS, type Route } from '../../src/http/route.js';
import {
  ADMIN_EMAIL,
  ADMIN_PASSWORD,
  createUser,
  decodeTokens,
  jsonPost,
  TEST_JWT_SECRET,
  type TokensWithRefresh,
  useJwtService,
} from '../support/auth.js';
import { call, type HttpResult } from '../support/http.js';
import { DEV_TOKENS, DEVICE_ID, mutationHeaders } from '../support/testService.js';
import { figure } from './figures.js';
import { exampleOf, fillPath, routeName } from './securitySupport.js';

const b64 = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

/** A token built by hand, so headers and signatures jsonwebtoken would refuse to write can be sent. */
const forge = (header: object, payload: object, signer: (input: string) => string): string => {
  const input = `${b64(header)}.${b64(payload)}`;
  return `${input}.${signer(input)}`;
};

const hmac =
  (algorithm: 'sha256' | 'sha384' | 'sha512', key: string | KeyObject) =>
  (input: string): string =>
    createHmac(algorithm, key).update(input).digest('base64url');

const asymmetric =
  (key: KeyObject, dsaEncoding?: 'ieee-p1363') =>
  (input: string): string =>
    sign(
      'sha256',
      new TextEncoder().encode(input),
      dsaEncoding === undefined ? key : { key, dsaEncoding },
    ).toString('base64url');

/** Replaces the character at `index` by another base64url character. */
const flipAt = (s: string, index: number): string => {
  const c = s.charAt(index);
  return `${s.slice(0, index)}${c === 'A' ? 'B' : 'A'}${s.slice(index + 1)}`;
};

const Claims = t.type({
  userId: t.string,
  roles: t.array(t.string),
  primaryRole: t.string,
  sessionId: t.string,
  csrfToken: t.string,
  iat: t.number,
  exp: t.number,
});
type Claims = t.TypeOf<typeof Claims>;

const claimsOf = (token: string): Claims => {
  const decoded = Claims.decode(jwt.decode(token));
  if (E.isLeft(decoded)) throw new Error(`not an access token: ${token}`);
  return decoded.right;
};

/**
 * The first read and the first mutation of every protected auth class. Sign-out and session
 * validation are left out of the sample: their handlers answer 401 themselves (by design), which
 * would blur what the control shows.
 */
const sampleRoutes = (): Route[] => {
  const out: Route[] = [];
  for (const auth of ['bearer', 'admin', 'cadastro', 'chamador', 'relatorios'] as const) {
    const ofClass = routes.filter((r) => r.auth === auth);
    const read = ofClass.find((r) => !MUTATING_METHODS.has(r.method));
    const write = ofClass.find(
      (r) =>
        MUTATING_METHODS.has(r.method) &&
        r.operationId !== 'revokeSession' &&
        r.operationId !== 'validateSession',
    );
    if (read !== undefined) out.push(read);
    if (write !== undefined) out.push(write);
  }
  return out;
};

const envelopeCode = (r: HttpResult): string | undefined => {
  const decoded = ErrorEnvelope.decode(r.json);
  return E.isRight(decoded) && r.headers.get('x-correlation-id') === decoded.right.error.correlationId
    ? decoded.right.error.code
    : undefined;
};

describe('reliability: JWT attack vectors', function () {
  this.timeout(120_000);
  let now: number;
  const service = useJwtService(() => {
    now = Date.now();
    return { env: { TRUST_PROXY: 'loopback', SESSION_TTL_SECONDS: '600' }, clock: () => new Date(now) };
  });
  let address = 0;
  const sample = sampleRoutes();
  const url = (p: string) => `${service.url}${p}`;

  const signIn = async (email: string, password: string): Promise<TokensWithRefresh> => {
    address += 1;
    const r = await call(
      url('/api/v1/auth/login'),
      jsonPost({ email, password }, { 'X-Forwarded-For': `10.88.0.${address}` }),
    );
    expect(r.status, r.text).to.equal(200);
    return decodeTokens(r.json);
  };

  /** One request to `route` with `token`: a valid body, fresh key, existing-looking ids. */
  const attempt = (route: Route, token: string): Promise<HttpResult> => {
    const body = route.body === undefined ? undefined : JSON.stringify(exampleOf(route.body) ?? {});
    return call(url(fillPath(route.path, () => randomUUID())), {
      method: route.method.toUpperCase(),
      headers: {
        ...(MUTATING_METHODS.has(route.method) ? mutationHeaders(token) : {}),
        Authorization: `Bearer ${token}`,
        'X-Device-Id': DEVICE_ID,
        'X-Forwarded-For': '10.88.1.1',
      },
      ...(body === undefined ? {} : { body }),
    });
  };

  it('answers 401 in the envelope to every forged, tampered, expired or revoked token', async () => {
    const started = Date.now();
    const admin = await signIn(ADMIN_EMAIL, ADMIN_PASSWORD);
    const adminToken = admin.accessToken;
    const base = claimsOf(adminToken);
    const password = 'an attack password 123';
    const newUser = async (label: string, roles: string[]) => {
      const email = `${label}-${randomUUID().slice(0, 8)}@chamada.test`;
      const userId = await createUser(service.url, adminToken, {
        email,
        displayName: label,
        roles,
        password,
      });
      return { userId, email, tokens: await signIn(email, password) };
    };
    const caller = await newUser('caller', ['CHAMADOR']);
    const nowS = () => Math.floor(now / 1000);
    const claims = (over: Record<string, unknown> = {}) => ({
      ...base,
      iat: nowS() - 5,
      exp: nowS() + 600,
      ...over,
    });
    const hs256 = (payload: object) =>
      forge({ alg: 'HS256', typ: 'JWT' }, payload, hmac('sha256', TEST_JWT_SECRET));
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const publicPem = rsa.publicKey.export({ type: 'spki', format: 'pem' }).toString();
    const [h, p, s] = adminToken.split('.');
    if (h === undefined || p === undefined || s === undefined) throw new Error('not a JWT');
    const [ch, , cs] = caller.tokens.accessToken.split('.');

    // Control: the untampered token passes authentication on every sampled route.
    const control: string[] = [];
    for (const route of sample) {
      const r = await attempt(route, adminToken);
      if (r.status === 401 || r.status >= 500)
        control.push(`${routeName(route)}: ${r.status} ${r.text.slice(0, 200)}`);
    }
    expect(control, `the genuine token must pass: ${control.join('\n')}`).to.deep.equal([]);

    const statics: ReadonlyArray<[string, () => string]> = [
      ['alg none, no signature', () => `${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims())}.`],
      ['alg None', () => `${b64({ alg: 'None', typ: 'JWT' })}.${b64(claims())}.`],
      ['alg NONE', () => `${b64({ alg: 'NONE', typ: 'JWT' })}.${b64(claims())}.`],
      ['alg nOnE', () => `${b64({ alg: 'nOnE', typ: 'JWT' })}.${b64(claims())}.`],
      ['alg none, genuine signature kept', () => `${b64({ alg: 'none', typ: 'JWT' })}.${p}.${s}`],
      ['alg none, no third segment', () => `${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims())}`],
      [
        'HS256 with a wrong key',
        () => jwt.sign(claims(), 'another-secret-another-secret-another-1', { algorithm: 'HS256' }),
      ],
      ['HS256 with an empty key', () => forge({ alg: 'HS256', typ: 'JWT' }, claims(), hmac('sha256', ''))],
      [
        'HS256 with the secret plus a character',
        () => forge({ alg: 'HS256', typ: 'JWT' }, claims(), hmac('sha256', `${TEST_JWT_SECRET}x`)),
      ],
      [
        'HS384 with the right secret',
        () => forge({ alg: 'HS384', typ: 'JWT' }, claims(), hmac('sha384', TEST_JWT_SECRET)),
      ],
      [
        'HS512 with the right secret',
        () => forge({ alg: 'HS512', typ: 'JWT' }, claims(), hmac('sha512', TEST_JWT_SECRET)),
      ],
      ['RS256 signed with an attacker key', () => jwt.sign(claims(), rsa.privateKey, { algorithm: 'RS256' })],
      [
        'confusion: RS256 header, HMAC keyed with the public key',
        () => forge({ alg: 'RS256', typ: 'JWT' }, claims(), hmac('sha256', publicPem)),
      ],
      [
        'confusion: HS256 header, HMAC keyed with the public key',
        () => forge({ alg: 'HS256', typ: 'JWT' }, claims(), hmac('sha256', publicPem)),
      ],
      [
        'RS256 with an embedded jwk',
        () =>
          forge(
            { alg: 'RS256', typ: 'JWT', jwk: rsa.publicKey.export({ format: 'jwk' }) },
            claims(),
            asymmetric(rsa.privateKey),
          ),
      ],
      [
        'ES256 signed with an attacker key',
        () => forge({ alg: 'ES256', typ: 'JWT' }, claims(), asymmetric(ec.privateKey, 'ieee-p1363')),
      ],
      [
        'kid pointing at /dev/null, empty key',
        () => forge({ alg: 'HS256', typ: 'JWT', kid: '../../../../dev/null' }, claims(), hmac('sha256', '')),
      ],
      ['expired one second ago', () => hs256(claims({ exp: nowS() - 1 }))],
      ['expiring this second', () => hs256(claims({ exp: nowS() }))],
      ['not valid before an hour from now', () => hs256(claims({ nbf: nowS() + 3600 }))],
      ['issued an hour in the future', () => hs256(claims({ iat: nowS() + 3600, exp: nowS() + 7200 }))],
      [
        'without exp',
        () => {
          const { exp: _e, ...rest } = claims();
          return hs256(rest);
        },
      ],
      ['exp as a string', () => hs256(claims({ exp: String(nowS() + 600) }))],
      [
        'tampered payload: CHAMADOR claims ADMIN',
        () =>
          `${ch}.${b64({ ...claimsOf(caller.tokens.accessToken), roles: ['ADMIN'], primaryRole: 'ADMIN' })}.${cs}`,
      ],
      ['tampered payload: another userId', () => `${h}.${b64({ ...base, userId: caller.userId })}.${s}`],
      [
        'tampered payload: exp pushed a year',
        () => `${h}.${b64({ ...base, exp: base.exp + 31_536_000 })}.${s}`,
      ],
      ['tampered header: kid added', () => `${b64({ alg: 'HS256', typ: 'JWT', kid: 'x' })}.${p}.${s}`],
      ['tampered signature: a middle character', () => `${h}.${p}.${flipAt(s, Math.floor(s.length / 2))}`],
      ['tampered signature: the first character', () => `${h}.${p}.${flipAt(s, 0)}`],
      ['tampered signature: the last character', () => `${h}.${p}.${flipAt(s, s.length - 1)}`],
      ['signature stripped', () => `${h}.${p}.`],
      ['two segments', () => `${h}.${p}`],
      ['four segments', () => `${h}.${p}.${s}.${s}`],
      [
        'signature in padded standard base64',
        () => `${h}.${p}.${Buffer.from(s, 'base64url').toString('base64')}`,
      ],
      [
        'payload in standard base64 (padded)',
        () => {
          // Bytes without `-`, `_` or padding encode identically in both alphabets: force a difference.
          const standard = Buffer.from(p, 'base64url').toString('base64');
          return `${h}.${standard === p ? `${p}=` : standard}.${s}`;
        },
      ],
      ['genuine key, roles not an array', () => hs256(claims({ roles: 'ADMIN' }))],
      [
        'genuine key, primaryRole not held',
        () => hs256(claims({ roles: ['CHAMADOR'], primaryRole: 'ADMIN' })),
      ],
      ['genuine key, empty userId', () => hs256(claims({ userId: '' }))],
      ['genuine key, a session that does not exist', () => hs256(claims({ sessionId: randomUUID() }))],
      [
        "genuine key, the admin's session under another userId",
        () => hs256(claims({ userId: caller.userId })),
      ],
      ['a development token in JWT mode', () => DEV_TOKENS.DEV_ADMIN_TOKEN],
      ['the refresh token as an access token', () => admin.refreshToken],
      ['the CSRF token as an access token', () => admin.csrfToken],
      ['garbage', () => 'x.y.z'],
    ];

    const results: Array<{ vector: string; route: string; status: number; code: string | undefined }> = [];
    const probe = async (vector: string, token: string) => {
      for (const route of sample) {
        const r = await attempt(route, token);
        results.push({ vector, route: routeName(route), status: r.status, code: envelopeCode(r) });
      }
    };
    for (const [vector, token] of statics) await probe(vector, token());

    // Lifecycle vectors: the token was genuine, then its session or user stopped being valid.
    const loggedOut = await newUser('logout', ['ADMIN']);
    const revoke = await call(url('/api/v1/auth/revoke'), {
      method: 'POST',
      headers: mutationHeaders(loggedOut.tokens.accessToken),
    });
    expect(revoke.status, revoke.text).to.equal(200);
    await probe('signed out (POST /auth/revoke), token reused', loggedOut.tokens.accessToken);

    const reset = await newUser('reset', ['ADMIN']);
    const r1 = await call(url(`/api/v1/users/${reset.userId}/reset-password`), {
      method: 'POST',
      headers: mutationHeaders(adminToken),
      body: JSON.stringify({ password: 'a brand new password 1' }),
    });
    expect(r1.status, r1.text).to.equal(200);
    await probe('password reset by an ADMIN, old token reused', reset.tokens.accessToken);

    const gone = await newUser('gone', ['ADMIN']);
    const d = await call(url(`/api/v1/users/${gone.userId}/deactivate`), {
      method: 'POST',
      headers: mutationHeaders(adminToken),
    });
    expect(d.status, d.text).to.equal(200);
    await probe('user deactivated, token reused', gone.tokens.accessToken);

    const stolen = await newUser('stolen', ['ADMIN']);
    const refresh = (token: string) =>
      call(
        url('/api/v1/auth/refresh'),
        jsonPost({ refreshToken: token }, { 'X-Forwarded-For': '10.88.2.1' }),
      );
    const rotated = await refresh(stolen.tokens.refreshToken);
    expect(rotated.status, rotated.text).to.equal(200);
    const reused = await refresh(stolen.tokens.refreshToken);
    expect(reused.status, reused.text).to.equal(401);
    await probe(
      'refresh token reused (compromise), new access token',
      decodeTokens(rotated.json).accessToken,
    );

    // Time passes: the session (600 s here) ends before a token minted just before its end does.
    const late = await newUser('late', ['ADMIN']);
    now += 540_000;
    const lateToken = hs256({ ...claimsOf(late.tokens.accessToken), iat: nowS(), exp: nowS() + 900 });
    now += 61_000;
    await probe('session past its lifetime, token still unexpired', lateToken);
    now += 900_000;
    await probe('access token past its 15 minutes (clock moved)', adminToken);

    const wrong = results.filter((r) => r.status !== 401 || r.code === undefined);
    const vectors = new Set(results.map((r) => r.vector)).size;
    const codes = [...new Set(results.map((r) => r.code ?? 'none'))].join(', ');
    figure(
      'jwt attacks',
      `${vectors} vectors × ${sample.length} routes = ${results.length} requests in ${((Date.now() - started) / 1000).toFixed(1)} s; ` +
        `${results.length - wrong.length}/${results.length} answered 401 in the envelope (codes: ${codes}); iss/aud not used by the service`,
    );
    expect(
      wrong,
      wrong.map((w) => `${w.vector} on ${w.route}: ${w.status} ${w.code ?? 'no envelope'}`).join('\n'),
    ).to.deep.equal([]);
  });
});
