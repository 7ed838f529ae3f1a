/** Refresh sessions (`auth_refresh_sessions`) and the authentication endpoints' shapes. */
import * as t from 'io-ts';
import { boundedArray, boundedString, IsoInstant, object, ShortText, Text, Uuid } from './codec.js';
import { PERMISSIONS, PermissionC } from './principal.js';
import { Email, MAX_USER_ROLES } from './user.js';

/** Why a session stopped: rotation keeps its access tokens usable until they expire; the others do not. */
export const RevokeReason = t.keyof({
  ROTATED: null,
  LOGOUT: null,
  COMPROMISED: null,
  USER_DEACTIVATED: null,
  PASSWORD_RESET: null,
});
export type RevokeReason = t.TypeOf<typeof RevokeReason>;

export const SessionDoc = t.type({
  _id: t.string,
  _rev: t.string,
  docType: t.literal('session'),
  sessionId: t.string,
  userId: t.string,
  refreshTokenHash: t.string,
  csrfToken: t.string,
  createdAt: t.string,
  /** The session's own lifetime (SESSION_TTL): access tokens bound to it stop working after. */
  expiresAt: t.string,
  /** The refresh token's lifetime (REFRESH_TOKEN_TTL). */
  refreshExpiresAt: t.string,
  deviceId: t.union([t.string, t.null]),
  revokedAt: t.union([t.string, t.null]),
  revokeReason: t.union([RevokeReason, t.null]),
  replacedBy: t.union([t.string, t.null]),
  suspectedCompromiseAt: t.union([t.string, t.null]),
});
export type SessionDoc = t.TypeOf<typeof SessionDoc>;

export const LoginBody = object('LoginBody', {
  email: boundedString(3, 254),
  password: boundedString(1, 256),
});

export const RefreshBody = object(
  'RefreshBody',
  {},
  { refreshToken: boundedString(20, 200) },
  {
    description: 'Bearer mode: the refresh token. Cookie mode: omit it; the httpOnly cookie carries it.',
  },
);

export const SessionUser = object(
  'SessionUser',
  {
    userId: Uuid,
    email: Email,
    displayName: Text,
    role: ShortText,
    roles: boundedArray(ShortText, MAX_USER_ROLES),
    primaryRole: ShortText,
    permissions: boundedArray(PermissionC, PERMISSIONS.length),
  },
  {},
  {
    description:
      "`permissions`: what the user's roles grant as they stood at sign-in or the last refresh (a custom " +
      "role's included), so a client offers only what the user may do; the server still decides every call.",
  },
);

export const TokenPair = object(
  'TokenPair',
  {
    accessToken: Text,
    csrfToken: Uuid,
    sessionId: Uuid,
    expiresAt: IsoInstant,
    accessTokenExpiresAt: IsoInstant,
    sessionExpiresAt: IsoInstant,
    refreshTokenExpiresAt: IsoInstant,
    user: SessionUser,
  },
  { refreshToken: Text },
  {
    description:
      '`expiresAt` and `accessTokenExpiresAt` are the access token expiry (both names of the contract). ' +
      '`refreshToken` is present in bearer mode only; cookie mode sets it as an httpOnly cookie.',
  },
);
export type TokenPair = t.TypeOf<typeof TokenPair>;

export const Revoked = object('Revoked', { revoked: t.literal(true), sessionId: Uuid });

export const ValidateSessionBody = object('ValidateSessionBody', {
  sessionId: ShortText,
  clientTime: IsoInstant,
});

export const SessionStatus = object(
  'SessionStatus',
  { status: t.literal('ACTIVE'), expiresAt: IsoInstant, serverTime: IsoInstant, clockSkewMs: t.number },
  {},
  { description: '`clockSkewMs` is clientTime minus serverTime, so a device can correct its clock.' },
);
