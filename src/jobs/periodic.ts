/**
 * The shape every periodic job shares: a run on each tick, never two at once (`exhaustMap`: a run
 * still going when the next tick comes is not overlapped), and a failed run reported as a value (the
 * error's name only: a message may quote data) so the schedule goes on.
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

export type JobRun<A> =
  | { readonly ok: true; readonly result: A }
  | { readonly ok: false; readonly error: string };

/** One run, its failure caught as a value. */
export const attempt$ = <A>(run: () => ObservableInput<A>): Observable<JobRun<A>> =>
  defer(run).pipe(
    map((result): JobRun<A> => ({ ok: true, result })),
    catchError((e: unknown) => of<JobRun<A>>({ ok: false, error: e instanceof Error ? e.name : 'unknown' })),
  );

export const periodic$ = <A>(
  run: () => ObservableInput<A>,
  firstAfterMs: number,
  periodMs: number,
  scheduler: SchedulerLike = asyncScheduler,
): Observable<JobRun<A>> => timer(firstAfterMs, periodMs, scheduler).pipe(exhaustMap(() => attempt$(run)));
