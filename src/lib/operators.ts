/**
 * RxJS operators the library lacks, used by the change-feed pipelines (`src/sync/`): generic, so they
 * live here and are tested with marbles on their own (`test/lib/operators.test.ts`).
 */
import {
  asyncScheduler,
  Observable,
  type OperatorFunction,
  type SchedulerLike,
  type Subscription,
} from 'rxjs';

/**
 * Like `exhaustMap`, but a value that arrives while the inner stream runs is not dropped: one more
 * inner stream starts when the current one completes (however many values arrived meanwhile). Wakes
 * collapse; none is lost.
 */
export const exhaustMapWithTrailing =
  <A, B>(project: () => Observable<B>): OperatorFunction<A, B> =>
  (source) =>
    new Observable<B>((subscriber) => {
      let running = false;
      let again = false;
      let sourceDone = false;
      let inner: { unsubscribe(): void } | undefined;
      const start = () => {
        running = true;
        again = false;
        inner = project().subscribe({
          next: (b) => subscriber.next(b),
          error: (e: unknown) => subscriber.error(e),
          complete: () => {
            running = false;
            if (again) start();
            else if (sourceDone) subscriber.complete();
          },
        });
      };
      const outer = source.subscribe({
        next: () => {
          if (running) again = true;
          else start();
        },
        error: (e: unknown) => subscriber.error(e),
        complete: () => {
          sourceDone = true;
          if (!running) subscriber.complete();
        },
      });
      return () => {
        outer.unsubscribe();
        inner?.unsubscribe();
      };
    });

/**
 * `debounceTime` with a ceiling: emits once the source has been quiet for `dueMs`, or `maxWaitMs`
 * after the first value not yet emitted, whichever comes first (lodash's `maxWait`; RxJS has no such
 * option). The last value is emitted when the source completes with one pending.
 */
export const debounceWithMaxWait =
  <T>(dueMs: number, maxWaitMs: number, scheduler: SchedulerLike = asyncScheduler): OperatorFunction<T, T> =>
  (source) =>
    new Observable<T>((subscriber) => {
      let pending: { value: T } | undefined;
      let quiet: Subscription | undefined;
      let ceiling: Subscription | undefined;
      const flush = () => {
        quiet?.unsubscribe();
        ceiling?.unsubscribe();
        quiet = undefined;
        ceiling = undefined;
        const held = pending;
        pending = undefined;
        if (held !== undefined) subscriber.next(held.value);
      };
      const inner = source.subscribe({
        next: (value) => {
          pending = { value };
          quiet?.unsubscribe();
          quiet = scheduler.schedule(flush, dueMs);
          ceiling ??= scheduler.schedule(flush, maxWaitMs);
        },
        error: (e: unknown) => subscriber.error(e),
        complete: () => {
          flush();
          subscriber.complete();
        },
      });
      return () => {
        inner.unsubscribe();
        quiet?.unsubscribe();
        ceiling?.unsubscribe();
      };
    });
