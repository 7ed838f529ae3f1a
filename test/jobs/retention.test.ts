import { expect } from 'chai';
import { TestScheduler } from 'rxjs/testing';
import { retention$ } from '../../src/jobs/retention.js';

const newScheduler = () =>
  new TestScheduler((actual, expected) => {
    expect(actual).to.deep.equal(expected);
  });

/** A schedule of every tenth millisecond: the next multiple of 10 after now. */
const everyTen = (now: Date) => new Date(Math.floor(now.getTime() / 10) * 10 + 10);

describe('retention job schedule (marbles)', () => {
  it('runs at once when the service starts, then at each time the schedule names', () => {
    const scheduler = newScheduler();
    scheduler.run(({ cold, expectObservable }) => {
      const clock = () => new Date(scheduler.now());
      expectObservable(
        retention$(() => cold('--a|', { a: 'done' }), everyTen, clock),
        '^ 35ms !',
      ).toBe('2ms a 9ms a 9ms a 9ms a', { a: { ok: true, result: 'done' } });
    });
  });

  it('never overlaps: a start-up run that outlasts the first time is followed by the time after it ends', () => {
    const scheduler = newScheduler();
    scheduler.run(({ cold, expectObservable }) => {
      const clock = () => new Date(scheduler.now());
      // 0 → 25 (the start-up run), then the next time after 25 is 30 → 55.
      expectObservable(
        retention$(() => cold('25ms a|', { a: 1 }), everyTen, clock),
        '^ 60ms !',
      ).toBe('25ms a 29ms a', { a: { ok: true, result: 1 } });
    });
  });

  it('a failed start-up run is reported, and the schedule goes on', () => {
    const scheduler = newScheduler();
    scheduler.run(({ cold, expectObservable }) => {
      const clock = () => new Date(scheduler.now());
      let runs = 0;
      const run = () => {
        runs += 1;
        return runs === 1
          ? cold<number>('-#', undefined, new TypeError('store away'))
          : cold('-a|', { a: 2 });
      };
      expectObservable(retention$(run, everyTen, clock), '^ 15ms !').toBe('1ms e 9ms a', {
        e: { ok: false, error: 'TypeError' },
        a: { ok: true, result: 2 },
      });
    });
  });
});
