/** The pure rules of recurring schedules: dates, local times in zones, and idempotent materialisation. */
import { expect } from 'chai';
import fc from 'fast-check';
import type { Weekday } from '../../src/domain/schedules.js';
import {
  addDays,
  localDate,
  occurrences,
  planMaterialisation,
  type SessionShape,
  sessionOf,
  weekdayOf,
  zonedInstant,
} from '../../src/rules/schedules.js';

const sundays: Weekday[] = ['SUN'];
const base = { weekdays: sundays, from: '2026-03-01', until: null, skipDates: [], extraDates: [] };
const schedule = {
  classId: 'c',
  localTime: '09:00',
  timeZone: 'America/Sao_Paulo',
  title: 'Culto infantil',
  durationMinutes: 90,
};

describe('schedule rules', () => {
  it('weekdays and days are read in the calendar, not a time zone', () => {
    expect(weekdayOf('2026-03-01')).to.equal('SUN');
    expect(weekdayOf('2026-03-04')).to.equal('WED');
    expect(addDays('2026-02-27', 3)).to.equal('2026-03-02');
  });

  describe('zonedInstant', () => {
    const table: Array<[string, string, string, string]> = [
      ['2026-03-01', '09:00', 'America/Sao_Paulo', '2026-03-01T12:00:00.000Z'],
      ['2026-07-05', '19:30', 'America/Sao_Paulo', '2026-07-05T22:30:00.000Z'],
      ['2026-03-01', '09:00', 'UTC', '2026-03-01T09:00:00.000Z'],
      // New York: standard time before 8 March 2026, daylight time after.
      ['2026-03-01', '09:00', 'America/New_York', '2026-03-01T14:00:00.000Z'],
      ['2026-03-15', '09:00', 'America/New_York', '2026-03-15T13:00:00.000Z'],
      // 02:30 does not exist on the morning clocks go forward: it lands an hour later.
      ['2026-03-08', '02:30', 'America/New_York', '2026-03-08T07:30:00.000Z'],
      ['2026-03-01', '23:30', 'Asia/Kolkata', '2026-03-01T18:00:00.000Z'],
    ];
    for (const [date, time, zone, expected] of table)
      it(`${date} ${time} in ${zone} is ${expected}`, () =>
        expect(zonedInstant(date, time, zone)).to.equal(expected));
  });

  it("today is the zone's date: 01:00 UTC is still yesterday in São Paulo", () =>
    expect(localDate(new Date('2026-03-02T01:00:00Z'), 'America/Sao_Paulo')).to.equal('2026-03-01'));

  it('occurrences: weekdays within the span, less skipped dates, plus added ones', () => {
    expect(occurrences({ ...base, weekdays: ['SUN', 'WED'] }, '2026-03-01', '2026-03-14')).to.deep.equal([
      '2026-03-01',
      '2026-03-04',
      '2026-03-08',
      '2026-03-11',
    ]);
    expect(
      occurrences(
        { ...base, until: '2026-03-20', skipDates: ['2026-03-08'], extraDates: ['2026-03-10', '2026-04-01'] },
        '2026-03-02',
        '2026-03-28',
      ),
    ).to.deep.equal(['2026-03-10', '2026-03-15']);
  });

  describe('planMaterialisation', () => {
    const want = (date: string, over: Partial<SessionShape> = {}): SessionShape => ({
      ...sessionOf(schedule, null, date),
      ...over,
    });
    const now = '2026-03-01T13:00:00.000Z';
    const today = '2026-03-01';
    it('creates what is missing and leaves what exists as wanted', () => {
      const plan = planMaterialisation({
        classActive: true,
        wanted: [want('2026-03-01'), want('2026-03-08')],
        existing: new Map([['2026-03-01', want('2026-03-01')]]),
        checkedIn: new Set(),
        now,
        today,
      });
      expect(plan.create.map((s) => s.date)).to.deep.equal(['2026-03-08']);
      expect([plan.update, plan.remove]).to.deep.equal([[], []]);
    });
    it('changes and removes only sessions to come without check-ins', () => {
      const plan = planMaterialisation({
        classActive: true,
        wanted: [want('2026-03-01'), want('2026-03-08'), want('2026-03-15')],
        existing: new Map([
          ['2026-03-01', want('2026-03-01', { title: 'old' })], // began at 12:00: history
          ['2026-03-08', want('2026-03-08', { title: 'old' })], // to come: follows
          ['2026-03-15', want('2026-03-15', { title: 'old' })], // checked in: stays
          ['2026-03-22', want('2026-03-22')], // no longer wanted: goes
          ['2026-03-29', want('2026-03-29')], // no longer wanted, but checked in: stays
        ]),
        checkedIn: new Set(['2026-03-15', '2026-03-29']),
        now,
        today,
      });
      expect(plan.update.map((s) => s.date)).to.deep.equal(['2026-03-08']);
      expect(plan.remove).to.deep.equal(['2026-03-22']);
      expect(plan.create).to.deep.equal([]);
    });
    it('a deactivated class gets nothing made, changed or removed; reactivated, the missing are made', () => {
      const input = {
        wanted: [want('2026-03-01'), want('2026-03-08'), want('2026-03-15')],
        existing: new Map([
          ['2026-03-08', want('2026-03-08', { title: 'old' })], // to come, differs
          ['2026-03-22', want('2026-03-22')], // no longer wanted
        ]),
        checkedIn: new Set<string>(),
        now,
        today,
      };
      expect(planMaterialisation({ ...input, classActive: false })).to.deep.equal({
        create: [],
        update: [],
        remove: [],
      });
      const reactivated = planMaterialisation({ ...input, classActive: true });
      expect(reactivated.create.map((s) => s.date)).to.deep.equal(['2026-03-01', '2026-03-15']);
      expect(reactivated.update.map((s) => s.date)).to.deep.equal(['2026-03-08']);
      expect(reactivated.remove).to.deep.equal(['2026-03-22']);
    });
  });

  it('property: materialising twice changes nothing the second time, whatever the schedule and the start', () => {
    const weekday = fc.constantFrom<Weekday>('SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT');
    const day = fc.integer({ min: 0, max: 60 }).map((n) => addDays('2026-01-01', n));
    fc.assert(
      fc.property(
        fc.uniqueArray(weekday, { minLength: 1, maxLength: 7 }),
        day,
        fc.option(day, { nil: null }),
        fc.array(day, { maxLength: 5 }),
        fc.array(day, { maxLength: 5 }),
        day,
        (weekdays, from, until, skipDates, extraDates, today) => {
          const s = { weekdays, from, until, skipDates, extraDates };
          const wanted = occurrences(s, today, addDays(today, 27)).map((d) => sessionOf(schedule, null, d));
          const now = `${today}T00:00:00.000Z`;
          const first = planMaterialisation({
            classActive: true,
            wanted,
            existing: new Map(),
            checkedIn: new Set(),
            now,
            today,
          });
          const stored = new Map(first.create.map((x) => [x.date, x]));
          const second = planMaterialisation({
            classActive: true,
            wanted,
            existing: stored,
            checkedIn: new Set(),
            now,
            today,
          });
          expect([second.create, second.update, second.remove]).to.deep.equal([[], [], []]);
        },
      ),
    );
  });
});
