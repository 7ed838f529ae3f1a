/** Attendance and conflict reports, black-box. */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import * as t from 'io-ts';
import { TOKENS, useService } from '../support/harness.js';
import { call, decodeAs, expectEnvelope } from '../support/http.js';
import { authHeaders } from '../support/testService.js';

const Report = t.type({
  from: t.string,
  to: t.string,
  rows: t.array(
    t.type({
      date: t.string,
      sessionId: t.union([t.string, t.null]),
      classId: t.union([t.string, t.null]),
      studentId: t.string,
      displayName: t.union([t.string, t.null]),
      mark: t.union([t.string, t.null]),
      checkedInAt: t.union([t.string, t.null]),
      checkedOutAt: t.union([t.string, t.null]),
      present: t.boolean,
    }),
  ),
  totals: t.type({ rows: t.number, present: t.number, absent: t.number }),
});

const Side = t.type({
  eventId: t.string,
  userId: t.string,
  role: t.string,
  deviceId: t.union([t.string, t.null]),
  clientTimestamp: t.string,
  serverTimestamp: t.string,
  change: t.type({ type: t.string }),
});
const ConflictPage = t.type({
  items: t.array(
    t.type({
      aspect: t.string,
      subjectId: t.string,
      policy: t.string,
      winner: Side,
      loser: Side,
      detectedAt: t.string,
    }),
  ),
  nextCursor: t.union([t.string, t.null]),
});

describe('reports', function () {
  this.timeout(60_000);
  const h = useService({}, 'test');
  let classA: string;
  let classB: string;
  let sessionA: string;
  let sessionB: string;
  const students: Record<string, string> = {};
  const { post } = h.as(TOKENS.ADMIN);
  const get = (path: string, token: string = TOKENS.RELATORIOS, extra: Record<string, string> = {}) =>
    call(`${h.url}${path}`, { headers: { ...authHeaders(token), ...extra } });
  const sync = async (events: unknown[], token: string) => {
    const r = await post('/api/v1/sync/events', { events }, token);
    expect(r.status, r.text).to.equal(200);
    return r;
  };
  const mark = (studentId: string, sessionId: string, type: string, at: string) => ({
    eventId: randomUUID(),
    type,
    studentId,
    sessionId,
    clientTimestamp: at,
  });

  beforeEach(async () => {
    const id = async (path: string, body: unknown, key: string) =>
      decodeAs(t.type({ [key]: t.string }), (await post(path, body)).json)[key] ?? '';
    classA = await id('/api/v1/classes', { name: 'A' }, 'classId');
    classB = await id('/api/v1/classes', { name: 'B' }, 'classId');
    sessionA = await id('/api/v1/sessions', { classId: classA, date: '2026-11-26' }, 'sessionId');
    sessionB = await id('/api/v1/sessions', { classId: classB, date: '2026-11-26' }, 'sessionId');
    for (const [name, classId] of [
      ['Ana', classA],
      ['Bruno', classA],
      ['=Carla', classB],
    ] as const) {
      students[name] = await id(
        '/api/v1/students',
        { displayName: name, guardianName: 'G', phones: [], classId },
        'studentId',
      );
    }
  });

  const ana = () => students.Ana ?? '';
  const bruno = () => students.Bruno ?? '';
  const carla = () => students['=Carla'] ?? '';

  it('attendance: marks and check-ins by session, class and date range; CSV on request', async () => {
    await sync(
      [
        mark(ana(), sessionA, 'MARK_PRESENT', '2026-11-26T10:00:00.000Z'),
        mark(bruno(), sessionA, 'MARK_ABSENT', '2026-11-26T10:00:00.000Z'),
        {
          eventId: randomUUID(),
          type: 'CHECK_IN',
          studentId: carla(),
          sessionId: sessionB,
          checkInId: randomUUID(),
          clientTimestamp: '2026-11-26T09:00:00.000Z',
        },
        mark(ana(), sessionA, 'MARK_PRESENT', '2026-11-20T10:00:00.000Z'),
      ],
      TOKENS.CHAMADOR,
    );
    const day = decodeAs(Report, (await get('/api/v1/reports/attendance?from=2026-11-26')).json);
    expect(day.rows.map((r) => [r.displayName, r.mark, r.present])).to.have.deep.members([
      ['Ana', 'PRESENT', true],
      ['Bruno', 'ABSENT', false],
      ['=Carla', null, true],
    ]);
    expect(day.totals).to.deep.equal({ rows: 3, present: 2, absent: 1 });
    const byClass = decodeAs(
      Report,
      (await get(`/api/v1/reports/attendance?from=2026-11-26&classId=${classB}`)).json,
    );
    expect(byClass.rows.map((r) => r.displayName)).to.deep.equal(['=Carla']);
    const bySession = decodeAs(
      Report,
      (await get(`/api/v1/reports/attendance?from=2026-11-26&sessionId=${sessionA}`)).json,
    );
    expect(bySession.rows.map((r) => r.displayName)).to.deep.equal(['Ana', 'Bruno']);
    const week = decodeAs(
      Report,
      (await get('/api/v1/reports/attendance?from=2026-11-20&to=2026-11-26')).json,
    );
    // The mark dated the 20th names the same child and session as the one of the 26th: one aspect, whose
    // later mark stands (the earlier is superseded), so the week still has three rows.
    expect(week.totals.rows).to.equal(3);
    expect(week.rows.find((r) => r.displayName === 'Ana')?.date).to.equal('2026-11-26');
    const csv = await get('/api/v1/reports/attendance?from=2026-11-26', TOKENS.RELATORIOS, {
      accept: 'text/csv',
    });
    expect(csv.status).to.equal(200);
    expect(csv.headers.get('content-type')).to.equal('text/csv; charset=utf-8');
    expect(csv.headers.get('content-disposition')).to.contain('attendance.csv');
    const lines = csv.text.trimEnd().split('\r\n');
    expect(lines[0]).to.equal(
      'date,sessionId,classId,studentId,displayName,mark,present,markedBy,markedAt,checkedInAt,checkedOutAt',
    );
    expect(lines).to.have.length(4);
    // A name that a spreadsheet would run as a formula is escaped.
    expect(csv.text).to.contain(",'=Carla,");
    expect(csv.text).not.to.contain(',=Carla,');
  });

  it('attendance: ADMIN and RELATORIOS only; bad ranges are 400', async () => {
    expectEnvelope(await get('/api/v1/reports/attendance', TOKENS.CHAMADOR), 403, 'FORBIDDEN_ROLE');
    expect((await get('/api/v1/reports/attendance', TOKENS.ADMIN)).status).to.equal(200);
    expectEnvelope(
      await get('/api/v1/reports/attendance?from=2026-11-26&to=2026-11-25'),
      400,
      'VALIDATION_FAILED',
    );
    expectEnvelope(
      await get('/api/v1/reports/attendance?from=2025-01-01&to=2026-11-25'),
      400,
      'VALIDATION_FAILED',
    );
    expectEnvelope(await get('/api/v1/reports/attendance?from=2026-02-30'), 400, 'VALIDATION_FAILED');
  });

  it('conflicts: both sides of each record, filtered by student and date, paged with a signed cursor', async () => {
    // Three children, each with an ADMIN mark and a concurrent, later CHAMADOR mark: three conflicts.
    const kids = [ana(), bruno(), carla()];
    for (const kid of kids) {
      const session = kid === carla() ? sessionB : sessionA;
      await sync([mark(kid, session, 'MARK_ABSENT', '2026-11-26T09:00:00.000Z')], TOKENS.ADMIN);
      await sync([mark(kid, session, 'MARK_PRESENT', '2026-11-26T10:00:00.000Z')], TOKENS.CHAMADOR);
    }
    const all = decodeAs(ConflictPage, (await get('/api/v1/reports/conflicts')).json);
    expect(all.items).to.have.length(3);
    expect(all.nextCursor).to.equal(null);
    for (const c of all.items) {
      expect(c.policy).to.equal('ADMIN_PRECEDENCE');
      expect(c.winner).to.deep.include({ userId: 'dev-admin', role: 'ADMIN' });
      expect(c.loser).to.deep.include({ userId: 'dev-caller', role: 'CHAMADOR' });
      expect(c.loser.deviceId).to.be.a('string');
      expect(c.loser.change.type).to.equal('MARK_PRESENT');
    }
    const one = decodeAs(ConflictPage, (await get(`/api/v1/reports/conflicts?subjectId=${bruno()}`)).json);
    expect(one.items.map((c) => c.subjectId)).to.deep.equal([bruno()]);
    const none = decodeAs(
      ConflictPage,
      (await get('/api/v1/reports/conflicts?to=2000-01-01T00:00:00.000Z')).json,
    );
    expect(none.items).to.deep.equal([]);
    // Pages of one: every record exactly once, in order.
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const path: string = `/api/v1/reports/conflicts?limit=1${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`;
      const page = decodeAs(ConflictPage, (await get(path)).json);
      seen.push(...page.items.map((c) => c.loser.eventId));
      cursor = page.nextCursor;
    } while (cursor !== null);
    expect(seen).to.deep.equal(all.items.map((c) => c.loser.eventId));
    const first = decodeAs(ConflictPage, (await get('/api/v1/reports/conflicts?limit=1')).json);
    // A cursor is bound to its filters and cannot be forged.
    expectEnvelope(
      await get(
        `/api/v1/reports/conflicts?limit=1&subjectId=x&cursor=${encodeURIComponent(first.nextCursor ?? '')}`,
      ),
      400,
      'VALIDATION_FAILED',
    );
    expectEnvelope(await get('/api/v1/reports/conflicts?cursor=forged'), 400, 'VALIDATION_FAILED');
    expectEnvelope(await get('/api/v1/reports/conflicts', TOKENS.CHAMADOR), 403, 'FORBIDDEN_ROLE');
  });
});
