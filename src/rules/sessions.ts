/**
 * Session rules, pure. A session is one link of a login's refresh chain; every link carries the
 * login's end (SESSION_TTL from the sign-in), so rotating tokens never makes a session last longer.
 * - Refresh: a live, unexpired session rotates; a revoked or replaced one means the token was stolen
 *   or replayed (reuse → every session of the user is revoked); past the refresh lifetime it expired.
 *   Except when a refresh with the same token rotated it after this one arrived: a client that sent
 *   the same refresh twice at once (a retry, two tabs) is racing itself, not being robbed (decision
 *   0013). A token presented after its rotation, however soon after, is reuse.
 * - Access: the token's session must belong to the token's user, be unexpired, and not revoked, except
 *   by rotation (a rotated session's access tokens live out their 15 minutes, so requests in flight
 *   during a refresh do not fail); the user must be ACTIVE.
 */
import type { RevokeReason } from '../domain/session.js';

export interface SessionFacts {
  readonly userId: string;
  readonly revokedAt: string | null;
  readonly revokeReason: RevokeReason | null;
  readonly replacedBy: string | null;
  readonly expiresAt: string;
  readonly refreshExpiresAt: string;
}

export type RefreshDecision = 'rotate' | 'race' | 'reuse' | 'session-expired' | 'expired';

export interface SessionLifetimes {
  readonly accessTokenTtlSeconds: number;
  readonly refreshTokenTtlSeconds: number;
  readonly sessionTtlSeconds: number;
}

export interface SessionWindow {
  /** The login's absolute end: a refresh inherits it, so it is never moved. */
  readonly sessionExpiresAt: Date;
  readonly refreshExpiresAt: Date;
  readonly accessExpiresAt: Date;
}

const earlier = (a: Date, b: Date): Date => (a.getTime() <= b.getTime() ? a : b);
const plusSeconds = (d: Date, s: number): Date => new Date(d.getTime() + s * 1000);

/**
 * The times of a new link of the chain. `sessionEnd` is the chain's end when refreshing, absent at
 * login. Nothing issued outlives the session: a refresh token or access token that did would be a
 * way round SESSION_TTL (and a client could not tell when signing in again becomes necessary).
 */
export const sessionWindow = (now: Date, ttl: SessionLifetimes, sessionEnd?: Date): SessionWindow => {
  const sessionExpiresAt = sessionEnd ?? plusSeconds(now, ttl.sessionTtlSeconds);
  return {
    sessionExpiresAt,
    refreshExpiresAt: earlier(plusSeconds(now, ttl.refreshTokenTtlSeconds), sessionExpiresAt),
    accessExpiresAt: earlier(plusSeconds(now, ttl.accessTokenTtlSeconds), sessionExpiresAt),
  };
};

/**
 * `receivedAt`: when this refresh reached the server. A rotation stamped after it was made by a
 * refresh that ran alongside this one.
 */
export const decideRefresh = (session: SessionFacts, now: Date, receivedAt: Date = now): RefreshDecision => {
  if (session.revokedAt !== null || session.replacedBy !== null) {
    const rotatedAt =
      session.revokeReason === 'ROTATED' && session.revokedAt !== null ? Date.parse(session.revokedAt) : NaN;
    return rotatedAt > receivedAt.getTime() ? 'race' : 'reuse';
  }
  if (now.getTime() >= Date.parse(session.expiresAt)) return 'session-expired';
  if (now.getTime() >= Date.parse(session.refreshExpiresAt)) return 'expired';
  return 'rotate';
};

export type AccessDecision = 'ok' | 'unknown-session' | 'revoked' | 'expired' | 'inactive-user';

export const decideAccess = (
  tokenUserId: string,
  session: SessionFacts | undefined,
  userStatus: 'ACTIVE' | 'DEACTIVATED' | undefined,
  now: Date,
): AccessDecision => {
  if (session === undefined || session.userId !== tokenUserId) return 'unknown-session';
  if (session.revokedAt !== null && session.revokeReason !== 'ROTATED') return 'revoked';
  if (now.getTime() >= Date.parse(session.expiresAt)) return 'expired';
  if (userStatus !== 'ACTIVE') return 'inactive-user';
  return 'ok';
};

/**
 * The last-active-admin safeguard: the set of active ADMINs after a change must not be empty.
 * `remove` is the user losing ADMIN or being deactivated; `add` one gaining it.
 */
export const nextActiveAdmins = (
  current: ReadonlyArray<string>,
  change: { readonly remove?: string; readonly add?: string },
): ReadonlyArray<string> | 'LAST_ADMIN' => {
  const next = new Set(current);
  if (change.remove !== undefined) next.delete(change.remove);
  if (change.add !== undefined) next.add(change.add);
  if (next.size === 0) return 'LAST_ADMIN';
  return [...next].sort();
};
