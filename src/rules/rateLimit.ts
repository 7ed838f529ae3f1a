/**
 * Sliding-window rate limit: a request is allowed when it is among the first `limit` requests recorded
 * in the last `windowMs` (itself included). Refused requests are recorded too, so hammering does not
 * reopen the window early. A refused client is told to come back when the oldest request in the window
 * leaves it — at least one second, as Retry-After counts whole seconds.
 */
export interface RateLimitPolicy {
  readonly limit: number;
  readonly windowMs: number;
}

export type RateLimitDecision =
  | { readonly allowed: true }
  | { readonly allowed: false; readonly retryAfterSeconds: number };

export interface RateLimitInput {
  /** 1-based position of this request among those recorded in the window, itself included. */
  readonly rank: number;
  readonly oldestInWindowAt: number | undefined;
  readonly now: number;
  readonly policy: RateLimitPolicy;
}

export const LOGIN_POLICY: RateLimitPolicy = { limit: 5, windowMs: 60_000 };
export const REFRESH_POLICY: RateLimitPolicy = { limit: 10, windowMs: 60_000 };

export const decideRateLimit = ({
  rank,
  oldestInWindowAt,
  now,
  policy,
}: RateLimitInput): RateLimitDecision => {
  if (rank <= policy.limit) return { allowed: true };
  const reopensInMs =
    oldestInWindowAt === undefined ? policy.windowMs : oldestInWindowAt + policy.windowMs - now;
  return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(reopensInMs / 1000)) };
};
