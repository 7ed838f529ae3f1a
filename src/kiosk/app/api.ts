/**
 * The kiosk's reading of a call's outcome: the shared transport's `Failure` (src/client) as the few
 * cases a screen tells apart, and the check-in configuration (the admins' view adds its own calls in
 * adminApi.ts). Answers are read with tolerant codecs (unknown fields ignored): a kiosk kept in a
 * tablet's cache must go on working when a newer server adds a field.
 */
import * as E from 'fp-ts/lib/Either.js';
import type * as t from 'io-ts';
import { type Failure, json, readAnswer, type SignInFailure } from '../../client/transport.js';
import { CheckinConfig } from './storage.js';

export type ApiFailure = 'network' | 'unauthorized' | 'forbidden' | 'rate_limited' | 'unexpected';

const byStatus = (status: number): ApiFailure =>
  status === 401
    ? 'unauthorized'
    : status === 403
      ? 'forbidden'
      : status === 429
        ? 'rate_limited'
        : 'unexpected';

export const apiFailure = (f: Failure): ApiFailure =>
  f.kind === 'network' ? 'network' : f.kind === 'signed-out' ? 'unauthorized' : byStatus(f.status);

export const signInFailure = (f: SignInFailure): ApiFailure | 'refused_other_user' =>
  f.kind === 'not-accepted' ? 'refused_other_user' : apiFailure(f);

/** A call through `send` (the session's fetch: token, device id, refresh on 401), its answer decoded. */
export const request = async <A>(
  send: typeof fetch,
  path: string,
  init: RequestInit,
  codec: t.Type<A, unknown, unknown>,
): Promise<E.Either<ApiFailure, A>> => {
  let response: Response;
  try {
    response = await send(path, { ...init, cache: 'no-store' });
  } catch {
    return E.left('network');
  }
  return E.mapLeft(apiFailure)(await readAnswer(response, json(codec)));
};

export const checkinConfig = (authedFetch: typeof fetch): Promise<E.Either<ApiFailure, CheckinConfig>> =>
  request(authedFetch, '/api/v1/church/check-in-config', {}, CheckinConfig);
