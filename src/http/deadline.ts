/**
 * Every request is answered within its deadline (`REQUEST_DEADLINE_MS`, decision 0046), whatever the
 * store does. The work of a request runs under the deadline (`src/lib/deadline.ts`), so its store calls
 * stop waiting when it passes; and the answer races the work, because not every wait can be cut (the
 * embedded store's LevelDB calls, a keyed lock, the pipeline's decision). When the deadline comes
 * first the client is answered 503 `STORE_UNAVAILABLE` with `Retry-After`, and that is the only answer
 * it gets: the work goes on to its end unanswered. A mutation's final answer then still reaches the
 * idempotency ledger, so the client's retry with the same key is answered that (or waits for it); a
 * work that fails releases its claim, and the retry runs it again.
 *
 * The deadline counts from the request's arrival, its body's upload and parsing included, and bounds
 * the time until the answer starts: a streamed body (a backup, 0044) then flows for as long as the
 * store keeps answering, each read bounded by the store's silence limit.
 */
import type { IncomingMessage } from 'node:http';
import { type ApiError, apiError } from '../domain/errors.js';
import { type RunningDeadline, remainingMs, runWithin, startDeadline } from '../lib/deadline.js';
import { requestState } from './requestContext.js';

/** The deadline of a request that arrived at `requestState(req).startedAt`. */
export const requestDeadline = (req: IncomingMessage, limitMs: number): RunningDeadline => {
  const elapsedMs = Number(process.hrtime.bigint() - requestState(req).startedAt) / 1e6;
  return startDeadline(limitMs, remainingMs(limitMs, elapsedMs));
};

/** The answer at the deadline: the store did not let the request finish in time. */
export const deadlineError = (limitMs: number): ApiError =>
  apiError(
    'STORE_UNAVAILABLE',
    `The request did not finish within ${limitMs} ms; send it again (a mutation with the same Idempotency-Key).`,
    { deadlineMs: limitMs },
  );

export type Raced<A> =
  | { readonly kind: 'done'; readonly value: A }
  /** `late` is the work, still running: its value is never sent; the caller only reports it. */
  | { readonly kind: 'passed'; readonly late: Promise<A> };

/**
 * Runs `work` under `deadline`: its value when it ends first (the deadline then never fires), or
 * `passed` when the deadline comes first. A failure of the work before the deadline rejects.
 */
export const raceDeadline = async <A>(
  deadline: RunningDeadline,
  work: () => Promise<A>,
): Promise<Raced<A>> => {
  const running = runWithin(deadline, work);
  try {
    return await Promise.race([
      running.then((value): Raced<A> => ({ kind: 'done', value })),
      deadline.passed.then((): Raced<A> => ({ kind: 'passed', late: running })),
    ]);
  } catch (e) {
    // A read the deadline cut fails the work in the same turn as the deadline fires: the deadline's answer.
    if (deadline.fired()) return { kind: 'passed', late: running };
    throw e;
  } finally {
    if (!deadline.fired()) deadline.end();
  }
};
