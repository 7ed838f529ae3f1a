import type { KeyObject } from 'node:crypto';
import jwt from 'jsonwebtoken';

export interface AccessClaims {
  readonly userId: string;
  readonly roles: ReadonlyArray<string>;
  readonly primaryRole: string;
  readonly sessionId: string;
  readonly csrfToken: string;
}

/**
 * HS256 with the prebuilt key; `iat` and `exp` come from the injected clock, not jsonwebtoken's.
 * `expiresAt` is already capped at the session's end (`sessionWindow`); JWT times are whole seconds,
 * so it is rounded down: the token never outlives the session by a fraction.
 */
export const signAccessToken = (
  key: KeyObject,
  claims: AccessClaims,
  now: Date,
  expiresAt: Date,
): { token: string; expiresAt: Date } => {
  const iat = Math.floor(now.getTime() / 1000);
  const exp = Math.floor(expiresAt.getTime() / 1000);
  const token = jwt.sign({ ...claims, roles: [...claims.roles], iat, exp }, key, { algorithm: 'HS256' });
  return { token, expiresAt: new Date(exp * 1000) };
};

/**
 * The payload of an access token whose signature is good, expired or not (throws otherwise, as
 * `jsonwebtoken` does): an expired token bound to a session that has ended is told SESSION_EXPIRED.
 */
export const verifyIgnoringExpiry = (token: string, key: KeyObject): unknown =>
  jwt.verify(token, key, { algorithms: ['HS256'], ignoreExpiration: true });

/** Whether a verification failed only because the token has expired. */
export const isTokenExpired = (e: unknown): boolean => e instanceof jwt.TokenExpiredError;
