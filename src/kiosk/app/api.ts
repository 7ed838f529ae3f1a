/**
 * The few REST calls the kiosk makes online: sign in, refresh, sign out, and the check-in
 * configuration (the admins' view adds its own in adminApi.ts). Answers are read with tolerant codecs (unknown fields ignored): a kiosk kept in a
 * tablet's cache must go on working when a newer server adds a field.
 */
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import { type AuthState, CheckinConfig } from './storage.js';

export type ApiFailure = 'network' | 'unauthorized' | 'forbidden' | 'rate_limited' | 'unexpected';

const TokenAnswer = t.intersection([
  t.type({
    accessToken: t.string,
    refreshToken: t.string,
    accessTokenExpiresAt: t.string,
    user: t.type({ userId: t.string, email: t.string, displayName: t.string, roles: t.array(t.string) }),
  }),
  t.partial({ sessionExpiresAt: t.string }),
]);

const failureOf = (status: number): ApiFailure =>
  status === 401
    ? 'unauthorized'
    : status === 403
      ? 'forbidden'
      : status === 429
        ? 'rate_limited'
        : 'unexpected';

export const request = async <A>(
  send: typeof fetch,
  path: string,
  init: RequestInit,
  codec: t.Type<A, unknown>,
): Promise<E.Either<ApiFailure, A>> => {
  let response: Response;
  try {
    response = await send(path, { ...init, cache: 'no-store' });
  } catch {
    return E.left('network');
  }
  if (!response.ok) return E.left(failureOf(response.status));
  try {
    const decoded = codec.decode(await response.json());
    return E.isRight(decoded) ? E.right(decoded.right) : E.left('unexpected');
  } catch {
    return E.left('unexpected');
  }
};

const tokens = (a: t.TypeOf<typeof TokenAnswer>): AuthState => ({
  accessToken: a.accessToken,
  refreshToken: a.refreshToken,
  accessTokenExpiresAt: a.accessTokenExpiresAt,
  user: a.user,
  expired: false,
  ...(a.sessionExpiresAt === undefined ? {} : { sessionExpiresAt: a.sessionExpiresAt }),
});

export const login = async (
  email: string,
  password: string,
  deviceId: string,
): Promise<E.Either<ApiFailure, AuthState>> =>
  E.map(tokens)(
    await request(
      fetch,
      '/api/v1/auth/login',
      {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Device-Id': deviceId },
        body: JSON.stringify({ email, password }),
      },
      TokenAnswer,
    ),
  );

export const refresh = async (refreshToken: string): Promise<E.Either<ApiFailure, AuthState>> =>
  E.map(tokens)(
    await request(
      fetch,
      '/api/v1/auth/refresh',
      {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ refreshToken }),
      },
      TokenAnswer,
    ),
  );

export const revoke = async (auth: AuthState, deviceId: string): Promise<void> => {
  await request(
    fetch,
    '/api/v1/auth/revoke',
    {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${auth.accessToken}`,
        'X-Device-Id': deviceId,
        'Idempotency-Key': crypto.randomUUID(),
      },
    },
    t.unknown,
  );
};

/** Through the authenticated fetch (token, device id, refresh on 401). */
export const checkinConfig = (authedFetch: typeof fetch): Promise<E.Either<ApiFailure, CheckinConfig>> =>
  request(authedFetch, '/api/v1/church/check-in-config', {}, CheckinConfig);
