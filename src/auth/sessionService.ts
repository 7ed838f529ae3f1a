/**
 * Login, refresh with rotation and reuse detection, revocation, validation, and the per-request check
 * that makes revocation and deactivation effective at once. IO around the pure rules of
 * `rules/sessions.ts`.
 */
import type { KeyObject } from 'node:crypto';
import * as E from 'fp-ts/lib/Either.js';
import { hashPassword, verifyAgainstDummy, verifyPassword } from '../crypto/password.js';
import { hashToken, newCsrfToken, newRefreshToken, newSessionId } from '../crypto/tokens.js';
import { type ApiError, apiError } from '../domain/errors.js';
import type { Principal } from '../domain/principal.js';
import type { SessionDoc, TokenPair } from '../domain/session.js';
import type { UserDoc } from '../domain/user.js';
import { decideAccess, decideRefresh, type SessionLifetimes, sessionWindow } from '../rules/sessions.js';
import type { RoleStore } from '../store/roles.js';
import type { NewSession, SessionStore } from '../store/sessions.js';
import type { UserStore } from '../store/users.js';
import { signAccessToken } from './accessTokens.js';

export type SessionSettings = SessionLifetimes;

export interface SessionServiceDeps {
  readonly users: UserStore;
  readonly sessions: SessionStore;
  readonly roles: RoleStore;
  readonly key: KeyObject;
  readonly clock: () => Date;
  readonly settings: SessionSettings;
}

/** Tokens issued by login or refresh; the refresh token goes in the body or a cookie per mode. */
export interface Issued {
  readonly pair: Omit<TokenPair, 'refreshToken'>;
  readonly refreshToken: string;
  /** What is left of the refresh token's life: a cookie must not outlive it (nor the session). */
  readonly refreshTtlSeconds: number;
}

const loginFailed = (): ApiError =>
  apiError('UNAUTHORIZED', 'The email or password is wrong, or the account is not active.');
const refreshFailed = (): ApiError =>
  apiError('UNAUTHORIZED', 'The refresh token is not valid; sign in again.');

export interface SessionService {
  login(email: string, password: string, deviceId: string | null): Promise<E.Either<ApiError, Issued>>;
  /** In cookie mode `csrf` carries the X-CSRF-Token header, which must match the session's. */
  /** `receivedAt`: when the request arrived (a rotation after it was a concurrent double send). */
  refresh(
    refreshToken: string,
    csrf?: { readonly csrfToken: string },
    receivedAt?: Date,
  ): Promise<E.Either<ApiError, Issued>>;
  revoke(principal: Principal): Promise<E.Either<ApiError, { sessionId: string }>>;
  validate(
    principal: Principal,
    sessionId: string,
    clientTime: string,
  ): Promise<
    E.Either<
      ApiError,
      {
        status: 'ACTIVE';
        expiresAt: string;
        serverTime: string;
        clockSkewMs: number;
      }
    >
  >;
  /** The per-request check behind every JWT: session live, user active, roles as they are now. */
  checkPrincipal(principal: Principal): Promise<E.Either<ApiError, Principal>>;
  /** Exposed for seeding and user administration, which hash with the same parameters. */
  hashPassword(password: string): Promise<string>;
}

export const sessionService = (deps: SessionServiceDeps): SessionService => {
  const { settings } = deps;

  /** `sessionEnd`: the end of the login a refresh continues; a login starts a new one. */
  const issue = async (
    user: UserDoc,
    deviceId: string | null,
    sessionEnd?: Date,
  ): Promise<{ session: NewSession; issued: Issued }> => {
    const now = deps.clock();
    const window = sessionWindow(now, settings, sessionEnd);
    const refreshToken = newRefreshToken();
    const session: NewSession = {
      sessionId: newSessionId(),
      userId: user.userId,
      refreshTokenHash: hashToken(refreshToken),
      csrfToken: newCsrfToken(),
      createdAt: now.toISOString(),
      expiresAt: window.sessionExpiresAt.toISOString(),
      refreshExpiresAt: window.refreshExpiresAt.toISOString(),
      deviceId,
      revokedAt: null,
      revokeReason: null,
      replacedBy: null,
      suspectedCompromiseAt: null,
    };
    const access = signAccessToken(
      deps.key,
      {
        userId: user.userId,
        roles: user.roles,
        primaryRole: user.primaryRole,
        sessionId: session.sessionId,
        csrfToken: session.csrfToken,
      },
      now,
      window.accessExpiresAt,
    );
    return {
      session,
      issued: {
        refreshToken,
        refreshTtlSeconds: Math.max(
          0,
          Math.floor((window.refreshExpiresAt.getTime() - now.getTime()) / 1000),
        ),
        pair: {
          accessToken: access.token,
          csrfToken: session.csrfToken,
          sessionId: session.sessionId,
          expiresAt: access.expiresAt.toISOString(),
          accessTokenExpiresAt: access.expiresAt.toISOString(),
          sessionExpiresAt: session.expiresAt,
          refreshTokenExpiresAt: session.refreshExpiresAt,
          user: {
            userId: user.userId,
            email: user.email,
            displayName: user.displayName,
            role: user.primaryRole,
            roles: user.roles,
            primaryRole: user.primaryRole,
            permissions: await deps.roles.permissionsOf(user.roles),
          },
        },
      },
    };
  };

  const service: SessionService = {
    hashPassword,

    async login(email, password, deviceId) {
      const user = await deps.users.findByEmail(email);
      if (user === undefined) {
        // Same work as a real check, so the answer's timing does not tell whether the email exists.
        await verifyAgainstDummy(password);
        return E.left(loginFailed());
      }
      const passwordOk = await verifyPassword(password, user.passwordHash);
      if (!passwordOk || user.status !== 'ACTIVE') return E.left(loginFailed());
      const { session, issued } = await issue(user, deviceId);
      await deps.sessions.create(session);
      return E.right(issued);
    },

    async refresh(refreshToken, csrf, receivedAt) {
      const session = await deps.sessions.findByRefreshHash(hashToken(refreshToken));
      if (session === undefined) return E.left(refreshFailed());
      // A cookie arrives with any cross-site request; the header proves the caller read our response.
      if (csrf !== undefined && csrf.csrfToken !== session.csrfToken)
        return E.left(apiError('CSRF_TOKEN_INVALID'));
      const now = deps.clock();
      const decision = decideRefresh(session, now, receivedAt ?? now);
      if (decision === 'reuse') {
        await deps.sessions.revoke(session, 'COMPROMISED', now.toISOString());
        await deps.sessions.revokeAllForUser(session.userId, 'COMPROMISED', now.toISOString());
        return E.left(apiError('COMPROMISED_SESSION'));
      }
      if (decision === 'session-expired') return E.left(apiError('SESSION_EXPIRED'));
      if (decision === 'race' || decision === 'expired') return E.left(refreshFailed());
      const user = await deps.users.get(session.userId);
      if (user === undefined || user.status !== 'ACTIVE') return E.left(refreshFailed());
      // The new link keeps the login's end: refreshing rotates tokens, it never prolongs the session.
      const { session: next, issued } = await issue(user, session.deviceId, new Date(session.expiresAt));
      const rotated = await deps.sessions.rotate(session, next, now.toISOString());
      // Another refresh with this token won the compare-and-swap a moment ago: a benign double send
      // (a later, sequential reuse of the same token is caught above as a compromise).
      if (rotated === 'RACE') return E.left(refreshFailed());
      return E.right(issued);
    },

    async revoke(principal) {
      if (principal.sessionId === undefined) {
        return E.left(apiError('VALIDATION_FAILED', 'Development tokens have no session to revoke.'));
      }
      const session = await deps.sessions.get(principal.sessionId);
      if (session === undefined) return E.left(apiError('UNAUTHORIZED'));
      await deps.sessions.revoke(session, 'LOGOUT', deps.clock().toISOString());
      return E.right({ sessionId: session.sessionId });
    },

    async validate(principal, sessionId, clientTime) {
      if (principal.sessionId === undefined || principal.sessionId !== sessionId.toLowerCase()) {
        return E.left(apiError('UNAUTHORIZED', 'The session id does not belong to this access token.'));
      }
      const session = await deps.sessions.get(sessionId);
      if (session === undefined) return E.left(apiError('UNAUTHORIZED'));
      const now = deps.clock();
      if (now.getTime() >= Date.parse(session.expiresAt)) return E.left(apiError('SESSION_EXPIRED'));
      return E.right({
        status: 'ACTIVE' as const,
        expiresAt: session.expiresAt,
        serverTime: now.toISOString(),
        clockSkewMs: Date.parse(clientTime) - now.getTime(),
      });
    },

    async checkPrincipal(principal) {
      if (principal.sessionId === undefined) return E.left(apiError('UNAUTHORIZED'));
      const [session, user]: [SessionDoc | undefined, UserDoc | undefined] = await Promise.all([
        deps.sessions.get(principal.sessionId),
        deps.users.get(principal.userId),
      ]);
      switch (decideAccess(principal.userId, session, user?.status, deps.clock())) {
        case 'expired':
          return E.left(apiError('SESSION_EXPIRED'));
        case 'unknown-session':
        case 'revoked':
        case 'inactive-user':
          return E.left(apiError('UNAUTHORIZED', 'The session was revoked or the account is not active.'));
        case 'ok':
          break;
      }
      if (user === undefined) return E.left(apiError('UNAUTHORIZED'));
      // Roles as they are now: a demotion takes effect on the next request, not at token expiry.
      return E.right({
        ...principal,
        roles: user.roles,
        primaryRole: user.primaryRole,
        permissions: await deps.roles.permissionsOf(user.roles),
      });
    },
  };
  return service;
};
