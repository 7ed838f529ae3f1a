/**
 * The periodic purge of idempotency entries past their retention. A failed run is reported and the
 * schedule goes on; a run that is still going when the next tick comes is not overlapped.
 */
import {
  asyncScheduler,
  catchError,
  defer,
  exhaustMap,
  map,
  type Observable,
  type ObservableInput,
  of,
  type SchedulerLike,
  timer,
} from 'rxjs';

export type PurgeRun =
  | { readonly ok: true; readonly purged: number }
  | { readonly ok: false; readonly error: string };

export const PURGE_PERIOD_MS = 10 * 60 * 1000;

export const idempotencyPurge$ = (
  purge: (now: number) => ObservableInput<number>,
  clock: () => Date,
  periodMs: number = PURGE_PERIOD_MS,
  scheduler: SchedulerLike = asyncScheduler,
): Observable<PurgeRun> =>
  timer(periodMs, periodMs, scheduler).pipe(
    exhaustMap(() =>
      defer(() => purge(clock().getTime())).pipe(
        map((purged): PurgeRun => ({ ok: true, purged })),
        catchError((e: unknown) =>
          of<PurgeRun>({ ok: false, error: e instanceof Error ? e.name : 'unknown' }),
        ),
      ),
    ),
  );
