/** What the office's child page and reports read: one child's attendance history and the first-time visitors. */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import * as t from 'io-ts';
import { TOKENS, useService } from '../support/harness.js';
import { decodeAs, expectEnvelope } from '../support/http.js';

const Report = t.type({
  rows: t.array(t.type({ studentId: t.string, sessionId: t.union([t.string, t.null]), present: t.boolean })),
  totals: t.type({ rows: t.number, present: t.number, absent: t.number }),
});
const Visitors = t.type({
  from: t.string,
  to: t.string,
  items: t.array(
    t.type({
      studentId: t.string,
      displayName: t.string,
      classId: t.string,
      status: t.string,
      createdAt: t.string,
    }),
  ),
  truncated: t.boolean,
});

describe('office reads: a child’s history and the first-time visitors', function () {
  this.timeout(60_000);
  const h = useService({}, 'test');
  let classA: string;
  let classB: string;
  const today = () => new Date().toISOString().slice(0, 10);
  const { post } = h.as(TOKENS.ADMIN);
  const { get } = h.as(TOKENS.RELATORIOS);
  const id = async (path: string, body: unknown, key: string) => {
    const r = await post(path, body);
    expect(r.status, r.text).to.equal(201);
    return decodeAs(t.type({ [key]: t.string }), r.json)[key] ?? '';
  };

  beforeEach(async () => {
    classA = await id('/api/v1/classes', { name: 'A' }, 'classId');
    classB = await id('/api/v1/classes', { name: 'B' }, 'classId');
  });

  it('attendance filtered by studentId gives that child’s rows only', async () => {
    const session = await id('/api/v1/sessions', { classId: classA, date: '2026-11-26' }, 'sessionId');
    const ana = await id(
      '/api/v1/students',
      { displayName: 'Ana', guardianName: 'G', phones: [], classId: classA },
      'studentId',
    );
    const bia = await id(
      '/api/v1/students',
      { displayName: 'Bia', guardianName: 'G', phones: [], classId: classA },
      'studentId',
    );
    const mark = (studentId: string, type: string) => ({
      eventId: randomUUID(),
      type,
      studentId,
      sessionId: session,
      clientTimestamp: '2026-11-26T10:00:00.000Z',
    });
    const synced = await post(
      '/api/v1/sync/events',
      { events: [mark(ana, 'MARK_PRESENT'), mark(bia, 'MARK_ABSENT')] },
      TOKENS.CHAMADOR,
    );
    expect(synced.status, synced.text).to.equal(200);
    const all = decodeAs(
      Report,
      (await get('/api/v1/reports/attendance?from=2026-11-01&to=2026-11-30')).json,
    );
    expect(all.totals.rows).to.equal(2);
    const one = decodeAs(
      Report,
      (await get(`/api/v1/reports/attendance?from=2026-11-01&to=2026-11-30&studentId=${bia}`)).json,
    );
    expect(one.rows.map((r) => [r.studentId, r.present])).to.deep.equal([[bia, false]]);
    expectEnvelope(await get('/api/v1/reports/attendance?studentId=nope'), 400, 'VALIDATION_FAILED');
  });

  it('visitors: children registered at the door in the range, newest first, by class; not the registered ones', async () => {
    const sessionA = await id('/api/v1/sessions', { classId: classA, date: today() }, 'sessionId');
    const sessionB = await id('/api/v1/sessions', { classId: classB, date: today() }, 'sessionId');
    await id(
      '/api/v1/students',
      { displayName: 'Registered', guardianName: 'G', phones: [], classId: classA },
      'studentId',
    );
    const walkIn = async (sessionId: string, displayName: string) => {
      const r = await post(
        '/api/v1/check-in',
        { sessionId, visitor: { displayName, guardianName: 'Tia', phone: '+55 11 5555-9999' } },
        TOKENS.CHAMADOR,
      );
      expect(r.status, r.text).to.equal(201);
      return decodeAs(t.type({ studentId: t.string }), r.json).studentId;
    };
    const first = await walkIn(sessionA, 'Zé');
    const second = await walkIn(sessionB, 'Lia');
    const report = decodeAs(Visitors, (await get('/api/v1/reports/visitors')).json);
    expect(report.to).to.equal(today());
    expect(report.truncated).to.equal(false);
    expect(report.items.map((v) => v.studentId)).to.have.members([second, first]);
    // Newest first (two walk-ins in one millisecond fall back to the id, so only the order is checked).
    const times = report.items.map((v) => v.createdAt);
    expect(times).to.deep.equal([...times].sort().reverse());
    expect(report.items.find((v) => v.studentId === first)).to.deep.include({
      displayName: 'Zé',
      classId: classA,
      status: 'ACTIVE',
    });
    const byClass = decodeAs(Visitors, (await get(`/api/v1/reports/visitors?classId=${classB}`)).json);
    expect(byClass.items.map((v) => v.displayName)).to.deep.equal(['Lia']);
    const past = decodeAs(
      Visitors,
      (await get('/api/v1/reports/visitors?from=2020-01-01&to=2020-01-31')).json,
    );
    expect(past.items).to.deep.equal([]);
    expectEnvelope(await get('/api/v1/reports/visitors', TOKENS.CHAMADOR), 403, 'FORBIDDEN_ROLE');
    expectEnvelope(
      await get('/api/v1/reports/visitors?from=2026-11-26&to=2026-11-25'),
      400,
      'VALIDATION_FAILED',
    );
    expectEnvelope(
      await get('/api/v1/reports/visitors?from=2024-01-01&to=2026-11-25'),
      400,
      'VALIDATION_FAILED',
    );
  });
});
