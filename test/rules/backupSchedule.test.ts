/** When the service's own backup runs next (decision 0044): a pure rule, table-tested. */
import { expect } from 'chai';
import { nextBackupAt } from '../../src/rules/backupSchedule.js';

describe('nextBackupAt', () => {
  // what, now, BACKUP_AT, zone, the next run
  const cases: ReadonlyArray<readonly [string, string, string, string, string]> = [
    [
      'later today in São Paulo (UTC−3)',
      '2026-11-28T12:00:00.000Z',
      '23:30',
      'America/Sao_Paulo',
      '2026-11-29T02:30:00.000Z',
    ],
    [
      'tomorrow once today’s time has passed',
      '2026-11-28T06:00:00.000Z',
      '02:30',
      'America/Sao_Paulo',
      '2026-11-29T05:30:00.000Z',
    ],
    [
      'tomorrow when now is that very instant (a run never repeats itself)',
      '2026-11-29T05:30:00.000Z',
      '02:30',
      'America/Sao_Paulo',
      '2026-11-30T05:30:00.000Z',
    ],
    [
      'the same day a millisecond before',
      '2026-11-29T05:29:59.999Z',
      '02:30',
      'America/Sao_Paulo',
      '2026-11-29T05:30:00.000Z',
    ],
    [
      'midnight in UTC, across a year',
      '2026-12-31T23:59:00.000Z',
      '00:00',
      'UTC',
      '2027-01-01T00:00:00.000Z',
    ],
    [
      'a zone east of UTC, its date ahead of UTC’s',
      '2026-11-28T20:00:00.000Z',
      '02:30',
      'Asia/Tokyo',
      '2026-11-29T17:30:00.000Z',
    ],
    [
      'the day clocks skip 02:30 (New York, spring): an hour later on the wall',
      '2026-03-08T05:00:00.000Z',
      '02:30',
      'America/New_York',
      '2026-03-08T07:30:00.000Z',
    ],
    [
      'the day clocks show 01:30 twice (New York, autumn): the first',
      '2026-11-01T04:00:00.000Z',
      '01:30',
      'America/New_York',
      '2026-11-01T05:30:00.000Z',
    ],
  ];
  for (const [what, now, time, zone, next] of cases)
    it(what, () => {
      const [hour = 0, minute = 0] = time.split(':').map(Number);
      expect(nextBackupAt(new Date(now), { hour, minute }, zone).toISOString()).to.equal(next);
    });
});
