/**
 * Recurring schedules, pure: which dates a schedule meets on within a window, the UTC instant of a
 * local meeting time (time zones through `Intl`, no date library), and what materialising a window
 * does to the sessions that exist. Materialising is a function of the schedule, the window and what
 * exists, so running it twice, after a restart or on two instances changes nothing the second time.
 */
import type { ScheduleFields, Weekday } from '../domain/schedules.js';
import { WEEKDAYS } from '../domain/schedules.js';

/** How far ahead sessions are made: today and the next 27 days (four weeks, which covers the tablets' three days). */
export const WINDOW_DAYS = 28;

export const addDays = (date: string, days: number): string =>
  new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);

export const weekdayOf = (date: string): Weekday =>
  WEEKDAYS[new Date(`${date}T00:00:00Z`).getUTCDay()] ?? 'SUN';

/** The calendar date at `now` in `timeZone`. */
export const localDate = (now: Date, timeZone: string): string =>
  // en-CA formats as YYYY-MM-DD.
  new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(
    now,
  );

/** The offset of `timeZone` from UTC at the instant `utcMs`, in milliseconds. */
const offsetAt = (utcMs: number, timeZone: string): number => {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(new Date(utcMs));
  const n = (type: string): number => Number(parts.find((p) => p.type === type)?.value ?? '0');
  const wall = Date.UTC(n('year'), n('month') - 1, n('day'), n('hour'), n('minute'), n('second'));
  return wall - Math.floor(utcMs / 1000) * 1000;
};

/**
 * The UTC instant of `localTime` on `date` in `timeZone`. The offset is read at a first guess and
 * again at the result, so a meeting just after a daylight-saving change gets the new offset; a local
 * time that does not exist (skipped by a change) lands an hour later, as clocks do.
 */
export const zonedInstant = (date: string, localTime: string, timeZone: string): string => {
  const asUtc = Date.parse(`${date}T${localTime}:00Z`);
  const first = asUtc - offsetAt(asUtc, timeZone);
  const second = asUtc - offsetAt(first, timeZone);
  // In the gap of a spring-forward the second reading falls back before the change (01:30 for 02:30):
  // the first, read before the change, is the time the clocks show an hour on (03:30).
  const shows = second + offsetAt(second, timeZone);
  return new Date(shows === asUtc ? second : first).toISOString();
};

/** The dates from `from` to `to` (inclusive) a schedule meets on: its weekdays within its span, less skips, plus extras. */
export const occurrences = (
  schedule: Pick<ScheduleFields, 'weekdays' | 'from' | 'until' | 'skipDates' | 'extraDates'>,
  from: string,
  to: string,
): string[] => {
  const out: string[] = [];
  const start = schedule.from > from ? schedule.from : from;
  const end = schedule.until !== null && schedule.until < to ? schedule.until : to;
  const skips = new Set(schedule.skipDates);
  for (let d = start; d <= end; d = addDays(d, 1)) {
    if (schedule.weekdays.includes(weekdayOf(d)) && !skips.has(d)) out.push(d);
  }
  for (const extra of schedule.extraDates) {
    if (extra >= from && extra <= to && !out.includes(extra) && !skips.has(extra)) out.push(extra);
  }
  return out.sort();
};

export interface SessionShape {
  readonly classId: string;
  readonly nucleusId: string | null;
  readonly date: string;
  readonly title: string | null;
  readonly startsAt: string | null;
  readonly endsAt: string | null;
}

/** The session a schedule wants on `date`. */
export const sessionOf = (
  schedule: Pick<ScheduleFields, 'classId' | 'localTime' | 'timeZone' | 'title' | 'durationMinutes'>,
  nucleusId: string | null,
  date: string,
): SessionShape => {
  const startsAt = zonedInstant(date, schedule.localTime, schedule.timeZone);
  return {
    classId: schedule.classId,
    nucleusId,
    date,
    title: schedule.title,
    startsAt,
    endsAt:
      schedule.durationMinutes === null
        ? null
        : new Date(Date.parse(startsAt) + schedule.durationMinutes * 60_000).toISOString(),
  };
};

export interface MaterialisationPlan {
  readonly create: ReadonlyArray<SessionShape>;
  readonly update: ReadonlyArray<SessionShape>;
  /** Dates whose session the schedule no longer wants. */
  readonly remove: ReadonlyArray<string>;
}

const sameSession = (a: SessionShape, b: SessionShape): boolean =>
  a.classId === b.classId &&
  a.nucleusId === b.nucleusId &&
  a.title === b.title &&
  a.startsAt === b.startsAt &&
  a.endsAt === b.endsAt;

const NOTHING: MaterialisationPlan = { create: [], update: [], remove: [] };

/**
 * What to do with the window's sessions: create the wanted ones that do not exist; change or remove
 * an existing one only while it is still to come (it has not started, or has no time and is after
 * today) and nobody has checked in to it. A session that has begun, or has check-ins, is history.
 *
 * A deactivated class (decision 0047) gets nothing: no new session, and its existing ones are left
 * exactly as they are (closed by the class), so reactivating it brings them back as they were and the
 * next run makes the ones it skipped meanwhile.
 */
export const planMaterialisation = (input: {
  readonly classActive: boolean;
  readonly wanted: ReadonlyArray<SessionShape>;
  /** The schedule's sessions that exist in the window, by date. */
  readonly existing: ReadonlyMap<string, SessionShape>;
  /** Dates whose session has check-ins. */
  readonly checkedIn: ReadonlySet<string>;
  readonly now: string;
  readonly today: string;
}): MaterialisationPlan => {
  if (!input.classActive) return NOTHING;
  const toCome = (s: SessionShape): boolean =>
    !input.checkedIn.has(s.date) && (s.startsAt === null ? s.date > input.today : s.startsAt > input.now);
  const wantedDates = new Set(input.wanted.map((s) => s.date));
  const create: SessionShape[] = [];
  const update: SessionShape[] = [];
  for (const want of input.wanted) {
    const have = input.existing.get(want.date);
    if (have === undefined) {
      // A session wanted for a time already past today is still made: the class may be meeting now.
      create.push(want);
    } else if (!sameSession(have, want) && toCome(have)) update.push(want);
  }
  const remove = [...input.existing.values()]
    .filter((s) => !wantedDates.has(s.date) && toCome(s))
    .map((s) => s.date);
  return { create, update, remove };
};
