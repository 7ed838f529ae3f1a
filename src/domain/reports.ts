/**
 * The reports' shapes (`/api/v1/reports/attendance`, `/conflicts`, `/visitors`): their queries and
 * answers, read by the routes (src/http/routes/reportsRoutes.ts) and by the browser client.
 */
import * as t from 'io-ts';
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
} from './codec.js';
import { ReportedConflict } from './projection.js';

export const MAX_REPORT_DAYS = 366;
export const MAX_CONFLICT_PAGE = 200;
export const DEFAULT_CONFLICT_PAGE = 50;

export const AttendanceQuery = object(
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

export const AttendanceRow = object(
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

export const AttendanceReport = object('AttendanceReport', {
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
export type AttendanceReport = t.TypeOf<typeof AttendanceReport>;

const ConflictLimit = pageLimit(MAX_CONFLICT_PAGE, DEFAULT_CONFLICT_PAGE);

export const ConflictQuery = object(
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

export const ConflictPage = object(
  'ConflictPage',
  { items: boundedArray(ReportedConflict, MAX_CONFLICT_PAGE), nextCursor: nullable(ShortText) },
  {},
  { description: 'Oldest first by `detectedAt`, then id. `nextCursor` is null on the last page.' },
);

export const MAX_VISITORS = 1000;

export const VisitorsQuery = object(
  'VisitorsReportQuery',
  {},
  {
    from: calendarDate({ description: 'First day (UTC) of registration, inclusive; default 30 days ago.' }),
    to: calendarDate({ description: 'Last day (UTC), inclusive; default today.' }),
    classId: Uuid,
  },
);

export const VisitorRow = object('VisitorRow', {
  studentId: Uuid,
  displayName: boundedString(1, 120, { classification: 'personal' }),
  classId: ShortText,
  status: t.keyof({ ACTIVE: null, DELETED: null }),
  createdAt: IsoInstant,
});

export const VisitorsReport = object(
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
