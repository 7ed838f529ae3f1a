/**
 * Rate limits as the HTTP layer applies them: the per-route limits of the public routes (login,
 * refresh: per client IP) and the one every authenticated route shares (per principal and device),
 * with the IETF header fields (draft-ietf-httpapi-ratelimit-headers) on every answer they counted:
 * `RateLimit-Policy: "device";q=600;w=60` (the quota and window) and `RateLimit: "device";r=599;t=60`
 * (what remains, and seconds until a place frees). A refusal is 429 `RATE_LIMITED` with `Retry-After`.
 */
import type { IncomingMessage } from 'node:http';
import * as E from 'fp-ts/lib/Either.js';
import { type ApiError, apiError } from '../domain/errors.js';
import type { RateLimitDecision, RateLimitPolicy } from '../rules/rateLimit.js';
import type { AppDeps } from './deps.js';
import { requestState } from './requestContext.js';

export const RATE_LIMIT_HEADER = 'RateLimit';
export const RATE_LIMIT_POLICY_HEADER = 'RateLimit-Policy';

/** The header fields for one policy's decision; `RateLimit` only when the request could be counted. */
export const rateLimitHeaders = (
  name: string,
  policy: RateLimitPolicy,
  decision: RateLimitDecision,
): Record<string, string> => {
  const windowSeconds = Math.ceil(policy.windowMs / 1000);
  const quota = decision.allowed
    ? decision.quota
    : { remaining: 0, resetSeconds: decision.retryAfterSeconds };
  return {
    [RATE_LIMIT_POLICY_HEADER]: `"${name}";q=${policy.limit};w=${windowSeconds}`,
    ...(quota === null
      ? {}
      : { [RATE_LIMIT_HEADER]: `"${name}";r=${quota.remaining};t=${quota.resetSeconds}` }),
  };
};

/**
 * Counts this request in `scope` for `clientKey`. The header fields are kept on the request's state
 * and set on whatever answer it gets; they are never part of a stored (replayable) response, whose
 * quota would be stale by its replay.
 */
export const countRequest = async (
  req: IncomingMessage,
  deps: AppDeps,
  limit: { readonly scope: string; readonly clientKey: string; readonly policy: RateLimitPolicy },
): Promise<E.Either<ApiError, void>> => {
  const verdict = await deps.rateLimiter.check(limit.scope, limit.clientKey, limit.policy);
  return answer(req, deps, limit.scope, limit.policy, verdict);
};

/** Keeps the header fields on the request's state; a refusal is the 429 envelope with Retry-After. */
const answer = (
  req: IncomingMessage,
  deps: AppDeps,
  scope: string,
  policy: RateLimitPolicy,
  verdict: RateLimitDecision,
): E.Either<ApiError, void> => {
  requestState(req).rateLimitHeaders = rateLimitHeaders(scope, policy, verdict);
  if (verdict.allowed) return E.right(undefined);
  deps.metrics.rateLimitRefused(scope);
  return E.left(
    apiError(
      'RATE_LIMITED',
      undefined,
      { retryAfterSeconds: verdict.retryAfterSeconds },
      { 'Retry-After': String(verdict.retryAfterSeconds) },
    ),
  );
};

/**
 * The bucket of an authenticated caller: one per principal and device, shared by every route, counted
 * in memory (no store IO per request; instances exchange their counts in the background). A limit of
 * 0 (RATE_LIMIT_REQUESTS=0) turns it off.
 */
export const countCaller = (
  req: IncomingMessage,
  deps: AppDeps,
  caller: { readonly userId: string; readonly deviceId: string },
): E.Either<ApiError, void> => {
  const policy = deps.config.deviceRateLimit;
  if (policy.limit === 0) return E.right(undefined);
  // A user id may contain anything a JWT carries; the device id is a UUID, so the split is unique.
  const verdict = deps.callerRateLimiter.check('device', `${caller.deviceId}|${caller.userId}`, policy);
  return answer(req, deps, 'device', policy, verdict);
};
