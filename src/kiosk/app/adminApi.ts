/**
 * What the admins' view reads, online only (ADMIN, RELATORIOS): the conflict report and the attendance
 * report, and the names that make them readable (classes and sessions for anyone signed in, users for
 * an ADMIN, a child the reports do not name). Read with tolerant codecs: unknown fields are ignored and
 * enumerations (policy, kind, role, change) are read as strings, so a newer server adding a value
 * shows it by its code instead of failing the whole page.
 */
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import { type ApiFailure, request } from './api.js';

const nullableString = t.union([t.string, t.null]);

const ConflictSide = t.type({
  eventId: t.string,
  userId: t.string,
  role: t.string,
  deviceId: nullableString,
  clientTimestamp: t.string,
  serverTimestamp: t.string,
  change: t.intersection([t.type({ type: t.string }), t.partial({ field: t.string, checkInId: t.string })]),
});
export type ConflictSide = t.TypeOf<typeof ConflictSide>;

export const ConflictItem = t.type({
  aspect: t.string,
  kind: t.string,
  subjectId: t.string,
  policy: t.string,
  winner: ConflictSide,
  loser: ConflictSide,
  detectedAt: t.string,
});
export type ConflictItem = t.TypeOf<typeof ConflictItem>;

/** One rule a check-in broke, with the facts it was judged by (each reason has its own). */
const AdmissionRefusalItem = t.intersection([
  t.type({ reason: t.string }),
  t.partial({
    missing: t.array(t.string),
    ageMonths: t.number,
    ageRange: t.partial({
      minMonths: t.number,
      maxMonths: t.number,
      bornFrom: t.string,
      bornUntil: t.string,
    }),
    checkedIn: t.number,
    capacity: t.number,
    volunteers: t.number,
    childrenPerVolunteer: t.number,
  }),
]);
export type AdmissionRefusalItem = t.TypeOf<typeof AdmissionRefusalItem>;

/** A check-in recorded offline that the admission rule would have refused on arrival (0042): kept, reported. */
export const AdmissionItem = t.type({
  aspect: t.string,
  subjectId: t.string,
  policy: t.literal('ADMISSION_RULE'),
  reason: t.string,
  refusals: t.array(AdmissionRefusalItem),
  event: ConflictSide,
  detectedAt: t.string,
});
export type AdmissionItem = t.TypeOf<typeof AdmissionItem>;

// Items of a kind this tablet does not know (a newer server's) are left out rather than failing the page.
const ConflictPage = t.type({ items: t.array(t.unknown), nextCursor: nullableString });

export const AttendanceRow = t.type({
  date: t.string,
  sessionId: nullableString,
  classId: nullableString,
  studentId: t.string,
  displayName: nullableString,
  mark: nullableString,
  markedAt: nullableString,
  checkedInAt: nullableString,
  checkedOutAt: nullableString,
  present: t.boolean,
});
export type AttendanceRow = t.TypeOf<typeof AttendanceRow>;
const AttendanceReport = t.type({ rows: t.array(AttendanceRow) });

const ClassList = t.type({ items: t.array(t.type({ classId: t.string, name: t.string })) });
export const SessionInfo = t.type({
  sessionId: t.string,
  classId: t.string,
  date: t.string,
  title: nullableString,
  startsAt: nullableString,
});
export type SessionInfo = t.TypeOf<typeof SessionInfo>;
const SessionList = t.type({ items: t.array(SessionInfo) });
const UserList = t.type({ items: t.array(t.type({ userId: t.string, displayName: t.string })) });
const StudentName = t.type({ studentId: t.string, displayName: t.string });

const PAGE = 200;
/** A day rarely has more than a handful; past this the screen says there are more. */
const MAX_PAGES = 5;

const query = (params: Readonly<Record<string, string>>): string => new URLSearchParams(params).toString();

export interface ConflictReport {
  readonly items: ConflictItem[];
  readonly exceptions: AdmissionItem[];
  readonly more: boolean;
}

/**
 * The conflict report's items detected in [from, to) (instants), oldest first, a few pages at most:
 * the conflicts, and the admission rule's exceptions (`policy: ADMISSION_RULE`) apart.
 */
export const fetchConflicts = async (
  send: typeof fetch,
  from: string,
  to: string,
): Promise<E.Either<ApiFailure, ConflictReport>> => {
  const items: ConflictItem[] = [];
  const exceptions: AdmissionItem[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < MAX_PAGES; page += 1) {
    const params: Record<string, string> = { from, to, limit: String(PAGE) };
    if (cursor !== null) params.cursor = cursor;
    const answer = await request(send, `/api/v1/reports/conflicts?${query(params)}`, {}, ConflictPage);
    if (E.isLeft(answer)) return answer;
    items.push(...answer.right.items.filter(ConflictItem.is));
    exceptions.push(...answer.right.items.filter(AdmissionItem.is));
    cursor = answer.right.nextCursor;
    if (cursor === null) return E.right({ items, exceptions, more: false });
  }
  return E.right({ items, exceptions, more: true });
};

/** Attendance rows of the UTC days [from, to]. */
export const fetchAttendance = async (
  send: typeof fetch,
  from: string,
  to: string,
): Promise<E.Either<ApiFailure, AttendanceRow[]>> =>
  E.map((r: t.TypeOf<typeof AttendanceReport>) => r.rows)(
    await request(send, `/api/v1/reports/attendance?${query({ from, to })}`, {}, AttendanceReport),
  );

// Names for what happened, so deactivated classes and sessions (0047) are named too.
export const fetchClassNames = async (send: typeof fetch): Promise<Map<string, string>> => {
  const answer = await request(send, '/api/v1/classes?includeInactive=true', {}, ClassList);
  return new Map(E.isRight(answer) ? answer.right.items.map((c) => [c.classId, c.name]) : []);
};

export const fetchSessions = async (send: typeof fetch, day: string): Promise<Map<string, SessionInfo>> => {
  const answer = await request(
    send,
    `/api/v1/sessions?${query({ date: day, includeInactive: 'true' })}`,
    {},
    SessionList,
  );
  return new Map(E.isRight(answer) ? answer.right.items.map((s) => [s.sessionId, s]) : []);
};

/** ADMIN only: anyone else gets an empty map and sees user ids. */
export const fetchUserNames = async (send: typeof fetch): Promise<Map<string, string>> => {
  const answer = await request(send, '/api/v1/users', {}, UserList);
  return new Map(E.isRight(answer) ? answer.right.items.map((u) => [u.userId, u.displayName]) : []);
};

export const fetchStudentName = async (
  send: typeof fetch,
  studentId: string,
): Promise<string | undefined> => {
  const answer = await request(send, `/api/v1/students/${encodeURIComponent(studentId)}`, {}, StudentName);
  return E.isRight(answer) ? answer.right.displayName : undefined;
};

export const PageItem = t.type({
  pageId: t.string,
  studentId: t.string,
  sessionId: t.string,
  message: nullableString,
  sentAt: t.string,
  sentBy: t.string,
  deviceId: nullableString,
  phonesPaged: t.number,
  phonesFailed: t.number,
});
export type PageItem = t.TypeOf<typeof PageItem>;
const PageList = t.type({ items: t.array(PageItem) });

/** The pages sent to guardians at one session (0037). */
export const fetchPages = async (
  send: typeof fetch,
  sessionId: string,
): Promise<E.Either<ApiFailure, PageItem[]>> =>
  E.map((r: t.TypeOf<typeof PageList>) => r.items)(
    await request(send, `/api/v1/pages?${query({ sessionId })}`, {}, PageList),
  );
