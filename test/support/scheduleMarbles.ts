/** Marble tests of a scheduled job (`src/jobs`): a test scheduler and the every-tenth-millisecond schedule. */
import { expect } from 'chai';
import type { Observable, ObservableInput } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import type { JobRun } from '../../src/jobs/periodic.js';

type Cold = TestScheduler['createColdObservable'];

/** A job as `src/jobs` schedules one: its run, when to run next, and the clock. */
export type ScheduledJob = <A>(
  run: () => ObservableInput<A>,
  nextAt: (now: Date) => Date,
  clock: () => Date,
) => Observable<JobRun<A>>;

/** A schedule of every tenth millisecond: the next multiple of 10 after now. */
export const everyTen = (now: Date) => new Date(Math.floor(now.getTime() / 10) * 10 + 10);

/**
 * Expects `job`, scheduled every tenth millisecond on the test scheduler's clock and subscribed for
 * `subscription`, to emit `marbles` with `values`; `run` makes the job's run from `cold`.
 */
export const expectScheduled = <A>(
  job: ScheduledJob,
  run: (cold: Cold) => () => ObservableInput<A>,
  subscription: string,
  marbles: string,
  values: Record<string, JobRun<A>>,
): void => {
  const scheduler = new TestScheduler((actual, expected) => {
    expect(actual).to.deep.equal(expected);
  });
  scheduler.run(({ cold, expectObservable }) => {
    const clock = () => new Date(scheduler.now());
    expectObservable(job(run(cold), everyTen, clock), subscription).toBe(marbles, values);
  });
};

/** A run that fails the first time with `error`, then emits `value` a frame later each time. */
export const failingOnce =
  <A>(error: Error, value: A) =>
  (cold: Cold) => {
    let runs = 0;
    return () => {
      runs += 1;
      return runs === 1 ? cold<A>('-#', undefined, error) : cold('-a|', { a: value });
    };
  };
