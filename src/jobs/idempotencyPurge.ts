/**
 * The periodic purge of idempotency entries past their retention, on the shared job shape
 * (`periodic.ts`: no overlapping runs, a failed run reported and the schedule going on).
 */
import { asyncScheduler, map, type Observable, type ObservableInput, type SchedulerLike } from 'rxjs';
import { periodic$ } from './periodic.js';

export type PurgeRun =
  | { readonly ok: true; readonly purged: number }
  | { readonly ok: false; readonly error: string };

/**
 * A minute. The purge finds expired entries through an index that pouchdb-find brings up to date on
 * each query, reading every ledger entry written since the previous one: every ten minutes, that was
 * ten minutes of mutations at once (8,400 entries in the ten-minute soak: 2.3 s, and +10 MB resident
 * as the pages of the ledger's table files were mapped to read them). A minute's writes are still in
 * LevelDB's newest files, and an entry is gone within a minute of its expiry.
 */
export const PURGE_PERIOD_MS = 60 * 1000;

export const idempotencyPurge$ = (
  purge: (now: number) => ObservableInput<number>,
  clock: () => Date,
  periodMs: number = PURGE_PERIOD_MS,
  scheduler: SchedulerLike = asyncScheduler,
): Observable<PurgeRun> =>
  periodic$(() => purge(clock().getTime()), periodMs, periodMs, scheduler).pipe(
    map((r): PurgeRun => (r.ok ? { ok: true, purged: r.result } : r)),
  );
