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

/**
 * The rule of the per-device limit, counted in memory (0013): a sliding window estimated from two fixed
 * windows, as the share of the previous window's count that still overlaps the sliding one plus the
 * current window's count. Two numbers per bucket instead of one timestamp per request, so memory is
 * bounded per bucket and instances can add up each other's counts (they number windows alike, from
 * the epoch). The estimate assumes the previous window's requests were spread evenly; a burst at its
 * very end is forgotten a little early, which may let a client through a few requests over the limit
 * once, never persistently.
 */
export interface WindowCounts {
  /** Requests counted in the current fixed window, this one included, refused ones included. */
  readonly current: number;
  /** Requests counted in the fixed window before it. */
  readonly previous: number;
}

export interface SlidingWindowInput {
  readonly counts: WindowCounts;
  /** Milliseconds since the current fixed window began, 0 ≤ elapsed < windowMs. */
  readonly elapsedMs: number;
  readonly policy: RateLimitPolicy;
}

/** The fixed window `at` falls in: windows are numbered from the epoch so every instance agrees. */
export const windowIndex = (at: number, windowMs: number): number => Math.floor(at / windowMs);

/** Counts of window `from` seen from window `to` (≥ from): one window on, the current becomes the previous. */
export const rollCounts = (counts: WindowCounts, from: number, to: number): WindowCounts => {
  if (to === from) return counts;
  if (to === from + 1) return { current: 0, previous: counts.current };
  return { current: 0, previous: 0 };
};

const estimate = (counts: WindowCounts, elapsedMs: number, windowMs: number): number =>
  counts.current + (counts.previous * (windowMs - elapsedMs)) / windowMs;

/**
 * Milliseconds from now until one more request would be within the limit, if nothing else arrives.
 * Within the current window the previous window's share shrinks linearly; failing that, the current
 * count becomes the previous one at the next window and shrinks in turn.
 */
const msUntilPlace = ({ counts, elapsedMs, policy }: SlidingWindowInput): number => {
  const { limit, windowMs } = policy;
  const room = limit - 1 - counts.current;
  // With room left in the current count, the previous window's share reaches it before this one ends.
  if (room >= 0) {
    return counts.previous === 0
      ? 0
      : Math.max(0, windowMs - elapsedMs - (windowMs * room) / counts.previous);
  }
  const intoNext =
    counts.current === 0 ? 0 : Math.max(0, windowMs - (windowMs * (limit - 1)) / counts.current);
  return windowMs - elapsedMs + intoNext;
};

/**
 * Allowed when the estimate, this request included, is within the limit. `RateLimit`'s `t` is the
 * seconds until the fixed window ends (when the current count starts to be forgotten). A refusal says
 * when a request of the client's own would be allowed again, this refusal counted, so obeying
 * `Retry-After` never earns another 429 (unless other requests come in between).
 */
export const decideSlidingWindow = (input: SlidingWindowInput): RateLimitDecision => {
  const { counts, elapsedMs, policy } = input;
  const load = estimate(counts, elapsedMs, policy.windowMs);
  if (load <= policy.limit) {
    return {
      allowed: true,
      quota: {
        remaining: Math.max(0, Math.floor(policy.limit - load)),
        resetSeconds: Math.max(1, Math.ceil((policy.windowMs - elapsedMs) / 1000)),
      },
    };
  }
  return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(msUntilPlace(input) / 1000)) };
};
