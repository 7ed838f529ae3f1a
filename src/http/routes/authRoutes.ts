/** Login, refresh, revoke and session validation. */
import * as E from 'fp-ts/lib/Either.js';
import type { Issued } from '../../auth/sessionService.js';
import type { SessionMode } from '../../config/config.js';
import { isUuid } from '../../domain/codec.js';
import { apiError } from '../../domain/errors.js';
import {
  LoginBody,
  RefreshBody,
  Revoked,
  SessionStatus,
  TokenPair,
  ValidateSessionBody,
} from '../../domain/session.js';
import { LOGIN_POLICY, REFRESH_POLICY } from '../../rules/rateLimit.js';
import { defineRoute } from '../route.js';

export const REFRESH_COOKIE = 'chamada_refresh';
export const REFRESH_COOKIE_PATH = '/api/v1/auth';

const refreshCookie = (value: string, maxAgeSeconds: number): string =>
  `${REFRESH_COOKIE}=${value}; Path=${REFRESH_COOKIE_PATH}; Max-Age=${maxAgeSeconds}; HttpOnly; Secure; SameSite=Strict`;

/** Bearer mode hands the refresh token over in the body; cookie mode in an httpOnly cookie only. */
const tokenReply = (issued: Issued, mode: SessionMode) =>
  mode === 'bearer'
    ? { body: { ...issued.pair, refreshToken: issued.refreshToken } }
    : {
        headers: { 'Set-Cookie': refreshCookie(issued.refreshToken, issued.refreshTtlSeconds) },
        body: issued.pair,
      };

const cookieValue = (header: string | undefined, name: string): string | undefined => {
  for (const part of (header ?? '').split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k === name) return v.join('=');
  }
  return undefined;
};

const EXEMPT =
  'public and rate-limited; a stored response would keep live tokens in the ledger, and a retry simply signs in again.';

export const loginRoute = defineRoute({
  operationId: 'login',
  method: 'post',
  path: '/api/v1/auth/login',
  auth: 'none',
  summary: 'Sign in with email and password',
  description:
    'Failure is 401 with one message whether or not the email exists, after the same work. ' +
    'Limited to 5 requests per 60 s per client IP (every request counts).',
  tags: ['auth'],
  idempotency: { exempt: EXEMPT },
  rateLimit: { scope: 'login', policy: LOGIN_POLICY },
  body: LoginBody,
  response: {
    status: 200,
    description: 'Tokens and the user.',
    codec: TokenPair,
    headers: { 'Set-Cookie': 'cookie mode: the refresh token' },
  },
  errors: ['UNAUTHORIZED', 'RATE_LIMITED'],
  handler: async ({ body, deps, headers }) => {
    // Public route: X-Device-Id is optional here, and only a UUID is kept on the session.
    const device = headers['x-device-id'];
    const deviceId = typeof device === 'string' && isUuid(device) ? device.toLowerCase() : null;
    const issued = await deps.auth.sessions.login(body.email, body.password, deviceId);
    return E.map((i: Issued) => tokenReply(i, deps.config.sessionMode))(issued);
  },
});

export const refreshRoute = defineRoute({
  operationId: 'refreshSession',
  method: 'post',
  path: '/api/v1/auth/refresh',
  auth: 'none',
  summary: 'Rotate the refresh token for a new pair',
  description:
    'Each use rotates: the old session is marked revoked and replaced. Presenting a revoked or replaced token ' +
    'revokes every session of the user and answers 401 COMPROMISED_SESSION. Cookie mode: the `chamada_refresh` ' +
    "cookie plus `X-CSRF-Token`. The new pair keeps the login's end (SESSION_TTL_SECONDS from sign-in): a refresh " +
    'never prolongs a session, and after its end refresh answers 401 SESSION_EXPIRED (sign in again). ' +
    'Limited to 10 requests per 60 s per client IP.',
  tags: ['auth'],
  idempotency: { exempt: EXEMPT },
  rateLimit: { scope: 'refresh', policy: REFRESH_POLICY },
  body: RefreshBody,
  response: {
    status: 200,
    description: 'A new pair.',
    codec: TokenPair,
    headers: { 'Set-Cookie': 'cookie mode: the new refresh token' },
  },
  errors: ['UNAUTHORIZED', 'COMPROMISED_SESSION', 'SESSION_EXPIRED', 'RATE_LIMITED', 'CSRF_TOKEN_INVALID'],
  handler: async ({ body, deps, headers, receivedAt }) => {
    const mode = deps.config.sessionMode;
    const token = mode === 'bearer' ? body.refreshToken : cookieValue(headers.cookie, REFRESH_COOKIE);
    if (token === undefined) {
      return E.left(
        apiError('VALIDATION_FAILED', 'The refresh token is missing.', {
          issues: [
            {
              path: mode === 'bearer' ? 'body.refreshToken' : `cookies.${REFRESH_COOKIE}`,
              message: 'required',
            },
          ],
        }),
      );
    }
    const csrf = headers['x-csrf-token'];
    const issued = await deps.auth.sessions.refresh(
      token,
      mode === 'cookie' ? { csrfToken: typeof csrf === 'string' ? csrf : '' } : undefined,
      receivedAt,
    );
    return E.map((i: Issued) => tokenReply(i, mode))(issued);
  },
});

export const revokeRoute = defineRoute({
  operationId: 'revokeSession',
  method: 'post',
  path: '/api/v1/auth/revoke',
  auth: 'bearer',
  summary: 'Sign out: revoke this session and its refresh token',
  tags: ['auth'],
  response: {
    status: 200,
    description: 'Revoked; the access token stops working at once.',
    codec: Revoked,
    headers: { 'Set-Cookie': 'cookie mode: clears the refresh cookie' },
  },
  handler: async ({ principal, deps }) => {
    if (principal === null) return E.left(apiError('UNAUTHORIZED'));
    const revoked = await deps.auth.sessions.revoke(principal);
    const clear = deps.config.sessionMode === 'cookie' ? { 'Set-Cookie': refreshCookie('', 0) } : undefined;
    return E.map((r: { sessionId: string }) => ({
      ...(clear === undefined ? {} : { headers: clear }),
      body: { revoked: true as const, sessionId: r.sessionId },
    }))(revoked);
  },
});

export const validateSessionRoute = defineRoute({
  operationId: 'validateSession',
  method: 'post',
  path: '/api/v1/session/validate',
  auth: 'bearer',
  summary: 'Is this session still active?',
  description:
    '401 SESSION_EXPIRED once the session is past its lifetime (SESSION_TTL_SECONDS, 24 hours by default, counted ' +
    'from sign-in; refreshing does not extend it). An access token never outlives its session.',
  tags: ['auth'],
  body: ValidateSessionBody,
  response: { status: 200, description: 'The session is active.', codec: SessionStatus },
  errors: ['SESSION_EXPIRED'],
  handler: async ({ principal, body, deps }) => {
    if (principal === null) return E.left(apiError('UNAUTHORIZED'));
    const status = await deps.auth.sessions.validate(principal, body.sessionId, body.clientTime);
    return E.map((s: { status: 'ACTIVE'; expiresAt: string; serverTime: string; clockSkewMs: number }) => ({
      body: s,
    }))(status);
  },
});

export const authRoutes = [loginRoute, refreshRoute, revokeRoute, validateSessionRoute];
