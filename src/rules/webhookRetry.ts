/**
 * When the notifier tries a webhook message again (decision 0041). An attempt that got no answer, or
 * 408, 425, 429 or a 5xx, may succeed later; any other answer is the gateway's word and is final. The
 * wait doubles from `firstDelayMs` up to `maxDelayMs`, with jitter over its upper half so instances do
 * not retry in step, and no retry starts that could not finish before `deadlineMs` from the first
 * attempt: a request waiting on a page is held for a bounded time, however the gateway behaves. Pure:
 * elapsed time and the random draw are arguments.
 */
export interface WebhookRetryPolicy {
  /** Attempts in all, the first one included. */
  readonly attempts: number;
  readonly attemptTimeoutMs: number;
  readonly firstDelayMs: number;
  readonly maxDelayMs: number;
  readonly deadlineMs: number;
}

export const WEBHOOK_RETRY: WebhookRetryPolicy = {
  attempts: 3,
  attemptTimeoutMs: 3_000,
  firstDelayMs: 500,
  maxDelayMs: 2_000,
  deadlineMs: 8_000,
};

/** The end of one attempt: the gateway's status, or none (timeout, refused connection). */
export type AttemptEnd = { readonly status: number } | { readonly status: null };

export const delivered = (end: AttemptEnd): boolean =>
  end.status !== null && end.status >= 200 && end.status < 300;

const mayPass = (end: AttemptEnd): boolean =>
  end.status === null || end.status === 408 || end.status === 425 || end.status === 429 || end.status >= 500;

export type RetryDecision = { readonly retry: false } | { readonly retry: true; readonly delayMs: number };

/**
 * After attempt number `made` (1 for the first) ended with `end`, `elapsedMs` after the first began;
 * `random` is a draw from [0, 1).
 */
export const decideRetry = (
  made: number,
  end: AttemptEnd,
  elapsedMs: number,
  random: number,
  policy: WebhookRetryPolicy = WEBHOOK_RETRY,
): RetryDecision => {
  if (delivered(end) || !mayPass(end) || made >= policy.attempts) return { retry: false };
  const ceiling = Math.min(policy.maxDelayMs, policy.firstDelayMs * 2 ** (made - 1));
  const delayMs = Math.round(ceiling / 2 + (ceiling / 2) * random);
  if (elapsedMs + delayMs + policy.attemptTimeoutMs > policy.deadlineMs) return { retry: false };
  return { retry: true, delayMs };
};

/**
 * The policy for a delivery inside a request (a page, 0037) that has `leftMs` before its deadline
 * (decision 0046), less `reserveMs` for recording what came of it: no attempt outlives that budget and
 * no retry starts that could not end within it, so the request answers itself (NOTIFICATION_FAILED,
 * which the kiosk sends again later under its key) rather than being cut by its deadline mid-delivery.
 * Without a deadline (`leftMs` undefined), the policy as it is.
 */
export const withinBudget = (
  policy: WebhookRetryPolicy,
  leftMs: number | undefined,
  reserveMs: number,
): WebhookRetryPolicy => {
  if (leftMs === undefined) return policy;
  // Whole milliseconds: a timer's delay must be an integer (AbortSignal.timeout throws otherwise).
  const budgetMs = Math.max(0, Math.floor(leftMs - reserveMs));
  return {
    ...policy,
    // At least a millisecond: an attempt with nothing left fails at once, as a timeout.
    attemptTimeoutMs: Math.max(1, Math.min(policy.attemptTimeoutMs, budgetMs)),
    deadlineMs: Math.min(policy.deadlineMs, budgetMs),
  };
};
