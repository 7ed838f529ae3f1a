/**
 * Recurring schedules (issue 21, decision 0031): a class that meets on some weekdays at a local time
 * gets its sessions made ahead. A schedule is a record of the private database; the sessions it makes
 * are ordinary class sessions whose ids are derived from the schedule and the date.
 */
import * as t from 'io-ts';
import {
  boundedArray,
  boundedString,
  calendarDate,
  IsoInstant,
  isUuid,
  nullable,
  object,
  PathId,
  refine,
  Uuid,
} from './codec.js';

export const WEEKDAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'] as const;
export type Weekday = (typeof WEEKDAYS)[number];
export const WeekdayC = t.keyof(Object.fromEntries(WEEKDAYS.map((d) => [d, null])) as Record<Weekday, null>);

export const DEFAULT_TIME_ZONE = 'America/Sao_Paulo';

const isTimeZone = (s: string): boolean => {
  try {
    new Intl.DateTimeFormat('en', { timeZone: s });
    return true;
  } catch {
    return false;
  }
};

export const TimeZone = refine(t.string, (s) => s.length <= 64 && isTimeZone(s), 'an IANA time zone', {
  maxLength: 64,
  description: 'An IANA time zone name; default America/Sao_Paulo.',
  examples: ['America/Sao_Paulo'],
});

export const LocalTime = refine(t.string, (s) => /^([01]\d|2[0-3]):[0-5]\d$/.test(s), 'a local time HH:MM', {
  pattern: '^([01]\\d|2[0-3]):[0-5]\\d$',
  maxLength: 5,
  examples: ['09:00'],
});

const Weekdays = refine(
  t.array(WeekdayC),
  (a) => a.length >= 1 && new Set(a).size === a.length,
  'one to seven distinct weekdays',
  { minItems: 1, maxItems: 7 },
);
const ScheduleDate = calendarDate({ examples: ['2026-03-01'] });
const DateList = refine(t.array(ScheduleDate), (a) => a.length <= 366, 'at most 366 dates', {
  maxItems: 366,
});
const Title = boundedString(1, 120);
const Duration = refine(
  t.number,
  (n) => Number.isInteger(n) && n >= 1 && n <= 1440,
  'whole minutes, 1 to 1440',
  {
    integer: true,
    minimum: 1,
    maximum: 1440,
  },
);
const ReadOnlyId = refine(t.string, isUuid, 'a UUID', { format: 'uuid', maxLength: 36, readOnly: true });

export const ScheduleStatus = t.keyof({ ACTIVE: null, ENDED: null });

export const ScheduleDoc = t.type({
  _id: t.string,
  _rev: t.string,
  docType: t.literal('schedule'),
  scheduleId: t.string,
  classId: t.string,
  weekdays: t.array(WeekdayC),
  localTime: t.string,
  durationMinutes: t.union([t.number, t.null]),
  timeZone: t.string,
  title: t.union([t.string, t.null]),
  from: t.string,
  until: t.union([t.string, t.null]),
  skipDates: t.array(t.string),
  extraDates: t.array(t.string),
  status: ScheduleStatus,
  createdAt: t.string,
  updatedAt: t.string,
});
export type ScheduleDoc = t.TypeOf<typeof ScheduleDoc>;
export type ScheduleFields = Omit<ScheduleDoc, '_id' | '_rev' | 'docType' | 'scheduleId'>;

export const Schedule = object(
  'Schedule',
  {
    scheduleId: ReadOnlyId,
    classId: Uuid,
    weekdays: Weekdays,
    localTime: LocalTime,
    durationMinutes: nullable(Duration),
    timeZone: TimeZone,
    title: nullable(Title),
    from: ScheduleDate,
    until: nullable(ScheduleDate),
    skipDates: DateList,
    extraDates: DateList,
    status: ScheduleStatus,
    createdAt: IsoInstant,
    updatedAt: IsoInstant,
  },
  {},
  {
    description:
      'A class meeting on `weekdays` at `localTime` in `timeZone`, from `from` until `until` (inclusive; null: ' +
      'no end). `skipDates` are dates it does not meet (holidays); `extraDates` dates it meets besides. ' +
      'Sessions are made for today and the next 27 days, with ids derived from the schedule and the date.',
  },
);
export type Schedule = t.TypeOf<typeof Schedule>;

export const toSchedule = (d: ScheduleDoc): Schedule => ({
  scheduleId: d.scheduleId,
  classId: d.classId,
  weekdays: d.weekdays,
  localTime: d.localTime,
  durationMinutes: d.durationMinutes,
  timeZone: d.timeZone,
  title: d.title,
  from: d.from,
  until: d.until,
  skipDates: d.skipDates,
  extraDates: d.extraDates,
  status: d.status,
  createdAt: d.createdAt,
  updatedAt: d.updatedAt,
});

// Every schedule of the deployment: a class has a few at most (decision 0029 lists the whole lists).
export const ScheduleList = object('ScheduleList', { items: boundedArray(Schedule, 10_000) });

export const CreateScheduleBody = object(
  'CreateScheduleBody',
  { classId: Uuid, weekdays: Weekdays, localTime: LocalTime, from: ScheduleDate },
  {
    timeZone: TimeZone,
    title: nullable(Title),
    until: nullable(ScheduleDate),
    durationMinutes: nullable(Duration),
  },
  {
    description:
      '`classId` must name an existing class; `until`, when given, not before `from` (400 otherwise).',
  },
);
export type CreateScheduleBody = t.TypeOf<typeof CreateScheduleBody>;

export const PatchScheduleBody = object(
  'PatchScheduleBody',
  {},
  {
    weekdays: Weekdays,
    localTime: LocalTime,
    timeZone: TimeZone,
    title: nullable(Title),
    until: nullable(ScheduleDate),
    durationMinutes: nullable(Duration),
  },
  {
    description:
      'Any subset. Sessions still to come without check-ins follow the change; past sessions and sessions with ' +
      'check-ins stay as they are.',
  },
);
export type PatchScheduleBody = t.TypeOf<typeof PatchScheduleBody>;

export const ScheduleDateBody = object('ScheduleDateBody', { date: ScheduleDate });
export const EndScheduleBody = object(
  'EndScheduleBody',
  {},
  { lastDate: ScheduleDate },
  { description: "The last date the class meets; default: today in the schedule's time zone." },
);
export const ScheduleIdParams = object('ScheduleIdParams', { scheduleId: PathId });
