/**
 * Schedules make their sessions ahead (decision 0031): at start and then every hour, so the window of
 * four weeks moves with the days and a restarted or added instance catches up at once. Runs never
 * overlap (`periodic.ts`); a failed run is reported and the next tick tries again. Every instance runs
 * it: session ids derived from schedule and date make the runs agree instead of duplicating.
 */
import { asyncScheduler, map, type Observable, type ObservableInput, type SchedulerLike } from 'rxjs';
import { periodic$ } from './periodic.js';

export const MATERIALISE_PERIOD_MS = 60 * 60 * 1000;

export type MaterialiseRun =
  | { readonly ok: true; readonly created: number; readonly updated: number; readonly removed: number }
  | { readonly ok: false; readonly error: string };

export const scheduleMaterialisation$ = (
  materialise: () => ObservableInput<{ created: number; updated: number; removed: number }>,
  periodMs: number = MATERIALISE_PERIOD_MS,
  scheduler: SchedulerLike = asyncScheduler,
): Observable<MaterialiseRun> =>
  periodic$(materialise, 0, periodMs, scheduler).pipe(
    map((r): MaterialiseRun => (r.ok ? { ok: true, ...r.result } : r)),
  );
