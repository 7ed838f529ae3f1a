/**
 * Shared pieces of the cross-cutting reliability battery (idempotency race, refresh reuse, pick-up brute
 * force, rate-limit spoofing, headers and CORS, log privacy). Expected values are written out from the
 * spec rather than imported from src/, so a change in the code cannot silently move the target.
 */
import { expect } from 'chai';
import * as t from 'io-ts';
import type { Database } from '../../src/store/pouch.js';
import { call, decodeAs, type HttpResult } from '../support/http.js';
import { authHeaders, DEV_TOKENS, mutate, type TestService } from '../support/testService.js';

export { SPEC_SECURITY_HEADERS } from '../support/http.js';

export const CheckInView = t.type({
  checkInId: t.string,
  studentId: t.string,
  sessionId: t.string,
  code: t.string,
  remainingAttempts: t.number,
  status: t.string,
});
export type CheckInView = t.TypeOf<typeof CheckInView>;

/** POSTs as `token` and returns the named id of the 201 answer. */
export const createId = async (
  svc: TestService,
  path: string,
  body: unknown,
  key: string,
  token: string = DEV_TOKENS.DEV_ADMIN_TOKEN,
): Promise<string> => {
  const r = await mutate(`${svc.url}${path}`, 'POST', body, token);
  expect(r.status, r.text).to.equal(201);
  const id = decodeAs(t.UnknownRecord, r.json)[key];
  if (typeof id !== 'string') throw new Error(`no ${key} in ${r.text}`);
  return id;
};

export interface Roster {
  readonly classId: string;
  readonly sessionId: string;
  readonly date: string;
}

export const todayUtc = (): string => new Date().toISOString().slice(0, 10);

/**
 * One class and one session, today by default: reports place a check-in on the UTC day of its first
 * event, so a session on another day would hide it from a report of that day.
 */
export const classAndSession = async (svc: TestService, date = todayUtc()): Promise<Roster> => {
  const classId = await createId(svc, '/api/v1/classes', { name: 'Turma Confiabilidade' }, 'classId');
  const sessionId = await createId(svc, '/api/v1/sessions', { classId, date }, 'sessionId');
  return { classId, sessionId, date };
};

export const addStudent = (svc: TestService, classId: string, extra: Record<string, unknown> = {}) =>
  createId(
    svc,
    '/api/v1/students',
    { displayName: 'Criança Teste', guardianName: 'Responsável Teste', phones: [], classId, ...extra },
    'studentId',
  );

/** A code from the label alphabet that differs from `code` in its first character. */
export const wrongCode = (code: string): string =>
  code.startsWith('2') ? `3${code.slice(1)}` : `2${code.slice(1)}`;

export const tally = (values: ReadonlyArray<string | number>): Record<string, number> => {
  const out: Record<string, number> = {};
  for (const v of values) out[String(v)] = (out[String(v)] ?? 0) + 1;
  return out;
};

export const tallyText = (values: ReadonlyArray<string | number>): string =>
  Object.entries(tally(values))
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, n]) => `${n}×${k}`)
    .join(', ');

/** Documents of one `docType` in a database, decoded; the store is read directly as an operator would. */
export const docsOfType = async <C extends t.Mixed>(
  db: Database,
  docType: string,
  codec: C,
): Promise<Array<t.TypeOf<C>>> => {
  const all = await db.allDocs({ include_docs: true });
  const out: Array<t.TypeOf<C>> = [];
  for (const row of all.rows) {
    const doc: unknown = row.doc;
    if (t.type({ docType: t.literal(docType) }).is(doc)) out.push(decodeAs(codec, doc));
  }
  return out;
};

export const StoredEvent = t.type({
  eventId: t.string,
  type: t.string,
  subjectId: t.string,
  payload: t.UnknownRecord,
});
export type StoredEvent = t.TypeOf<typeof StoredEvent>;

/** Events of one type, read directly from the events database (events have no listing endpoint). */
export const eventsOf = async (svc: TestService, type: string): Promise<StoredEvent[]> =>
  (await docsOfType(svc.store.db.events, 'event', StoredEvent)).filter((e) => e.type === type);

export const AuditItem = t.type({
  correlation_id: t.string,
  endpoint: t.string,
  outcome: t.string,
  details: t.UnknownRecord,
  subject_id: t.union([t.string, t.null]),
});
export type AuditItem = t.TypeOf<typeof AuditItem>;
const AuditPage = t.type({ items: t.array(AuditItem), nextCursor: t.union([t.string, t.null]) });

/** Every audit entry of one endpoint template, through the API (ADMIN), paged; at most 20 pages. */
export const auditOf = async (svc: TestService, endpoint: string): Promise<AuditItem[]> => {
  const items: AuditItem[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 20; page += 1) {
    const q = new URLSearchParams({ endpoint, limit: '200', ...(cursor === null ? {} : { cursor }) });
    const r = await call(`${svc.url}/api/v1/audit-logs?${q.toString()}`, {
      headers: authHeaders(DEV_TOKENS.DEV_ADMIN_TOKEN),
    });
    expect(r.status, r.text).to.equal(200);
    const p = decodeAs(AuditPage, r.json);
    items.push(...p.items);
    cursor = p.nextCursor;
    if (cursor === null) return items;
  }
  throw new Error('audit log longer than 20 pages');
};

export const errorCodeOf = (r: HttpResult): string | undefined => {
  const d = t.type({ error: t.type({ code: t.string }) }).decode(r.json);
  return d._tag === 'Right' ? d.right.error.code : undefined;
};

/** Milliseconds since `start`, rounded, for the figures. */
export const since = (start: bigint): number => Math.round(Number(process.hrtime.bigint() - start) / 1e6);
