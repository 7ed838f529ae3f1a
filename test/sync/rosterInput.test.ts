/**
 * The roster's day window: keys by UTC day (codes derive from the UTC day of the check-in), sessions a
 * day either side, so a tablet anywhere from UTC-12 to UTC+14 finds the sessions of its own today and
 * next two days. The bug this pins: at 21:30 in Brazil (00:30 UTC the next day) the session dated
 * "today" on the tablet's calendar had left the roster.
 */
import { expect } from 'chai';
import { KEY_DAYS, rosterWindow } from '../../src/sync/rosterInput.js';
import { seedSmallRoster } from '../support/seed.js';
import { makeTablet } from '../support/tablet.js';
import { DEV_TOKENS, startTestService } from '../support/testService.js';

const HOUR_MS = 3_600_000;
/** The calendar day at `now` for a clock `offsetHours` from UTC. */
const localDay = (now: Date, offsetHours: number): string =>
  new Date(now.getTime() + offsetHours * HOUR_MS).toISOString().slice(0, 10);
const nextDays = (day: string, n: number): string[] =>
  Array.from({ length: n }, (_, i) =>
    new Date(Date.parse(day) + i * 24 * HOUR_MS).toISOString().slice(0, 10),
  );

describe('roster window: which days a tablet receives', () => {
  const table = [
    {
      what: 'Brazil, 20:30 on the 25th (still the 25th in UTC)',
      now: '2026-11-25T23:30:00.000Z',
      keys: ['2026-11-25', '2026-11-26', '2026-11-27'],
      sessions: ['2026-11-24', '2026-11-25', '2026-11-26', '2026-11-27', '2026-11-28'],
    },
    {
      what: 'Brazil, 21:30 on the 25th (the 26th in UTC): the 25th stays',
      now: '2026-11-26T00:30:00.000Z',
      keys: ['2026-11-26', '2026-11-27', '2026-11-28'],
      sessions: ['2026-11-25', '2026-11-26', '2026-11-27', '2026-11-28', '2026-11-29'],
    },
    {
      what: 'Tokyo, 05:00 on the 26th (the 25th in UTC): the 28th is already there',
      now: '2026-11-25T20:00:00.000Z',
      keys: ['2026-11-25', '2026-11-26', '2026-11-27'],
      sessions: ['2026-11-24', '2026-11-25', '2026-11-26', '2026-11-27', '2026-11-28'],
    },
    {
      what: 'UTC midnight exactly, across a month and a year',
      now: '2026-12-31T00:00:00.000Z',
      keys: ['2026-12-31', '2027-01-01', '2027-01-02'],
      sessions: ['2026-12-30', '2026-12-31', '2027-01-01', '2027-01-02', '2027-01-03'],
    },
  ] as const;

  for (const row of table) {
    it(row.what, () => {
      const w = rosterWindow(new Date(row.now));
      expect(w.keyDays).to.deep.equal(row.keys);
      expect(w.sessionDays).to.deep.equal(row.sessions);
      // Events are dated by the device's clock: a day either side of the sessions.
      expect(w.aspectFrom < (w.sessionDays[0] ?? '')).to.equal(true);
      expect(w.aspectTo > (w.sessionDays.at(-1) ?? '')).to.equal(true);
    });
  }

  it("holds every time zone's today and next two days, at every hour of a day", () => {
    for (let minute = 0; minute < 24 * 60; minute += 15) {
      const now = new Date(Date.parse('2026-11-25T00:00:00.000Z') + minute * 60_000);
      const w = rosterWindow(now);
      for (let offset = -12; offset <= 14; offset += 0.5) {
        for (const day of nextDays(localDay(now, offset), KEY_DAYS)) {
          expect(w.sessionDays, `${now.toISOString()} at UTC${offset >= 0 ? '+' : ''}${offset}`).to.include(
            day,
          );
        }
      }
    }
  });
});

describe('roster window: a session dated on the tablet calendar reaches the tablet after 21:00 in Brazil', function () {
  this.timeout(60_000);

  it('pulls the session of the 25th at 21:30 Brasília time (00:30 UTC on the 26th)', async () => {
    const svc = await startTestService({ clock: () => new Date('2026-11-26T00:30:00.000Z') });
    const tablet = makeTablet(svc.url, DEV_TOKENS.DEV_CALLER_TOKEN);
    try {
      const { sessionId } = await seedSmallRoster(svc.url, ['Ana'], '2026-11-25');
      await svc.deps.sync.pipeline.catchUp();
      await svc.deps.replication.reconciler.refresh();
      const pulled = await tablet.pull();
      expect(pulled.ok).to.equal(true);
      expect([...(await tablet.docs('rosterSession')).keys()]).to.deep.equal([`session:${sessionId}`]);
      const keys = (await tablet.docs('rosterDayKeys')).get('daykeys')?.keys;
      expect(keys).to.be.an('array').with.length(KEY_DAYS);
    } finally {
      await tablet.close();
      await svc.dispose();
    }
  });
});
