/**
 * The admins' view as data: its address, the day it shows, the conflict and attendance lines with the
 * names resolved, and the rows of its CSV files. Pure (no DOM, no fetch), so the screen only draws.
 *
 * The day is the tablet's calendar day, as everywhere on the kiosk. The reports speak UTC: conflicts
 * are asked for between the day's local midnights, and attendance for the UTC days either side, then
 * kept to the rows of sessions dated that day (a session at 19:00 in Brazil has check-ins on the next
 * UTC day).
 */
import { type PolicyRefusal, REQUIRED_FIELDS, type RequiredField } from '../../rules/admission.js';
import type {
  AdmissionItem,
  AdmissionRefusalItem,
  AttendanceRow,
  ConflictItem,
  ConflictSide,
  PageItem,
  SessionInfo,
} from './adminApi.js';

export type AdminTab = 'conflicts' | 'attendance' | 'pages';

export const adminHash = (tab: AdminTab): string => `#/admin/${tab}`;

/** The tab an address opens, if it is the admins' view (`#/admin` alone opens the conflicts). */
export const adminRoute = (hash: string): AdminTab | undefined => {
  const m = /^#\/admin(?:\/(conflicts|attendance|pages))?\/?$/.exec(hash);
  if (m === null) return undefined;
  return m[1] === 'attendance' || m[1] === 'pages' ? m[1] : 'conflicts';
};

const DAY_RE = /^(\d{4})-(\d{2})-(\d{2})$/;
const pad = (n: number, width = 2): string => String(Math.abs(n)).padStart(width, '0');

export const isDay = (s: string): boolean => {
  const m = DAY_RE.exec(s);
  if (m === null) return false;
  const at = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return at.toISOString().slice(0, 10) === s;
};

/** The instants of the day's local midnight and the next one (23 or 25 hours apart on DST days). */
export const localDayBounds = (day: string): { readonly from: string; readonly to: string } => {
  const m = DAY_RE.exec(day);
  if (m === null) throw new Error(`not a day: ${day}`);
  const [y, mo, d] = [Number(m[1]), Number(m[2]) - 1, Number(m[3])];
  return { from: new Date(y, mo, d).toISOString(), to: new Date(y, mo, d + 1).toISOString() };
};

/** A calendar day `n` days from `day`. */
export const addDays = (day: string, n: number): string =>
  new Date(Date.parse(`${day}T00:00:00.000Z`) + n * 86_400_000).toISOString().slice(0, 10);

/**
 * An instant as the tablet's wall clock reads it, with its offset (`2026-11-25T21:30:00.000-03:00`):
 * unambiguous in a file, and what a person at that desk saw. `offsetMinutes` east of UTC.
 */
export const withOffset = (iso: string, offsetMinutes: number): string => {
  const at = new Date(Date.parse(iso) + offsetMinutes * 60_000);
  const sign = offsetMinutes < 0 ? '-' : '+';
  // Milliseconds kept: between equals the later device time wins a conflict, sometimes by less than a second.
  return `${at.toISOString().slice(0, 23)}${sign}${pad(Math.trunc(offsetMinutes / 60))}:${pad(offsetMinutes % 60)}`;
};

/** In the tablet's own time zone. */
export const localInstant = (iso: string): string => withOffset(iso, -new Date(iso).getTimezoneOffset());

export interface Names {
  readonly students: ReadonlyMap<string, string>;
  readonly users: ReadonlyMap<string, string>;
  readonly classes: ReadonlyMap<string, string>;
  readonly sessions: ReadonlyMap<string, SessionInfo>;
}

export interface SideLine {
  readonly eventId: string;
  readonly userId: string;
  /** The user's display name, when this tablet could learn it (ADMIN); else null. */
  readonly userName: string | null;
  readonly role: string;
  readonly deviceId: string | null;
  readonly thisDevice: boolean;
  readonly clientTimestamp: string;
  readonly serverTimestamp: string;
  readonly change: string;
  readonly field: string | null;
}

export interface ConflictLine {
  readonly aspect: string;
  readonly kind: string;
  readonly studentId: string;
  readonly child: string | null;
  readonly policy: string;
  readonly detectedAt: string;
  readonly winner: SideLine;
  readonly loser: SideLine;
}

const sideLine = (s: ConflictSide, names: Names, deviceId: string): SideLine => ({
  eventId: s.eventId,
  userId: s.userId,
  userName: names.users.get(s.userId) ?? null,
  role: s.role,
  deviceId: s.deviceId,
  thisDevice: s.deviceId !== null && s.deviceId === deviceId,
  clientTimestamp: s.clientTimestamp,
  serverTimestamp: s.serverTimestamp,
  change: s.change.type,
  field: s.change.field ?? null,
});

/** Newest first: the screen is read to see what just happened. */
export const conflictLines = (
  items: ReadonlyArray<ConflictItem>,
  names: Names,
  deviceId: string,
): ConflictLine[] =>
  items
    .map((c) => ({
      aspect: c.aspect,
      kind: c.kind,
      // Every aspect kind names a student as its subject.
      studentId: c.subjectId,
      child: names.students.get(c.subjectId) ?? null,
      policy: c.policy,
      detectedAt: c.detectedAt,
      winner: sideLine(c.winner, names, deviceId),
      loser: sideLine(c.loser, names, deviceId),
    }))
    .sort(
      (a, b) => b.detectedAt.localeCompare(a.detectedAt) || a.loser.eventId.localeCompare(b.loser.eventId),
    );

/** The students the report's items name whose names are not known yet. */
export const unnamedStudents = (
  items: ReadonlyArray<{ readonly subjectId: string }>,
  known: ReadonlyMap<string, string>,
) => [...new Set(items.map((c) => c.subjectId).filter((id) => !known.has(id)))];

/**
 * A check-in recorded offline that the admission rule would have refused on arrival: the child, every
 * rule it broke and who made it, on which device, when. It was kept (the child is in the room).
 */
export interface ExceptionLine {
  readonly aspect: string;
  readonly studentId: string;
  readonly child: string | null;
  /** The first rule broken, by its code. */
  readonly reason: string;
  /** Each rule broken: its code, and the rule's own refusal when the report gave all its facts. */
  readonly refusals: ReadonlyArray<{ readonly code: string; readonly refusal: PolicyRefusal | null }>;
  readonly detectedAt: string;
  readonly checkIn: SideLine;
}

const isRequiredField = (s: string): s is RequiredField => REQUIRED_FIELDS.some((f) => f === s);

/**
 * The report's refusal as the rule states it, so the screen says it in the same words as the desk; null
 * for a reason this tablet does not know or facts missing (a newer or older server), shown by its code.
 */
export const policyRefusalOf = (r: AdmissionRefusalItem): PolicyRefusal | null => {
  const { checkedIn, capacity, volunteers, childrenPerVolunteer, ageMonths, ageRange, missing } = r;
  switch (r.reason) {
    case 'ROOM_FULL':
      return checkedIn === undefined || capacity === undefined
        ? null
        : { reason: 'ROOM_FULL', checkedIn, capacity };
    case 'RATIO_EXCEEDED':
      return checkedIn === undefined || volunteers === undefined || childrenPerVolunteer === undefined
        ? null
        : { reason: 'RATIO_EXCEEDED', checkedIn, volunteers, childrenPerVolunteer };
    case 'AGE_OUT_OF_RANGE':
      return ageMonths === undefined || ageRange === undefined
        ? null
        : { reason: 'AGE_OUT_OF_RANGE', ageMonths, ageRange };
    case 'RECORD_INCOMPLETE':
      return missing === undefined || !missing.every(isRequiredField)
        ? null
        : { reason: 'RECORD_INCOMPLETE', missing: missing.filter(isRequiredField) };
    default:
      return null;
  }
};

/** Newest first, as the conflicts. */
export const exceptionLines = (
  items: ReadonlyArray<AdmissionItem>,
  names: Names,
  deviceId: string,
): ExceptionLine[] =>
  items
    .map((x) => ({
      aspect: x.aspect,
      studentId: x.subjectId,
      child: names.students.get(x.subjectId) ?? null,
      reason: x.reason,
      refusals: x.refusals.map((r) => ({ code: r.reason, refusal: policyRefusalOf(r) })),
      detectedAt: x.detectedAt,
      checkIn: sideLine(x.event, names, deviceId),
    }))
    .sort(
      (a, b) =>
        b.detectedAt.localeCompare(a.detectedAt) || a.checkIn.eventId.localeCompare(b.checkIn.eventId),
    );

export interface AttendanceLine {
  readonly studentId: string;
  readonly child: string | null;
  readonly sessionId: string | null;
  readonly className: string | null;
  readonly sessionTitle: string | null;
  readonly mark: string | null;
  readonly markedAt: string | null;
  readonly checkedInAt: string | null;
  readonly checkedOutAt: string | null;
  readonly present: boolean;
}

const byName = (a: string | null, b: string | null): number =>
  (a ?? '').localeCompare(b ?? '', 'pt-BR', { sensitivity: 'base' });

/** The rows of one calendar day, by class, session and child. */
export const attendanceLines = (
  rows: ReadonlyArray<AttendanceRow>,
  day: string,
  names: Names,
): AttendanceLine[] =>
  rows
    .filter((r) => r.date === day)
    .map((r) => {
      const session = r.sessionId === null ? undefined : names.sessions.get(r.sessionId);
      const classId = r.classId ?? session?.classId ?? null;
      return {
        studentId: r.studentId,
        child: r.displayName ?? names.students.get(r.studentId) ?? null,
        sessionId: r.sessionId,
        className: classId === null ? null : (names.classes.get(classId) ?? null),
        sessionTitle: session?.title ?? null,
        mark: r.mark,
        markedAt: r.markedAt,
        checkedInAt: r.checkedInAt,
        checkedOutAt: r.checkedOutAt,
        present: r.present,
      };
    })
    .sort(
      (a, b) =>
        byName(a.className, b.className) ||
        byName(a.sessionTitle, b.sessionTitle) ||
        (a.sessionId ?? '').localeCompare(b.sessionId ?? '') ||
        byName(a.child, b.child) ||
        a.studentId.localeCompare(b.studentId),
    );

export const attendanceTotals = (lines: ReadonlyArray<AttendanceLine>) => {
  const present = lines.filter((l) => l.present).length;
  return { rows: lines.length, present, absent: lines.length - present };
};

export interface Table {
  readonly header: ReadonlyArray<string>;
  readonly rows: ReadonlyArray<ReadonlyArray<string>>;
}

const orEmpty = (s: string | null): string => s ?? '';
const instant = (s: string | null, local: (iso: string) => string): string => (s === null ? '' : local(s));

const SIDE_COLUMNS = [
  'userId',
  'userName',
  'role',
  'deviceId',
  'change',
  'field',
  'clientTimestamp',
  'serverTimestamp',
  'eventId',
] as const;

/**
 * One line per conflict, both sides. Column names are the report's field names (as the server's own
 * attendance CSV), so a file reads the same whatever language the tablet shows; instants are in the
 * tablet's time zone with their offset.
 */
export const conflictsTable = (
  lines: ReadonlyArray<ConflictLine>,
  local: (iso: string) => string = localInstant,
  /** The admission rule's exceptions: the check-in kept in the winner's columns, no loser, `refusals`. */
  exceptions: ReadonlyArray<ExceptionLine> = [],
): Table => {
  const side = (s: SideLine): string[] => [
    s.userId,
    orEmpty(s.userName),
    s.role,
    orEmpty(s.deviceId),
    s.change,
    orEmpty(s.field),
    local(s.clientTimestamp),
    local(s.serverTimestamp),
    s.eventId,
  ];
  return {
    header: [
      'detectedAt',
      'studentId',
      'child',
      'kind',
      'aspect',
      'policy',
      ...SIDE_COLUMNS.map((c) => `winner.${c}`),
      ...SIDE_COLUMNS.map((c) => `loser.${c}`),
      'refusals',
    ],
    rows: [
      ...lines.map((l) => [
        local(l.detectedAt),
        l.studentId,
        orEmpty(l.child),
        l.kind,
        l.aspect,
        l.policy,
        ...side(l.winner),
        ...side(l.loser),
        '',
      ]),
      ...exceptions.map((x) => [
        local(x.detectedAt),
        x.studentId,
        orEmpty(x.child),
        'checkin',
        x.aspect,
        'ADMISSION_RULE',
        ...side(x.checkIn),
        ...SIDE_COLUMNS.map(() => ''),
        x.refusals.map((r) => r.code).join(' '),
      ]),
    ],
  };
};

export const attendanceTable = (
  day: string,
  lines: ReadonlyArray<AttendanceLine>,
  local: (iso: string) => string = localInstant,
): Table => ({
  header: [
    'date',
    'class',
    'session',
    'sessionId',
    'studentId',
    'child',
    'present',
    'mark',
    'markedAt',
    'checkedInAt',
    'checkedOutAt',
  ],
  rows: lines.map((l) => [
    day,
    orEmpty(l.className),
    orEmpty(l.sessionTitle),
    orEmpty(l.sessionId),
    l.studentId,
    orEmpty(l.child),
    String(l.present),
    orEmpty(l.mark),
    instant(l.markedAt, local),
    instant(l.checkedInAt, local),
    instant(l.checkedOutAt, local),
  ]),
});

export const csvFileName = (tab: AdminTab, day: string): string => `chamada-${tab}-${day}.csv`;

/** A page sent to a child's guardians, as the admins' view lists it (0037). */
export interface PageLine {
  readonly pageId: string;
  readonly studentId: string;
  readonly child: string | null;
  readonly className: string | null;
  readonly sessionTitle: string | null;
  readonly sessionId: string;
  readonly sentAt: string;
  readonly sentBy: string;
  readonly sentByName: string | null;
  readonly deviceId: string | null;
  readonly message: string | null;
  readonly phonesPaged: number;
  readonly phonesFailed: number;
}

/** The day's pages with names resolved, oldest first. */
export const pageLines = (items: ReadonlyArray<PageItem>, names: Names): PageLine[] =>
  [...items]
    .sort((a, b) => a.sentAt.localeCompare(b.sentAt) || a.pageId.localeCompare(b.pageId))
    .map((p) => {
      const session = names.sessions.get(p.sessionId);
      return {
        pageId: p.pageId,
        studentId: p.studentId,
        child: names.students.get(p.studentId) ?? null,
        className: session === undefined ? null : (names.classes.get(session.classId) ?? null),
        sessionTitle: session?.title ?? null,
        sessionId: p.sessionId,
        sentAt: p.sentAt,
        sentBy: p.sentBy,
        sentByName: names.users.get(p.sentBy) ?? null,
        deviceId: p.deviceId,
        message: p.message,
        phonesPaged: p.phonesPaged,
        phonesFailed: p.phonesFailed,
      };
    });

export const pagesTable = (
  lines: ReadonlyArray<PageLine>,
  local: (iso: string) => string = localInstant,
): Table => ({
  header: [
    'sentAt',
    'studentId',
    'child',
    'class',
    'session',
    'sessionId',
    'sentBy',
    'sentByName',
    'deviceId',
    'message',
    'phonesPaged',
    'phonesFailed',
  ],
  rows: lines.map((l) => [
    local(l.sentAt),
    l.studentId,
    orEmpty(l.child),
    orEmpty(l.className),
    orEmpty(l.sessionTitle),
    l.sessionId,
    l.sentBy,
    orEmpty(l.sentByName),
    orEmpty(l.deviceId),
    orEmpty(l.message),
    String(l.phonesPaged),
    String(l.phonesFailed),
  ]),
});
