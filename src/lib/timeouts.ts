/**
 * Waits bounded in time, on Node's own timers (`node:timers/promises`): the timer is cancelled through
 * an `AbortSignal` as soon as the wait is over, so a wait that ends early leaves no timer behind to
 * hold the process open or fire later.
 */
import { setTimeout as sleep } from 'node:timers/promises';

/** Resolves when `event` settles or after `ms`, whichever comes first (rejects only if `event` does). */
export const waitAtMost = async (event: Promise<unknown>, ms: number): Promise<void> => {
  const over = new AbortController();
  try {
    await Promise.race([event, sleep(ms, undefined, { signal: over.signal })]);
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
