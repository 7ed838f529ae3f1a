/**
 * The admins' view as data: its address, the day it shows, the conflict and attendance lines with the
 * names resolved, and the rows of its CSV files. Pure (no DOM, no fetch), so the screen only draws.
 *
 * The day is the tablet's calendar day, as everywhere on the kiosk. The reports speak UTC: conflicts
 * are asked for between the day's local midnights, and attendance for the UTC days either side, then
 * kept to the rows of sessions dated that day (a session at 19:00 in Brazil has check-ins on the next
 * UTC day).
 */
import type { AttendanceRow, ConflictItem, ConflictSide, PageItem, SessionInfo } from './adminApi.js';

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

/** The students the conflicts name whose names are not known yet. */
export const unnamedStudents = (items: ReadonlyArray<ConflictItem>, known: ReadonlyMap<string, string>) => [
  ...new Set(items.map((c) => c.subjectId).filter((id) => !known.has(id))),
];

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
    ],
    rows: lines.map((l) => [
      local(l.detectedAt),
      l.studentId,
      orEmpty(l.child),
      l.kind,
      l.aspect,
      l.policy,
      ...side(l.winner),
      ...side(l.loser),
    ]),
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
