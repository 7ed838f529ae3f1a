import { expect } from 'chai';
import { TestScheduler } from 'rxjs/testing';
import { atScheduledTimes$ } from '../../src/jobs/nightlyBackup.js';

const newScheduler = () =>
  new TestScheduler((actual, expected) => {
    expect(actual).to.deep.equal(expected);
  });

/** A schedule of every tenth millisecond: the next multiple of 10 after now. */
const everyTen = (now: Date) => new Date(Math.floor(now.getTime() / 10) * 10 + 10);

describe('nightly backup schedule (marbles)', () => {
  it('runs at each time the schedule names', () => {
    const scheduler = newScheduler();
    scheduler.run(({ cold, expectObservable }) => {
      const clock = () => new Date(scheduler.now());
      expectObservable(
        atScheduledTimes$(() => cold('---a|', { a: 'file' }), everyTen, clock),
        '^ 35ms !',
      ).toBe('13ms a 9ms a 9ms a', { a: { ok: true, result: 'file' } });
    });
  });

  it('never overlaps: a run that outlasts the next time is followed by the time after it ends', () => {
    const scheduler = newScheduler();
    scheduler.run(({ cold, expectObservable }) => {
      const clock = () => new Date(scheduler.now());
      // 10 → 25, then the next time after 25 is 30 → 45.
      expectObservable(
        atScheduledTimes$(() => cold('15ms a|', { a: 1 }), everyTen, clock),
        '^ 50ms !',
      ).toBe('25ms a 19ms a', { a: { ok: true, result: 1 } });
    });
  });

  it('reports a failed run and runs again at the next time', () => {
    const scheduler = newScheduler();
    scheduler.run(({ cold, expectObservable }) => {
      const clock = () => new Date(scheduler.now());
      let runs = 0;
      const run = () => {
        runs += 1;
        return runs === 1
          ? cold<string>('-#', undefined, new RangeError('disk full'))
          : cold('-a|', { a: 'ok' });
      };
      expectObservable(atScheduledTimes$(run, everyTen, clock), '^ 25ms !').toBe('11ms e 9ms a', {
        e: { ok: false, error: 'RangeError' },
        a: { ok: true, result: 'ok' },
      });
    });
  });
});
