/**
 * The service's own backups (decision 0044): a run at each time the schedule names, the next time
 * asked only once a run has ended, so two never overlap however long one takes; a failed run is
 * reported as a value and the next time comes as usual. A time already past when asked (a run that
 * outlasted a whole period) runs at once.
 */
import {
  asyncScheduler,
  concatMap,
  defer,
  type Observable,
  type ObservableInput,
  repeat,
  type SchedulerLike,
  timer,
} from 'rxjs';
import { attempt$, type JobRun } from './periodic.js';

export const atScheduledTimes$ = <A>(
  run: () => ObservableInput<A>,
  nextAt: (now: Date) => Date,
  clock: () => Date,
  scheduler: SchedulerLike = asyncScheduler,
): Observable<JobRun<A>> =>
  defer(() => {
    const now = clock();
    return timer(Math.max(0, nextAt(now).getTime() - now.getTime()), scheduler);
  }).pipe(
    concatMap(() => attempt$(run)),
    repeat(),
  );
