/**
 * HS256 verification of access tokens, remembered by the token's exact text.
 *
 * Every authenticated request verified its bearer token afresh (base64url, JSON, an HMAC-SHA-256):
 * about 3 % of the main thread in the check-in benchmark, for a token a client sends hundreds of times
 * in its fifteen minutes. A token's signature check depends on its text and the process's key alone,
 * so its outcome can be remembered; what depends on time is checked again on every use, against the
 * caller's clock, exactly as `jsonwebtoken` checks it (`exp`, `nbf`). Revocation, deactivation and
 * demotion are not decided here: the session check that follows verification runs on every request,
 * cached or not (decision 0013).
 *
 * Only successful verifications are remembered: a forged, mistyped or expired token is refused by
 * `jsonwebtoken` on each attempt, as before.
 */
import type { KeyObject } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { boundedCache } from '../lib/boundedCache.js';

export interface VerifiedTokens {
  /**
   * The token's verified payload, as `jwt.verify` returns it with `algorithms: ['HS256']` and
   * `clockTimestamp`; throws as it does when the token is invalid or not valid at that time.
   */
  verify(token: string, clockTimestamp: number): unknown;
  readonly size: () => number;
}

interface Remembered {
  readonly payload: object;
  /** Seconds; jsonwebtoken refuses a payload whose `exp` or `nbf` is not a number, so these are. */
  readonly exp: number | undefined;
  readonly nbf: number | undefined;
}

const numberAt = (payload: object, name: string): number | undefined => {
  const value: unknown = Reflect.get(payload, name);
  return typeof value === 'number' ? value : undefined;
};

/** The same errors `jsonwebtoken` throws, so a caller cannot tell a remembered token from a fresh one. */
const stillValid = (r: Remembered, clockTimestamp: number): void => {
  if (r.nbf !== undefined && r.nbf > clockTimestamp)
    throw new jwt.NotBeforeError('jwt not active', new Date(r.nbf * 1000));
  if (r.exp !== undefined && clockTimestamp >= r.exp)
    throw new jwt.TokenExpiredError('jwt expired', new Date(r.exp * 1000));
};

/**
 * `maxEntries` bounds memory (a few hundred bytes a token); the oldest is let go first, and a token
 * found expired is let go at once.
 */
export const verifiedTokens = (key: KeyObject, maxEntries = 2_000): VerifiedTokens => {
  const known = boundedCache<Remembered>({ maxEntries });
  return {
    verify(token, clockTimestamp) {
      const hit = known.get(token);
      if (hit !== undefined) {
        try {
          stillValid(hit, clockTimestamp);
        } catch (e) {
          known.delete(token);
          throw e;
        }
        // A copy, as a fresh verification would return: callers may keep or change what they get.
        return structuredClone(hit.payload);
      }
      const payload: unknown = jwt.verify(token, key, { algorithms: ['HS256'], clockTimestamp });
      // A string payload (a token whose body is not JSON) is decoded by nobody downstream; not kept.
      if (typeof payload !== 'object' || payload === null) return payload;
      known.set(token, {
        payload: structuredClone(payload),
        exp: numberAt(payload, 'exp'),
        nbf: numberAt(payload, 'nbf'),
      });
      return payload;
    },
    size: () => known.size(),
  };
};
