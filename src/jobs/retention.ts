/**
 * The retention job (decision 0045): a run as soon as the service starts (a restore brings back what
 * the periods had ended, and applies them there), then one at each time the schedule names
 * (`RETENTION_AT`), the next time asked only once a run has ended, so two never overlap. A failed run
 * is reported as a value and the schedule goes on.
 */
import { asyncScheduler, concat, type Observable, type ObservableInput, type SchedulerLike } from 'rxjs';
import { atScheduledTimes$ } from './nightlyBackup.js';
import { attempt$, type JobRun } from './periodic.js';

export const retention$ = <A>(
  run: () => ObservableInput<A>,
  nextAt: (now: Date) => Date,
  clock: () => Date,
  scheduler: SchedulerLike = asyncScheduler,
): Observable<JobRun<A>> => concat(attempt$(run), atScheduledTimes$(run, nextAt, clock, scheduler));
