/** Reports (`/api/v1/reports/attendance`, `/api/v1/reports/conflicts`), read from the projections. */
import { stringify } from 'csv-stringify/sync';
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import { openCursor, signCursor } from '../../crypto/cursor.js';
import { type ApiError, apiError } from '../../domain/errors.js';
import {
  AttendanceQuery,
  AttendanceReport,
  ConflictPage,
  ConflictQuery,
  DEFAULT_CONFLICT_PAGE,
  MAX_REPORT_DAYS,
  MAX_VISITORS,
  VisitorsQuery,
  VisitorsReport,
} from '../../domain/reports.js';
import { neutralise } from '../../lib/csvFormulas.js';
import { defineRoute } from '../route.js';

export { MAX_REPORT_DAYS, MAX_VISITORS };

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
    const found = (await deps.registration.directory.visitors())
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
