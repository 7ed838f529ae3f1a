import { atScheduledTimes$ } from '../../src/jobs/nightlyBackup.js';
import { expectScheduled, failingOnce } from '../support/scheduleMarbles.js';

describe('nightly backup schedule (marbles)', () => {
  it('runs at each time the schedule names', () => {
    expectScheduled(
      atScheduledTimes$,
      (cold) => () => cold('---a|', { a: 'file' }),
      '^ 35ms !',
      '13ms a 9ms a 9ms a',
      { a: { ok: true, result: 'file' } },
    );
  });

  it('never overlaps: a run that outlasts the next time is followed by the time after it ends', () => {
    // 10 → 25, then the next time after 25 is 30 → 45.
    expectScheduled(
      atScheduledTimes$,
      (cold) => () => cold('15ms a|', { a: 1 }),
      '^ 50ms !',
      '25ms a 19ms a',
      {
        a: { ok: true, result: 1 },
      },
    );
  });

  it('reports a failed run and runs again at the next time', () => {
    expectScheduled(
      atScheduledTimes$,
      failingOnce(new RangeError('disk full'), 'ok'),
      '^ 25ms !',
      '11ms e 9ms a',
      {
        e: { ok: false, error: 'RangeError' },
        a: { ok: true, result: 'ok' },
      },
    );
  });
});
