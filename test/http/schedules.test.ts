/** Recurring schedules (decision 0031), black-box through the real app with a controlled clock. */
import { expect } from 'chai';
import { ClassC, ClassSessionList } from '../../src/domain/classes.js';
import { Schedule, ScheduleList } from '../../src/domain/schedules.js';
import { Student } from '../../src/domain/student.js';
import { TOKENS, useService } from '../support/harness.js';
import { call, decodeAs, expectEnvelope } from '../support/http.js';
import { authHeaders, mutate, startTestService } from '../support/testService.js';

const ADMIN = TOKENS.ADMIN;
const CHAMADOR = TOKENS.CHAMADOR;

describe('recurring schedules', function () {
  this.timeout(60_000);
  // Sunday 1 March 2026, 08:00 in São Paulo.
  let now = Date.parse('2026-03-01T11:00:00Z');
  const h = useService(() => {
    now = Date.parse('2026-03-01T11:00:00Z');
    return { clock: () => new Date(now) };
  }, 'test');
  let classId: string;

  const sessions = async () => {
    const r = await h.get(`/api/v1/sessions?classId=${classId}`, ADMIN);
    return decodeAs(ClassSessionList, r.json).items;
  };
  const createSchedule = async (body: Record<string, unknown>) => {
    const r = await h.send('POST', `/api/v1/schedules`, body, ADMIN);
    expect(r.status, r.text).to.equal(201);
    return decodeAs(Schedule, r.json);
  };

  beforeEach(async () => {
    classId = decodeAs(
      ClassC,
      (await h.send('POST', `/api/v1/classes`, { name: 'Maternal' }, ADMIN)).json,
    ).classId;
  });

  it('a weekly schedule makes four weeks of sessions at its local time, in São Paulo by default', async () => {
    const s = await createSchedule({
      classId,
      weekdays: ['SUN', 'WED'],
      localTime: '09:00',
      from: '2026-03-01',
      title: 'Culto',
    });
    expect(s.timeZone).to.equal('America/Sao_Paulo');
    const list = await sessions();
    expect(list.map((x) => x.date)).to.deep.equal([
      '2026-03-01',
      '2026-03-04',
      '2026-03-08',
      '2026-03-11',
      '2026-03-15',
      '2026-03-18',
      '2026-03-22',
      '2026-03-25',
    ]);
    expect(list[0]?.startsAt).to.equal('2026-03-01T12:00:00.000Z');
    expect(list[0]?.title).to.equal('Culto');
    const listed = await h.get(`/api/v1/schedules`, CHAMADOR);
    expect(decodeAs(ScheduleList, listed.json).items.map((x) => x.scheduleId)).to.deep.equal([s.scheduleId]);
  });

  it('materialising again, or on several instances at once, makes no duplicate; the window moves with the days', async () => {
    await createSchedule({ classId, weekdays: ['SUN'], localTime: '09:00', from: '2026-03-01' });
    const results = await Promise.all([
      h.svc.deps.schedules.materialiseAll(),
      h.svc.deps.schedules.materialiseAll(),
      h.svc.deps.schedules.materialiseAll(),
    ]);
    expect(results.map((r) => r.created)).to.deep.equal([0, 0, 0]);
    expect((await sessions()).length).to.equal(4);
    now += 7 * 86_400_000;
    expect((await h.svc.deps.schedules.materialiseAll()).created).to.equal(1);
    expect((await sessions()).map((x) => x.date).at(-1)).to.equal('2026-03-29');
  });

  it('a restarted service on the same data makes none twice', async () => {
    await createSchedule({ classId, weekdays: ['SUN'], localTime: '09:00', from: '2026-03-01' });
    const before = (await sessions()).map((x) => x.sessionId);
    await h.svc.stop(1000);
    // The restart materialises at start, as every instance does; `svc.dispose` still removes the data.
    const restarted = await startTestService({
      clock: () => new Date(now),
      env: { DATA_DIR: h.svc.deps.config.dataDir },
    });
    try {
      expect((await restarted.deps.schedules.materialiseAll()).created).to.equal(0);
      const r = await call(`${restarted.url}/api/v1/sessions?classId=${classId}`, {
        headers: authHeaders(ADMIN),
      });
      expect(decodeAs(ClassSessionList, r.json).items.map((x) => x.sessionId)).to.deep.equal(before);
    } finally {
      await restarted.dispose();
    }
  });

  it('editing changes only sessions to come without check-ins; past and checked-in ones stay', async () => {
    const s = await createSchedule({ classId, weekdays: ['SUN'], localTime: '09:00', from: '2026-03-01' });
    const [today, next] = await sessions();
    // A child checked in to next Sunday's session.
    const student = await mutate(
      `${h.url}/api/v1/students`,
      'POST',
      { displayName: 'Ana', guardianName: 'Rui', phones: [], classId },
      ADMIN,
    );
    const studentId = decodeAs(Student, student.json).studentId;
    expect(
      (await h.send('POST', `/api/v1/check-in`, { studentId, sessionId: next?.sessionId }, ADMIN)).status,
    ).to.equal(201);
    now = Date.parse('2026-03-01T13:00:00Z'); // today's 09:00 has begun
    const r = await mutate(
      `${h.url}/api/v1/schedules/${s.scheduleId}`,
      'PATCH',
      { localTime: '10:30' },
      ADMIN,
    );
    expect(r.status, r.text).to.equal(200);
    const after = await sessions();
    expect(after.find((x) => x.sessionId === today?.sessionId)?.startsAt).to.equal(
      '2026-03-01T12:00:00.000Z',
    );
    expect(after.find((x) => x.sessionId === next?.sessionId)?.startsAt).to.equal('2026-03-08T12:00:00.000Z');
    expect(after.find((x) => x.date === '2026-03-15')?.startsAt).to.equal('2026-03-15T13:30:00.000Z');
  });

  it('a skipped date loses its session, an added one gains one, and ending removes the sessions to come', async () => {
    const s = await createSchedule({ classId, weekdays: ['SUN'], localTime: '09:00', from: '2026-03-01' });
    const skip = await mutate(
      `${h.url}/api/v1/schedules/${s.scheduleId}/skip`,
      'POST',
      { date: '2026-03-08' },
      ADMIN,
    );
    expect(decodeAs(Schedule, skip.json).skipDates).to.deep.equal(['2026-03-08']);
    await h.send('POST', `/api/v1/schedules/${s.scheduleId}/add`, { date: '2026-03-10' }, ADMIN);
    expect((await sessions()).map((x) => x.date)).to.deep.equal([
      '2026-03-01',
      '2026-03-10',
      '2026-03-15',
      '2026-03-22',
    ]);
    const ended = await mutate(
      `${h.url}/api/v1/schedules/${s.scheduleId}/end`,
      'POST',
      { lastDate: '2026-03-10' },
      ADMIN,
    );
    expect(decodeAs(Schedule, ended.json).status).to.equal('ENDED');
    expect((await sessions()).map((x) => x.date)).to.deep.equal(['2026-03-01', '2026-03-10']);
    expectEnvelope(
      await h.send('PATCH', `/api/v1/schedules/${s.scheduleId}`, { title: 'x' }, ADMIN),
      409,
      'CONFLICT',
    );
  });

  it('bad input is refused in the envelope', async () => {
    const bad = (body: Record<string, unknown>) => h.send('POST', `/api/v1/schedules`, body, ADMIN);
    expectEnvelope(
      await bad({ classId, weekdays: ['SUNDAY'], localTime: '09:00', from: '2026-03-01' }),
      400,
      'VALIDATION_FAILED',
    );
    expectEnvelope(
      await bad({ classId, weekdays: ['SUN'], localTime: '9h', from: '2026-03-01' }),
      400,
      'VALIDATION_FAILED',
    );
    expectEnvelope(
      await bad({
        classId,
        weekdays: ['SUN'],
        localTime: '09:00',
        from: '2026-03-01',
        timeZone: 'Mars/Olympus',
      }),
      400,
      'VALIDATION_FAILED',
    );
    expectEnvelope(
      await bad({ classId, weekdays: ['SUN'], localTime: '09:00', from: '2026-03-01', until: '2026-02-01' }),
      400,
      'VALIDATION_FAILED',
    );
    expectEnvelope(
      await bad({
        classId: '11111111-1111-4111-8111-111111111111',
        weekdays: ['SUN'],
        localTime: '09:00',
        from: '2026-03-01',
      }),
      400,
      'VALIDATION_FAILED',
    );
    expectEnvelope(
      await h.send('POST', `/api/v1/schedules/nope/skip`, { date: '2026-03-08' }, ADMIN),
      404,
      'NOT_FOUND',
    );
    expectEnvelope(
      await mutate(
        `${h.url}/api/v1/schedules`,
        'POST',
        { classId, weekdays: ['SUN'], localTime: '09:00', from: '2026-03-01' },
        CHAMADOR,
      ),
      403,
      'FORBIDDEN_ROLE',
    );
  });
});
