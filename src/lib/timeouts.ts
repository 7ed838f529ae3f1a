/**
 * Waits bounded in time, on Node's own timers (`node:timers/promises`): the timer is cancelled through
 * an `AbortSignal` as soon as the wait is over, so a wait that ends early leaves no timer behind to
 * hold the process open or fire later.
 */
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Resolves when `event` settles, after `ms`, or when `signal` aborts, whichever comes first (rejects
 * only if `event` does).
 */
export const waitAtMost = async (
  event: Promise<unknown>,
  ms: number,
  signal?: AbortSignal,
): Promise<void> => {
  const over = new AbortController();
  const stop = signal === undefined ? over.signal : AbortSignal.any([over.signal, signal]);
  // An aborted sleep rejects: here that only means the wait is over.
  const expired = sleep(ms, undefined, { signal: stop }).catch(() => undefined);
  try {
    await Promise.race([event, expired]);
  } finally {
    over.abort();
  }
};

/** Rejects when `p` has not settled within `ms` (what `p` does later is ignored). */
export const withTimeout = async <A>(p: Promise<A>, ms: number): Promise<A> => {
  const over = new AbortController();
  const expired = sleep(ms, undefined, { signal: over.signal }).then((): never => {
    throw new Error(`timed out after ${ms} ms`);
  });
  try {
    return await Promise.race([p, expired]);
  } finally {
    over.abort();
  }
};

/** A pause of `ms` (a back-off between attempts), for the layers that do not reach Node's timers. */
export const pause = (ms: number): Promise<void> => sleep(ms);
