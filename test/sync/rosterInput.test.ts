/**
 * The roster's day window: keys by UTC day (codes derive from the UTC day of the check-in), sessions a
 * day either side, so a tablet anywhere from UTC-12 to UTC+14 finds the sessions of its own today and
 * next two days. The bug this pins: at 21:30 in Brazil (00:30 UTC the next day) the session dated
 * "today" on the tablet's calendar had left the roster.
 */
import { expect } from 'chai';
import * as t from 'io-ts';
import { KEY_DAYS, rosterWindow } from '../../src/sync/rosterInput.js';
import { decodeAs } from '../support/http.js';
import { createdId, seedSmallRoster } from '../support/seed.js';
import { makeTablet, type Tablet } from '../support/tablet.js';
import { DEV_TOKENS, mutate, startTestService } from '../support/testService.js';

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

describe('roster: the admission facts reach a tablet as the records change, by the private feed alone', function () {
  this.timeout(60_000);

  /** Pulls until `seen` holds of what the tablet has (the reconciler runs on its own triggers). */
  const pullUntil = async (tablet: Tablet, seen: () => Promise<boolean>): Promise<void> => {
    const until = Date.now() + 10_000;
    for (;;) {
      expect((await tablet.pull()).ok).to.equal(true);
      if (await seen()) return;
      if (Date.now() > until) throw new Error('the roster did not change');
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  it("a volunteer checked in and out, the church's required fields and a birth month (never the day)", async () => {
    const svc = await startTestService({ clock: () => new Date('2026-11-26T12:00:00.000Z') });
    const tablet = makeTablet(svc.url, DEV_TOKENS.DEV_CALLER_TOKEN);
    const send = (method: string, path: string, body: unknown) =>
      mutate(`${svc.url}${path}`, method, body, DEV_TOKENS.DEV_ADMIN_TOKEN);
    try {
      const classId = await createdId(
        svc.url,
        '/api/v1/classes',
        { name: 'Jardim', childrenPerVolunteer: 5, ageRange: { minMonths: 36, maxMonths: 71 } },
        'classId',
      );
      const sessionId = await createdId(
        svc.url,
        '/api/v1/sessions',
        { classId, date: '2026-11-26' },
        'sessionId',
      );
      const studentId = await createdId(
        svc.url,
        '/api/v1/students',
        { displayName: 'Ana', guardianName: 'G', phones: [], classId, birthDate: '2021-04-17' },
        'studentId',
      );
      const session = async () => (await tablet.docs('rosterSession')).get(`session:${sessionId}`);
      // The class, the session and the student reach the roster by separate passes (a pass writes
      // what has changed since the last): wait for all three, not for whichever lands first.
      const student = async () => (await tablet.docs('rosterStudent')).get(`student:${studentId}`);
      await pullUntil(
        tablet,
        async () =>
          (await session())?.volunteers === 0 &&
          (await student()) !== undefined &&
          (await tablet.docs('rosterClass')).has(`class:${classId}`),
      );
      expect((await tablet.docs('rosterClass')).get(`class:${classId}`)).to.deep.include({
        ageRange: { minMonths: 36, maxMonths: 71 },
      });
      const ana = await student();
      expect(ana).to.have.nested.property('admission.birthMonth', '2021-04');
      expect(JSON.stringify(ana)).not.to.contain('2021-04-17');

      const added = await send('POST', `/api/v1/sessions/${sessionId}/volunteers`, { name: 'Seu Jorge' });
      expect(added.status, added.text).to.equal(201);
      const { volunteerId } = decodeAs(t.type({ volunteerId: t.string }), added.json);
      await pullUntil(tablet, async () => (await session())?.volunteers === 1);
      const left = await send('DELETE', `/api/v1/sessions/${sessionId}/volunteers/${volunteerId}`, undefined);
      expect(left.status, left.text).to.equal(200);
      await pullUntil(tablet, async () => (await session())?.volunteers === 0);

      const config = await send('PUT', '/api/v1/church/check-in-config', {
        pickupMode: 'CODE_ONLY',
        maxCheckoutAttempts: 5,
        emergencyCheckoutAdminOnly: false,
        requiredFields: ['birthDate', 'imageConsent'],
      });
      expect(config.status, config.text).to.equal(200);
      await pullUntil(
        tablet,
        async () =>
          JSON.stringify((await tablet.docs('rosterAdmission')).get('admission')?.requiredFields) ===
          JSON.stringify(['birthDate', 'imageConsent']),
      );
    } finally {
      await tablet.close();
      await svc.dispose();
    }
  });
});
