/**
 * Keeps the roster database (what tablets pull) equal to `rules/roster.ts` applied to the server's
 * records. Any change in the private or projections database, or the passing of time (sessions and
 * day keys roll over at UTC midnight), is a trigger; triggers are debounced and a reconcile runs one
 * at a time (a trigger during one runs one more after it), so a burst of writes costs one pass.
 */
import {
  asyncScheduler,
  debounceTime,
  defer,
  map,
  merge,
  type Observable,
  retry,
  type SchedulerLike,
  Subject,
  type Subscription,
  startWith,
  takeUntil,
  tap,
  timer,
} from 'rxjs';
import type { RosterDoc } from '../domain/roster.js';
import { exhaustMapWithTrailing } from './eventPipeline.js';

/**
 * The private-database documents the roster is made of; any other write (idempotency records, rate
 * limits, sessions, users) is no reason to reconcile.
 */
const ROSTER_SOURCES = [
  'student:',
  'imageConsent:',
  'pickupEntry:',
  'pickupGrant:',
  'class:',
  'classSession:',
];
export const feedsRoster = (docId: string): boolean =>
  docId === 'checkin-secret' || ROSTER_SOURCES.some((prefix) => docId.startsWith(prefix));
/** The projections the roster shows: check-in and attendance aspects. */
export const projectionFeedsRoster = (docId: string): boolean =>
  docId.startsWith('aspect:checkin:') || docId.startsWith('aspect:attendance:');

export interface RosterStreams {
  readonly triggers$: Observable<unknown>;
  /** Computes the wanted documents and writes the difference. */
  readonly reconcile: () => Observable<{ written: number; deleted: number }>;
  readonly debounceMs: number;
  readonly retryDelayMs: number;
  readonly scheduler?: SchedulerLike;
  readonly onError?: (error: unknown) => void;
}

export const rosterReconciles$ = (s: RosterStreams): Observable<{ written: number; deleted: number }> =>
  s.triggers$.pipe(
    startWith(undefined),
    debounceTime(s.debounceMs, s.scheduler ?? asyncScheduler),
    exhaustMapWithTrailing(() =>
      defer(s.reconcile).pipe(
        retry({
          delay: (error: unknown) => {
            s.onError?.(error);
            return timer(s.retryDelayMs, s.scheduler ?? asyncScheduler);
          },
        }),
      ),
    ),
  );

export interface RosterProjector {
  /** Resolves after a reconcile that started after the call has finished. */
  refresh(): Promise<void>;
  stop(): void;
}

export const startRosterProjector = (options: {
  readonly wanted: () => Promise<ReadonlyArray<RosterDoc>>;
  readonly write: (docs: ReadonlyArray<RosterDoc>) => Promise<{ written: number; deleted: number }>;
  readonly triggers$: Observable<unknown>;
  readonly debounceMs?: number;
  readonly onError?: (error: unknown) => void;
}): RosterProjector => {
  const manual$ = new Subject<void>();
  const stop$ = new Subject<void>();
  const done$ = new Subject<number>();
  let started = 0;
  const subscription: Subscription = rosterReconciles$({
    triggers$: merge(options.triggers$, manual$).pipe(takeUntil(stop$)),
    reconcile: () => {
      started += 1;
      const run = started;
      return defer(async () => options.write(await options.wanted())).pipe(tap(() => done$.next(run)));
    },
    debounceMs: options.debounceMs ?? 100,
    retryDelayMs: 1000,
    ...(options.onError === undefined ? {} : { onError: options.onError }),
  })
    .pipe(map(() => undefined))
    .subscribe({ error: (e: unknown) => options.onError?.(e) });
  return {
    refresh() {
      const after = started;
      return new Promise<void>((resolve) => {
        const sub = done$.subscribe((run) => {
          if (run > after) {
            sub.unsubscribe();
            resolve();
          }
        });
        manual$.next();
      });
    },
    stop() {
      stop$.next();
      subscription.unsubscribe();
    },
  };
};
