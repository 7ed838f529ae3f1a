import { retention$ } from '../../src/jobs/retention.js';
import { expectScheduled, failingOnce } from '../support/scheduleMarbles.js';

describe('retention job schedule (marbles)', () => {
  it('runs at once when the service starts, then at each time the schedule names', () => {
    expectScheduled(
      retention$,
      (cold) => () => cold('--a|', { a: 'done' }),
      '^ 35ms !',
      '2ms a 9ms a 9ms a 9ms a',
      {
        a: { ok: true, result: 'done' },
      },
    );
  });

  it('never overlaps: a start-up run that outlasts the first time is followed by the time after it ends', () => {
    // 0 → 25 (the start-up run), then the next time after 25 is 30 → 55.
    expectScheduled(retention$, (cold) => () => cold('25ms a|', { a: 1 }), '^ 60ms !', '25ms a 29ms a', {
      a: { ok: true, result: 1 },
    });
  });

  it('a failed start-up run is reported, and the schedule goes on', () => {
    expectScheduled(retention$, failingOnce(new TypeError('store away'), 2), '^ 15ms !', '1ms e 9ms a', {
      e: { ok: false, error: 'TypeError' },
      a: { ok: true, result: 2 },
    });
  });
});
