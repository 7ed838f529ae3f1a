/** Reports (`/api/v1/reports/attendance`, `/api/v1/reports/conflicts`), read from the projections. */
import { stringify } from 'csv-stringify/sync';
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import { openCursor, signCursor } from '../../crypto/cursor.js';
import {
  boundedArray,
  boundedInt,
  boundedString,
  calendarDate,
  IsoInstant,
  nullable,
  object,
  pageLimit,
  ShortText,
  Uuid,
} from '../../domain/codec.js';
import { type ApiError, apiError } from '../../domain/errors.js';
import { ReportedConflict } from '../../domain/projection.js';
import { neutralise } from '../../lib/csvFormulas.js';
import { defineRoute } from '../route.js';

export const MAX_REPORT_DAYS = 366;
const MAX_CONFLICT_PAGE = 200;
const DEFAULT_CONFLICT_PAGE = 50;

const AttendanceQuery = object(
  'AttendanceReportQuery',
  {},
  {
    from: calendarDate({ description: 'First day (UTC), inclusive; default today.' }),
    to: calendarDate({
      description: `Last day (UTC), inclusive; default \`from\`. At most ${MAX_REPORT_DAYS} days.`,
    }),
    sessionId: Uuid,
    classId: Uuid,
    studentId: Uuid,
  },
);

const AttendanceRow = object(
  'AttendanceRow',
  {
    date: calendarDate(),
    sessionId: nullable(Uuid),
    classId: nullable(ShortText),
    studentId: ShortText,
    displayName: nullable(boundedString(0, 120, { classification: 'personal' })),
    mark: nullable(t.keyof({ PRESENT: null, ABSENT: null })),
    markedBy: nullable(ShortText),
    markedAt: nullable(IsoInstant),
    checkedInAt: nullable(IsoInstant),
    checkedOutAt: nullable(IsoInstant),
    present: t.boolean,
  },
  {},
  {
    description:
      'One child at one session (or one day, for marks without a session). `present`: marked present or checked in. ' +
      'A mark is the one standing after the conflict rule.',
  },
);

const AttendanceReport = object('AttendanceReport', {
  from: calendarDate(),
  to: calendarDate(),
  rows: t.array(AttendanceRow),
  totals: object('AttendanceTotals', {
    // Counts of children on one day: int32 holds any ministry.
    rows: boundedInt(0, 2 ** 31 - 1),
    present: boundedInt(0, 2 ** 31 - 1),
    absent: boundedInt(0, 2 ** 31 - 1),
  }),
});
type AttendanceReport = t.TypeOf<typeof AttendanceReport>;

const CSV_COLUMNS = [
  'date',
  'sessionId',
  'classId',
  'studentId',
  'displayName',
  'mark',
  'present',
  'markedBy',
  'markedAt',
  'checkedInAt',
  'checkedOutAt',
] as const;

/**
 * One header line and one line per row; cells that a spreadsheet would run as formulas are escaped by
 * the rule the kiosk's downloads share (`neutralise`), not by csv-stringify's narrower `escape_formulas`.
 */
export const attendanceCsv = (report: AttendanceReport): string =>
  stringify(
    report.rows.map((r) => CSV_COLUMNS.map((c) => (r[c] === null ? '' : neutralise(String(r[c]))))),
    { header: true, columns: [...CSV_COLUMNS], record_delimiter: 'windows' },
  );

const invalid = (path: string, message: string): ApiError =>
  apiError('VALIDATION_FAILED', undefined, { issues: [{ path, message }] });

const DAY_MS = 86_400_000;

export const attendanceReportRoute = defineRoute({
  operationId: 'attendanceReport',
  method: 'get',
  path: '/api/v1/reports/attendance',
  auth: 'relatorios',
  permission: 'reports',
  summary: 'Presence by session, class or date range',
  description:
    'JSON by default; `Accept: text/csv` gives the same rows as CSV (UTF-8, header line, CRLF, formula-like cells ' +
    "escaped with a leading apostrophe). Read from the event pipeline's projections: every mark and check-in, as decided " +
    'by the conflict rule.',
  tags: ['reports'],
  query: AttendanceQuery,
  response: {
    status: 200,
    description: 'The rows, sorted by date, session and name.',
    codec: AttendanceReport,
    csv: {
      description: `Columns: ${CSV_COLUMNS.join(', ')}.`,
      filename: 'attendance.csv',
      render: attendanceCsv,
    },
  },
  auditRead: 'READ_SENSITIVE',
  handler: async ({ query, deps }) => {
    const from = query.from ?? deps.clock().toISOString().slice(0, 10);
    const to = query.to ?? from;
    if (to < from) return E.left(invalid('query.to', 'must not be before `from`'));
    if ((Date.parse(to) - Date.parse(from)) / DAY_MS + 1 > MAX_REPORT_DAYS)
      return E.left(invalid('query.to', `at most ${MAX_REPORT_DAYS} days from \`from\``));
    const report = await deps.reports.attendance({
      from,
      to,
      ...(query.sessionId === undefined ? {} : { sessionId: query.sessionId }),
      ...(query.classId === undefined ? {} : { classId: query.classId }),
      ...(query.studentId === undefined ? {} : { studentId: query.studentId }),
    });
    return E.right({
      body: { ...report, rows: report.rows.map((r) => ({ ...r })), totals: { ...report.totals } },
    });
  },
});

const ConflictLimit = pageLimit(MAX_CONFLICT_PAGE, DEFAULT_CONFLICT_PAGE);

const ConflictQuery = object(
  'ConflictReportQuery',
  {},
  {
    from: IsoInstant,
    to: IsoInstant,
    subjectId: boundedString(1, 200, { description: 'The student the conflicts are about.' }),
    limit: ConflictLimit,
    cursor: boundedString(1, 2048, { description: 'The `nextCursor` of the previous page, opaque.' }),
  },
);

const ConflictPage = object(
  'ConflictPage',
  { items: boundedArray(ReportedConflict, MAX_CONFLICT_PAGE), nextCursor: nullable(ShortText) },
  {},
  { description: 'Oldest first by `detectedAt`, then id. `nextCursor` is null on the last page.' },
);

// The cursor carries the position and the filters it was issued for, signed.
const CursorPayload = t.type({ a: t.string, i: t.string, f: t.string });

export const conflictReportRoute = defineRoute({
  operationId: 'conflictReport',
  method: 'get',
  path: '/api/v1/reports/conflicts',
  auth: 'relatorios',
  permission: 'reports',
  summary: 'Conflict records, both sides, and offline check-ins the admission rule would have refused',
  description:
    'Each conflict names the policy, the winner and the loser: who (user and role), from which device, when (device ' +
    'and server time) and what changed (kind and field, never the values). A record whose `policy` is ' +
    '`ADMISSION_RULE` is a check-in a device recorded offline that the admission rule would have refused on ' +
    'arrival (`reason`: ROOM_FULL, RATIO_EXCEEDED, AGE_OUT_OF_RANGE or RECORD_INCOMPLETE); it was kept, since it ' +
    'happened. Filter by `detectedAt` range ' +
    '(`from` inclusive, `to` exclusive) and by student. Keyset paging with a signed cursor bound to its filters.',
  tags: ['reports'],
  query: ConflictQuery,
  response: { status: 200, description: 'One page.', codec: ConflictPage },
  handler: async ({ query, deps }) => {
    const filters = JSON.stringify([query.from ?? null, query.to ?? null, query.subjectId ?? null]);
    let after: readonly [string, string] | undefined;
    if (query.cursor !== undefined) {
      const decoded = CursorPayload.decode(openCursor(deps.secrets.cursorKey, query.cursor));
      if (E.isLeft(decoded) || decoded.right.f !== filters)
        return E.left(invalid('query.cursor', 'not a cursor this server issued for these filters'));
      after = [decoded.right.a, decoded.right.i];
    }
    const page = await deps.reports.conflicts({
      ...(query.from === undefined ? {} : { from: query.from }),
      ...(query.to === undefined ? {} : { to: query.to }),
      ...(query.subjectId === undefined ? {} : { subjectId: query.subjectId }),
      ...(after === undefined ? {} : { after }),
      limit: query.limit === undefined ? DEFAULT_CONFLICT_PAGE : Number(query.limit),
    });
    return E.right({
      body: {
        items: page.items.map(({ _id: _i, _rev: _r, docType: _d, ...record }) => record),
        nextCursor:
          page.next === undefined
            ? null
            : signCursor(deps.secrets.cursorKey, { a: page.next[0], i: page.next[1], f: filters }),
      },
    });
  },
});

export const MAX_VISITORS = 1000;

const VisitorsQuery = object(
  'VisitorsReportQuery',
  {},
  {
    from: calendarDate({ description: 'First day (UTC) of registration, inclusive; default 30 days ago.' }),
    to: calendarDate({ description: 'Last day (UTC), inclusive; default today.' }),
    classId: Uuid,
  },
);

const VisitorRow = object('VisitorRow', {
  studentId: Uuid,
  displayName: boundedString(1, 120, { classification: 'personal' }),
  classId: ShortText,
  status: t.keyof({ ACTIVE: null, DELETED: null }),
  createdAt: IsoInstant,
});

const VisitorsReport = object(
  'VisitorsReport',
  {
    from: calendarDate(),
    to: calendarDate(),
    items: boundedArray(VisitorRow, MAX_VISITORS),
    truncated: t.boolean,
  },
  {},
  {
    description: `Newest first; at most ${MAX_VISITORS} (\`truncated\` says when more were registered in the range).`,
  },
);

export const visitorsReportRoute = defineRoute({
  operationId: 'visitorsReport',
  method: 'get',
  path: '/api/v1/reports/visitors',
  auth: 'relatorios',
  permission: 'reports',
  summary: 'First-time visitors registered in a date range',
  description:
    'Students flagged `visitor` (registered at the door, 0025) whose record was created in the range, so the ' +
    'office can welcome them and complete their record. Names only: the record itself is read from the student.',
  tags: ['reports'],
  query: VisitorsQuery,
  response: { status: 200, description: 'The visitors, newest first.', codec: VisitorsReport },
  auditRead: 'READ_SENSITIVE',
  handler: async ({ query, deps }) => {
    const today = deps.clock().toISOString().slice(0, 10);
    const to = query.to ?? today;
    const from = query.from ?? new Date(Date.parse(to) - 30 * DAY_MS).toISOString().slice(0, 10);
    if (to < from) return E.left(invalid('query.to', 'must not be before `from`'));
    if ((Date.parse(to) - Date.parse(from)) / DAY_MS + 1 > MAX_REPORT_DAYS)
      return E.left(invalid('query.to', `at most ${MAX_REPORT_DAYS} days from \`from\``));
    const found = deps.registration.directory
      .visitors()
      .flatMap((s) => (s.visitorSince === null ? [] : [{ ...s, createdAt: s.visitorSince }]))
      .filter(
        (s) =>
          s.createdAt.slice(0, 10) >= from &&
          s.createdAt.slice(0, 10) <= to &&
          (query.classId === undefined || s.classId === query.classId),
      )
      .sort((a, b) => b.createdAt.localeCompare(a.createdAt) || a.studentId.localeCompare(b.studentId));
    return E.right({
      body: {
        from,
        to,
        items: found.slice(0, MAX_VISITORS).map((s) => ({
          studentId: s.studentId,
          displayName: s.displayName,
          classId: s.classId,
          status: s.status,
          createdAt: s.createdAt,
        })),
        truncated: found.length > MAX_VISITORS,
      },
    });
  },
});

export const reportsRoutes = [attendanceReportRoute, conflictReportRoute, visitorsReportRoute];
