/**
 * Authenticators turn a bearer token into a principal. Development mode maps four fixed tokens to
 * fixed users; JWT mode verifies an HS256 access token. Each returns the error to send, never throws.
 */
import { createSecretKey, type KeyObject } from 'node:crypto';
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import { isTokenExpired, verifyIgnoringExpiry } from '../auth/accessTokens.js';
import { verifiedTokens } from '../auth/verifiedTokens.js';
import type { DevTokens } from '../config/config.js';
import { equalBytes, sha256 } from '../crypto/bytes.js';
import { type ApiError, apiError } from '../domain/errors.js';
import {
  isSystemRole,
  type Permission,
  type Principal,
  SYSTEM_ROLE_PERMISSIONS,
} from '../domain/principal.js';

export interface Authenticator {
  readonly mode: 'dev' | 'jwt';
  authenticate(token: string): Promise<E.Either<ApiError, Principal>>;
}

/** What the system roles among `roles` grant; custom roles are resolved by the session check. */
export const permissionsOf = (roles: ReadonlyArray<string>): Permission[] => [
  ...new Set(roles.flatMap((r) => (isSystemRole(r) ? SYSTEM_ROLE_PERMISSIONS[r] : []))),
];

const invalidToken = (): ApiError =>
  apiError('UNAUTHORIZED', 'The access token is missing, invalid or expired.');

export const devAuthenticator = (tokens: DevTokens): Authenticator => {
  const table: ReadonlyArray<{ readonly digest: Uint8Array; readonly principal: Principal }> = [
    { token: tokens.admin, userId: 'dev-admin', role: 'ADMIN' },
    { token: tokens.caller, userId: 'dev-caller', role: 'CHAMADOR' },
    { token: tokens.reports, userId: 'dev-reports', role: 'RELATORIOS' },
    { token: tokens.cadastro, userId: 'dev-cadastro', role: 'CADASTRO' },
  ].flatMap(({ token, userId, role }) =>
    token === undefined
      ? []
      : [
          {
            digest: sha256(token),
            principal: {
              userId,
              roles: [role],
              primaryRole: role,
              permissions: permissionsOf([role]),
              authMode: 'dev' as const,
            },
          },
        ],
  );
  return {
    mode: 'dev',
    async authenticate(token) {
      // Compare digests of equal length so timing reveals neither the token nor how much matched.
      const presented = sha256(token);
      let found: Principal | undefined;
      for (const entry of table) {
        if (equalBytes(entry.digest, presented)) found = entry.principal;
      }
      return found === undefined ? E.left(invalidToken()) : E.right(found);
    },
  };
};

const NonEmpty = t.refinement(t.string, (s) => s.length > 0, 'NonEmptyString');

/** Claims of an access token; tokens minted before the multi-role change carry `role` alone. */
export const AccessTokenClaims = t.intersection([
  t.type({ userId: NonEmpty, sessionId: NonEmpty, csrfToken: NonEmpty, iat: t.number, exp: t.number }),
  t.union([
    t.intersection([t.type({ roles: t.array(NonEmpty) }), t.partial({ primaryRole: NonEmpty })]),
    t.type({ role: NonEmpty }),
  ]),
]);
export type AccessTokenClaims = t.TypeOf<typeof AccessTokenClaims>;

export const principalFromClaims = (claims: AccessTokenClaims): Principal | undefined => {
  const roles = 'roles' in claims ? claims.roles : [claims.role];
  const primaryRole = 'roles' in claims ? (claims.primaryRole ?? roles[0]) : claims.role;
  if (primaryRole === undefined || !roles.includes(primaryRole)) return undefined;
  return {
    userId: claims.userId,
    roles,
    primaryRole,
    permissions: permissionsOf(roles),
    sessionId: claims.sessionId,
    csrfToken: claims.csrfToken,
    authMode: 'jwt',
  };
};

export const jwtKey = (secret: string): KeyObject => createSecretKey(secret, 'utf8');

export interface JwtAuthenticatorOptions {
  readonly key: KeyObject;
  readonly clock: () => Date;
  /** Checks that the token's session and user are still live (revocation and deactivation). */
  readonly checkPrincipal?: (principal: Principal) => Promise<E.Either<ApiError, Principal>>;
}

export const jwtAuthenticator = (options: JwtAuthenticatorOptions): Authenticator => {
  // A token's signature is checked once per process; its times and its session on every request.
  const tokens = verifiedTokens(options.key);
  /**
   * An access token's `exp` is capped at its session's end, so at the end of a session the client
   * holds an expired token. Genuine (signature checked) and bound to a session that has ended, it is
   * answered SESSION_EXPIRED: the client must sign in again, and refreshing will not help. Any other
   * expired token stays the plain 401 that a refresh cures.
   */
  const expiredToken = async (token: string): Promise<E.Either<ApiError, Principal>> => {
    if (options.checkPrincipal === undefined) return E.left(invalidToken());
    let payload: unknown;
    try {
      payload = verifyIgnoringExpiry(token, options.key);
    } catch {
      return E.left(invalidToken());
    }
    const decoded = AccessTokenClaims.decode(payload);
    const principal = E.isRight(decoded) ? principalFromClaims(decoded.right) : undefined;
    if (principal === undefined) return E.left(invalidToken());
    const checked = await options.checkPrincipal(principal);
    return E.isLeft(checked) && checked.left.code === 'SESSION_EXPIRED' ? checked : E.left(invalidToken());
  };
  return {
    mode: 'jwt',
    async authenticate(token) {
      let payload: unknown;
      try {
        payload = tokens.verify(token, Math.floor(options.clock().getTime() / 1000));
      } catch (e) {
        return isTokenExpired(e) ? expiredToken(token) : E.left(invalidToken());
      }
      const decoded = AccessTokenClaims.decode(payload);
      if (E.isLeft(decoded)) return E.left(invalidToken());
      const now = options.clock().getTime() / 1000;
      // A token "issued" in the future was minted with a wrong clock or forged; refuse it.
      if (decoded.right.iat > now + 60) return E.left(invalidToken());
      const principal = principalFromClaims(decoded.right);
      if (principal === undefined) return E.left(invalidToken());
      return options.checkPrincipal === undefined ? E.right(principal) : options.checkPrincipal(principal);
    },
  };
};

/**
 * Print agents' tokens (0054) beside the users' authenticator: a token in the agents' form is checked
 * against the agent's stored digest, any other goes to `users`. An agent's principal has no role, so
 * only the `printAgent` routes take it (`authorize`).
 */
export const withPrintAgents = (
  users: Authenticator,
  agents: {
    readonly isAgentToken: (token: string) => boolean;
    readonly authenticate: (token: string) => Promise<Principal | undefined>;
  },
): Authenticator => ({
  mode: users.mode,
  async authenticate(token) {
    if (!agents.isAgentToken(token)) return users.authenticate(token);
    const principal = await agents.authenticate(token);
    return principal === undefined ? E.left(invalidToken()) : E.right(principal);
  },
});
