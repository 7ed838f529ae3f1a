/**
 * A deadline carried by the async context: the work one request starts learns how long it may still
 * take without every function between the route and the store passing it on (decision 0046).
 *
 * The rule, in three parts:
 * - a deadline **fires** only if the work is still running when it passes; work that has ended (its
 *   request answered) never sees it fire, so whatever it left running goes on undisturbed;
 * - a call **in flight** when it fires stops waiting then (`deadlineSignal`, `untilDeadline`); a call
 *   started after it has fired is not bound by it: that is the work's clean-up (releasing a claim,
 *   storing a final answer), and a long-lived loop that happened to start inside a request is cut at
 *   most once, never for good. Which calls honour it is theirs to say: the store's reads do, its
 *   writes are followed to their end (`src/store/boundedFetch.ts`);
 * - work several callers share (a batch of writes, a batched read, a wake-up of the event pipeline)
 *   runs `detached`, outside any one caller's deadline; a reader stops waiting for it at its own
 *   (`untilDeadline`), a writer waits for its write's result.
 *
 * Arithmetic first, then the context on Node's `AsyncLocalStorage`.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { performance } from 'node:perf_hooks';

/** What is left of `limitMs` after `elapsedMs`, never below 0. */
export const remainingMs = (limitMs: number, elapsedMs: number): number => Math.max(0, limitMs - elapsedMs);

/** The deadline passed while the call was waiting: it stopped waiting, whatever the call does later. */
export class DeadlinePassed extends Error {
  override readonly name = 'DeadlinePassed';
  readonly code = 'EDEADLINE';
  constructor(readonly limitMs: number) {
    super(`the work's deadline of ${limitMs} ms passed`);
  }
}

export interface Deadline {
  /** The whole limit, as configured (for messages and logs). */
  readonly limitMs: number;
  /** When it passes, on `performance.now()`'s clock (monotonic: a wall-clock step moves nothing). */
  readonly at: number;
  /** Aborts, with `DeadlinePassed`, when the deadline passes while the work is still running. */
  readonly signal: AbortSignal;
}

export interface RunningDeadline extends Deadline {
  /** Resolves when the deadline fires; never, when the work ended first. */
  readonly passed: Promise<void>;
  /** The work has ended: the deadline will not fire. */
  end(): void;
  /** True once the deadline has fired. */
  fired(): boolean;
}

/** A deadline `leftMs` from now (what the caller has left of its limit: a request counts from arrival). */
export const startDeadline = (limitMs: number, leftMs: number = limitMs): RunningDeadline => {
  const controller = new AbortController();
  let fire: () => void = () => undefined;
  const passed = new Promise<void>((resolve) => {
    fire = resolve;
  });
  const timer = setTimeout(() => {
    controller.abort(new DeadlinePassed(limitMs));
    fire();
  }, leftMs);
  // A deadline never holds the process open: the work it bounds does, or nothing does.
  timer.unref();
  return {
    limitMs,
    at: performance.now() + leftMs,
    signal: controller.signal,
    passed,
    end: () => clearTimeout(timer),
    fired: () => controller.signal.aborted,
  };
};

const scope = new AsyncLocalStorage<Deadline>();

/** Runs `work` (and everything it starts) under `deadline`. */
export const runWithin = <A>(deadline: Deadline, work: () => A): A => scope.run(deadline, work);

/**
 * Runs `work` outside any deadline: work shared by several callers, or started by one caller for
 * everyone (a batch write, a batched read, a wake-up of a long-lived stream).
 */
export const detached = <A>(work: () => A): A => scope.exit(work);

/** The deadline of the work in hand, if any. */
export const currentDeadline = (): Deadline | undefined => scope.getStore();

/** Milliseconds left before the current deadline; undefined outside one. */
export const timeLeftMs = (): number | undefined => {
  const d = scope.getStore();
  return d === undefined ? undefined : remainingMs(d.at, performance.now());
};

/**
 * The signal a call starting now stops at: the current deadline's, while it has not fired. None once it
 * has fired (the call is the work's clean-up) and none outside a deadline.
 */
export const deadlineSignal = (): AbortSignal | undefined => {
  const d = scope.getStore();
  return d === undefined || d.signal.aborted ? undefined : d.signal;
};

/**
 * `p`, or a rejection with `DeadlinePassed` when the current deadline fires first (`p` goes on, and
 * what it does later is not awaited). Outside a deadline, or after it fired, `p` itself.
 */
export const untilDeadline = <A>(p: Promise<A>): Promise<A> => {
  const d = scope.getStore();
  if (d === undefined || d.signal.aborted) return p;
  const { signal, limitMs } = d;
  return new Promise<A>((resolve, reject) => {
    const stop = () => reject(new DeadlinePassed(limitMs));
    signal.addEventListener('abort', stop, { once: true });
    p.then(
      (value) => {
        signal.removeEventListener('abort', stop);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', stop);
        reject(error);
      },
    );
  });
};
