/**
 * Sliding-window rate limit: a request is allowed when it is among the first `limit` requests recorded
 * in the last `windowMs` (itself included). Refused requests are recorded too, so hammering does not
 * reopen the window early. A refused client is told to come back when a request of its own would be
 * within the limit again: when the `limit`-th newest recorded request (this refusal included) leaves the
 * window, since every newer one still counts then. (It used to be told the oldest's departure, which
 * was too early as soon as one refusal had been recorded: obeying Retry-After earned another 429.)
 * At least one second, as Retry-After counts whole seconds.
 */
export interface RateLimitPolicy {
  readonly limit: number;
  readonly windowMs: number;
}

/** What is left of the quota, for the `RateLimit` header field: requests, and seconds until one frees. */
export interface Quota {
  readonly remaining: number;
  readonly resetSeconds: number;
}

/** `quota` is null when nothing could be counted (the counters' store failed: fail open). */
export type RateLimitDecision =
  | { readonly allowed: true; readonly quota: Quota | null }
  | { readonly allowed: false; readonly retryAfterSeconds: number };

export interface RateLimitInput {
  /** 1-based position of this request among those recorded in the window, itself included. */
  readonly rank: number;
  /**
   * When the recorded request whose departure frees a place was made: within the limit, the oldest in
   * the window; over it, the `limit`-th newest, this one included.
   */
  readonly freesPlaceAt: number | undefined;
  readonly now: number;
  readonly policy: RateLimitPolicy;
}

export const LOGIN_POLICY: RateLimitPolicy = { limit: 5, windowMs: 60_000 };
export const REFRESH_POLICY: RateLimitPolicy = { limit: 10, windowMs: 60_000 };

export const decideRateLimit = ({ rank, freesPlaceAt, now, policy }: RateLimitInput): RateLimitDecision => {
  const reopensInMs = freesPlaceAt === undefined ? policy.windowMs : freesPlaceAt + policy.windowMs - now;
  const seconds = Math.max(1, Math.ceil(reopensInMs / 1000));
  if (rank <= policy.limit) {
    return { allowed: true, quota: { remaining: policy.limit - rank, resetSeconds: seconds } };
  }
  return { allowed: false, retryAfterSeconds: seconds };
};
