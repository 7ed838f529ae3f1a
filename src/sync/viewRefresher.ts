/**
 * Keeps CouchDB's student views current behind the writes (decisions 0056, 0061). CouchDB indexes a
 * view when it is queried after writes; left to the first request after an import, that would be the
 * whole import's indexing inside one request (about 25 s for 10,000 students on the shared machine,
 * past the 6 s deadline). A refresh sets CouchDB indexing without waiting for it
 * (`StudentViews.refresh`).
 *
 * Each poke is a student write the private feed brought. The refresh comes once writes have paused
 * for `quietMs`, or `maxWaitMs` after the first write not yet refreshed for, whichever is first (the
 * roster reconciler's `debounceWithMaxWait`): the views' indexing (JavaScript, on CouchDB's CPU) then
 * runs mostly after an import's writes, not beside them (in a bench run that refreshed once a second
 * during the import, a 2,000-row file answered 503; the import is near the store's silence limit on
 * the loaded machine anyway, decision 0055), and a long stream of writes is still indexed in steps.
 * An import on this instance holds the refresher while it writes its file (`hold`): its writes are
 * one refresh after the file, not one at each pause between its batches (decision 0066).
 * One refresh runs at a time; pokes during one are one more refresh after it.
 */
import {
  asyncScheduler,
  catchError,
  defer,
  endWith,
  ignoreElements,
  type Observable,
  type ObservableInput,
  of,
  type SchedulerLike,
  Subject,
} from 'rxjs';
import { heldWork } from '../lib/heldWork.js';
import { debounceWithMaxWait, exhaustMapWithTrailing } from '../lib/operators.js';

export interface RefreshTiming {
  readonly quietMs: number;
  readonly maxWaitMs: number;
  /** Told of a failed refresh: a request's own query indexes what it did not, slower, never wrong. */
  readonly onError: (e: unknown) => void;
  readonly scheduler?: SchedulerLike;
}

/** The refreshes the pokes set off: one value per refresh that ended, failed ones included. */
export const viewRefreshes$ = (
  pokes$: Observable<unknown>,
  refresh: () => ObservableInput<unknown>,
  timing: RefreshTiming,
): Observable<void> =>
  pokes$.pipe(
    debounceWithMaxWait(timing.quietMs, timing.maxWaitMs, timing.scheduler ?? asyncScheduler),
    exhaustMapWithTrailing(() =>
      defer(refresh).pipe(
        ignoreElements(),
        endWith(undefined),
        catchError((e: unknown) => {
          timing.onError(e);
          return of(undefined);
        }),
      ),
    ),
  );

export interface ViewRefresher {
  poke(): void;
  /**
   * Puts the refreshes off until the returned release (the last, when several hold): pokes meanwhile
   * are one refresh after it. An import holds it while its file is written, so CouchDB indexes the
   * file once it is stored rather than in steps beside its writes (decision 0066).
   */
  hold(): () => void;
  /** Drops a refresh not yet due and waits for the one under way, if any (a stop). */
  stop(): Promise<void>;
}

export const viewRefresher = (refresh: () => Promise<void>, timing: RefreshTiming): ViewRefresher => {
  const pokes = new Subject<void>();
  let running: Promise<void> | undefined;
  const subscription = viewRefreshes$(
    pokes,
    () => {
      const run = refresh();
      running = run.catch(() => undefined);
      return run;
    },
    timing,
  ).subscribe();
  const held = heldWork(() => pokes.next());
  return {
    poke: () => {
      if (!held.putOff()) pokes.next();
    },
    hold: () => held.hold(),
    async stop() {
      subscription.unsubscribe();
      await running;
    },
  };
};
