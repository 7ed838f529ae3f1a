/**
 * Deactivating and reactivating nuclei, classes and sessions (0047), black-box through the real app:
 * what the lists show, what check-in and check-out do, who may, replays, the audit, the schedules.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import * as t from 'io-ts';
import {
  ClassC,
  ClassList,
  ClassSession,
  ClassSessionList,
  Nucleus,
  NucleusList,
} from '../../src/domain/classes.js';
import { TOKENS, useService } from '../support/harness.js';
import { call, decodeAs, expectEnvelope, type HttpResult } from '../support/http.js';
import { mutationHeaders } from '../support/testService.js';

const ADMIN = TOKENS.ADMIN;
const CADASTRO = TOKENS.CADASTRO;
const CHAMADOR = TOKENS.CHAMADOR;

const CheckIn = t.type({ checkInId: t.string, code: t.string });
const Created = t.type({ studentId: t.string });
const AuditPage = t.type({
  items: t.array(
    t.type({
      endpoint: t.string,
      outcome: t.string,
      actor_user_id: t.unknown,
      actor_role: t.unknown,
      subject_id: t.unknown,
      details: t.UnknownRecord,
    }),
  ),
});
const Report = t.type({
  rows: t.array(t.type({ sessionId: t.union([t.string, t.null]), studentId: t.string })),
});
const Schedule = t.type({ scheduleId: t.string });

describe('deactivating classes, nuclei and sessions', function () {
  this.timeout(60_000);
  let now: number;
  const h = useService(() => {
    now = Date.parse('2026-03-01T12:00:00Z');
    return { clock: () => new Date(now) };
  }, 'test');

  const { send } = h.as(ADMIN);
  const { get } = h.as(ADMIN);
  const ok = <C extends t.Mixed>(codec: C, r: HttpResult, status = 200): t.TypeOf<C> => {
    expect(r.status, r.text).to.equal(status);
    return decodeAs(codec, r.json);
  };
  const reason = (r: HttpResult, status = 409) => expectEnvelope(r, status, 'CONFLICT').details?.reason;

  const newClass = async (name: string, nucleusId?: string) =>
    ok(
      ClassC,
      await send('POST', '/api/v1/classes', { name, ...(nucleusId === undefined ? {} : { nucleusId }) }),
      201,
    );
  const newSession = async (classId: string, date = '2026-03-01') =>
    ok(ClassSession, await send('POST', '/api/v1/sessions', { classId, date }), 201);
  const newChild = async (classId: string, displayName = 'Ana') =>
    ok(
      Created,
      await send('POST', '/api/v1/students', {
        displayName,
        guardianName: 'Cláudia Silva',
        phones: [{ number: '+55 11 5555-0101', qualifier: 'mãe' }],
        classId,
      }),
      201,
    ).studentId;
  const checkIn = (sessionId: string, studentId: string) =>
    send('POST', '/api/v1/check-in', { sessionId, studentId }, CHAMADOR);
  const checkOut = (checkInId: string, code: string) =>
    send('POST', '/api/v1/check-out', { checkInId, code, pickupPerson: 'Cláudia Silva' }, CHAMADOR);
  const classIds = async (query = '') =>
    ok(ClassList, await get(`/api/v1/classes${query}`)).items.map((c) => [c.name, c.status]);

  it('a class: hidden from the list, check-in refused, check-out still works, reactivated it takes check-ins again', async () => {
    const room = await newClass('Juniores');
    await newClass('Adolescentes');
    const session = await newSession(room.classId);
    const ana = await newChild(room.classId, 'Ana');
    const bia = await newChild(room.classId, 'Bia');
    const inside = ok(CheckIn, await checkIn(session.sessionId, ana), 201);

    const off = ok(ClassC, await send('POST', `/api/v1/classes/${room.classId}/deactivate`));
    expect(off).to.deep.include({ classId: room.classId, name: 'Juniores', status: 'DEACTIVATED' });
    expect(await classIds()).to.deep.equal([['Adolescentes', 'ACTIVE']]);
    expect(await classIds('?includeInactive=true')).to.deep.equal([
      ['Adolescentes', 'ACTIVE'],
      ['Juniores', 'DEACTIVATED'],
    ]);
    expect(await classIds('?includeInactive=false')).to.deep.equal([['Adolescentes', 'ACTIVE']]);
    expectEnvelope(await get('/api/v1/classes?includeInactive=yes'), 400, 'VALIDATION_FAILED');
    // Its sessions are left out by default too, though their own status has not changed.
    expect(ok(ClassSessionList, await get('/api/v1/sessions?date=2026-03-01')).items).to.deep.equal([]);
    const all = ok(
      ClassSessionList,
      await get('/api/v1/sessions?date=2026-03-01&includeInactive=true'),
    ).items;
    expect(all.map((s) => [s.sessionId, s.status])).to.deep.equal([[session.sessionId, 'ACTIVE']]);

    const refused = expectEnvelope(await checkIn(session.sessionId, bia), 409, 'CONFLICT');
    expect(refused.details).to.deep.equal({ reason: 'CLASS_DEACTIVATED' });
    // A first-time visitor is refused before being registered: no orphan record.
    const visitor = await send(
      'POST',
      '/api/v1/check-in',
      {
        sessionId: session.sessionId,
        visitor: { displayName: 'Caio', guardianName: 'Rita', phone: '11 5555 0199' },
      },
      CHAMADOR,
    );
    expect(reason(visitor)).to.equal('CLASS_DEACTIVATED');
    expect(JSON.stringify((await get('/api/v1/students?q=Caio')).json)).not.to.contain('Caio');
    // The child already in the room goes home.
    const out = await checkOut(inside.checkInId, inside.code);
    expect(out.status, out.text).to.equal(200);
    expect(out.json).to.deep.include({ status: 'CHECKED_OUT' });
    // History stays: the attendance report still lists the check-in at the deactivated class's session.
    const report = ok(
      Report,
      await get(`/api/v1/reports/attendance?from=2026-03-01&sessionId=${session.sessionId}`),
    );
    expect(report.rows.map((r) => r.studentId)).to.deep.equal([ana]);

    const on = ok(ClassC, await send('POST', `/api/v1/classes/${room.classId}/reactivate`));
    expect(on.status).to.equal('ACTIVE');
    expect(await classIds()).to.deep.equal([
      ['Adolescentes', 'ACTIVE'],
      ['Juniores', 'ACTIVE'],
    ]);
    expect((await checkIn(session.sessionId, bia)).status).to.equal(201);
  });

  it('a session: hidden, refused with its own reason, check-out works, reactivated it admits', async () => {
    const room = await newClass('Juniores');
    const session = await newSession(room.classId);
    const other = await newSession(room.classId);
    const ana = await newChild(room.classId, 'Ana');
    const bia = await newChild(room.classId, 'Bia');
    const inside = ok(CheckIn, await checkIn(session.sessionId, ana), 201);

    const off = ok(ClassSession, await send('POST', `/api/v1/sessions/${session.sessionId}/deactivate`));
    expect(off).to.deep.include({ sessionId: session.sessionId, status: 'DEACTIVATED' });
    const listed = async (q: string) =>
      ok(ClassSessionList, await get(`/api/v1/sessions?classId=${room.classId}${q}`)).items.map(
        (s) => s.sessionId,
      );
    expect(await listed('')).to.deep.equal([other.sessionId]);
    expect(await listed('&includeInactive=true')).to.have.members([session.sessionId, other.sessionId]);

    expect(expectEnvelope(await checkIn(session.sessionId, bia), 409, 'CONFLICT').details).to.deep.equal({
      reason: 'SESSION_DEACTIVATED',
    });
    // No override passes a closed session, an ADMIN's neither.
    const overridden = await send('POST', '/api/v1/check-in', {
      sessionId: session.sessionId,
      studentId: bia,
      override: { justification: 'the coordinator said so' },
    });
    expect(reason(overridden)).to.equal('SESSION_DEACTIVATED');
    expect((await checkIn(other.sessionId, bia)).status, 'another session of the class').to.equal(201);
    const out = await checkOut(inside.checkInId, inside.code);
    expect(out.status, out.text).to.equal(200);

    ok(ClassSession, await send('POST', `/api/v1/sessions/${session.sessionId}/reactivate`));
    expect((await checkIn(session.sessionId, ana)).status, 'a re-entry after reactivation').to.equal(201);
  });

  it('only an ADMIN deactivates or reactivates: CADASTRO and CHAMADOR are 403, and nothing changes', async () => {
    const room = await newClass('Juniores');
    const session = await newSession(room.classId);
    const nucleus = ok(Nucleus, await send('POST', '/api/v1/nuclei', { name: 'Sul' }), 201);
    for (const token of [CADASTRO, CHAMADOR])
      for (const path of [
        `/api/v1/classes/${room.classId}/deactivate`,
        `/api/v1/classes/${room.classId}/reactivate`,
        `/api/v1/sessions/${session.sessionId}/deactivate`,
        `/api/v1/nuclei/${nucleus.nucleusId}/deactivate`,
      ])
        expectEnvelope(await send('POST', path, undefined, token), 403, 'FORBIDDEN_ROLE');
    expect(await classIds()).to.deep.equal([['Juniores', 'ACTIVE']]);
    expect(ok(NucleusList, await get('/api/v1/nuclei')).items.map((n) => n.status)).to.deep.equal(['ACTIVE']);
  });

  it('a replay with the same key answers as the first; a new key meets the state: 409 ALREADY_DEACTIVATED', async () => {
    const room = await newClass('Juniores');
    const path = `/api/v1/classes/${room.classId}/deactivate`;
    const headers = mutationHeaders(ADMIN, randomUUID());
    const first = await call(`${h.url}${path}`, { method: 'POST', headers });
    expect(first.status, first.text).to.equal(200);
    now += 60_000;
    const again = await call(`${h.url}${path}`, { method: 'POST', headers });
    expect(again.status).to.equal(200);
    expect(again.headers.get('idempotent-replayed')).to.equal('true');
    expect(again.json).to.deep.equal(first.json);
    expect(reason(await send('POST', path))).to.equal('ALREADY_DEACTIVATED');
    ok(ClassC, await send('POST', `/api/v1/classes/${room.classId}/reactivate`));
    expect(reason(await send('POST', `/api/v1/classes/${room.classId}/reactivate`))).to.equal(
      'ALREADY_ACTIVE',
    );
    expectEnvelope(await send('POST', `/api/v1/classes/${randomUUID()}/deactivate`), 404, 'NOT_FOUND');
  });

  it('each change and each refusal is in the audit log, under the class, with who and the outcome', async () => {
    const room = await newClass('Juniores');
    ok(ClassC, await send('POST', `/api/v1/classes/${room.classId}/deactivate`));
    reason(await send('POST', `/api/v1/classes/${room.classId}/deactivate`));
    ok(ClassC, await send('POST', `/api/v1/classes/${room.classId}/reactivate`));
    const page = ok(AuditPage, await get(`/api/v1/audit-logs?subjectId=${room.classId}`));
    const entries = page.items
      .filter((e) => e.endpoint.includes('activate'))
      .map((e) => [e.endpoint, e.outcome, e.actor_role, e.details.status, e.details.errorCode ?? null]);
    expect(entries).to.have.deep.members([
      ['POST /api/v1/classes/{classId}/deactivate', 'SUCCESS', 'ADMIN', 200, null],
      ['POST /api/v1/classes/{classId}/deactivate', 'FAILURE', 'ADMIN', 409, 'CONFLICT'],
      ['POST /api/v1/classes/{classId}/reactivate', 'SUCCESS', 'ADMIN', 200, null],
    ]);
    expect(new Set(page.items.map((e) => e.actor_user_id))).to.deep.equal(new Set(['dev-admin']));
  });

  it('a nucleus is deactivated only once its classes are not active, and keeps deactivated classes there', async () => {
    const south = ok(Nucleus, await send('POST', '/api/v1/nuclei', { name: 'Sul' }), 201);
    const a = await newClass('A', south.nucleusId);
    const b = await newClass('B', south.nucleusId);
    const refused = expectEnvelope(
      await send('POST', `/api/v1/nuclei/${south.nucleusId}/deactivate`),
      409,
      'CONFLICT',
    );
    expect(refused.details).to.deep.equal({
      reason: 'NUCLEUS_HAS_ACTIVE_CLASSES',
      classIds: [a.classId, b.classId].sort(),
    });
    ok(ClassC, await send('POST', `/api/v1/classes/${a.classId}/deactivate`));
    // Moving the other away also frees the nucleus.
    ok(ClassC, await send('PATCH', `/api/v1/classes/${b.classId}`, { nucleusId: null }));
    const off = ok(Nucleus, await send('POST', `/api/v1/nuclei/${south.nucleusId}/deactivate`));
    expect(off.status).to.equal('DEACTIVATED');
    expect(ok(NucleusList, await get('/api/v1/nuclei')).items).to.deep.equal([]);
    expect(
      ok(NucleusList, await get('/api/v1/nuclei?includeInactive=true')).items.map((n) => n.name),
    ).to.deep.equal(['Sul']);

    // No active class goes into it: created, moved or reactivated there.
    expect(reason(await send('POST', '/api/v1/classes', { name: 'C', nucleusId: south.nucleusId }))).to.equal(
      'NUCLEUS_DEACTIVATED',
    );
    expect(
      reason(await send('PATCH', `/api/v1/classes/${b.classId}`, { nucleusId: south.nucleusId })),
    ).to.equal('NUCLEUS_DEACTIVATED');
    expect(reason(await send('POST', `/api/v1/classes/${a.classId}/reactivate`))).to.equal(
      'NUCLEUS_DEACTIVATED',
    );
    // A deactivated class stays editable where it is.
    expect(
      ok(ClassC, await send('PATCH', `/api/v1/classes/${a.classId}`, { name: 'A antiga' })).status,
    ).to.equal('DEACTIVATED');

    ok(Nucleus, await send('POST', `/api/v1/nuclei/${south.nucleusId}/reactivate`));
    // Nothing cascades back: the class is reactivated on its own.
    expect(await classIds('?includeInactive=true')).to.deep.include(['A antiga', 'DEACTIVATED']);
    expect(ok(ClassC, await send('POST', `/api/v1/classes/${a.classId}/reactivate`)).status).to.equal(
      'ACTIVE',
    );
  });

  it('a deactivated class gets no new session, by hand or by schedule; reactivated, its schedule makes them at once', async () => {
    const room = await newClass('Juniores');
    const other = await newClass('Outra');
    const kept = await newSession(room.classId);
    ok(ClassC, await send('POST', `/api/v1/classes/${room.classId}/deactivate`));
    expect(
      reason(await send('POST', '/api/v1/sessions', { classId: room.classId, date: '2026-03-08' })),
    ).to.equal('CLASS_DEACTIVATED');
    const elsewhere = await newSession(other.classId);
    expect(
      reason(await send('PATCH', `/api/v1/sessions/${elsewhere.sessionId}`, { classId: room.classId })),
    ).to.equal('CLASS_DEACTIVATED');
    expect(
      reason(
        await send('POST', '/api/v1/schedules', {
          classId: room.classId,
          weekdays: ['SUN'],
          localTime: '09:00',
          from: '2026-03-01',
        }),
      ),
    ).to.equal('CLASS_DEACTIVATED');
    // A session of the deactivated class is not reactivated alone.
    ok(ClassSession, await send('POST', `/api/v1/sessions/${kept.sessionId}/deactivate`));
    expect(reason(await send('POST', `/api/v1/sessions/${kept.sessionId}/reactivate`))).to.equal(
      'CLASS_DEACTIVATED',
    );

    // A schedule made while the class was active stops making sessions once it is deactivated.
    ok(ClassC, await send('POST', `/api/v1/classes/${room.classId}/reactivate`));
    const weekly = ok(
      Schedule,
      await send('POST', '/api/v1/schedules', {
        classId: room.classId,
        weekdays: ['WED'],
        localTime: '19:30',
        from: '2026-03-01',
      }),
      201,
    );
    const sessionsOf = async () =>
      ok(
        ClassSessionList,
        await get(`/api/v1/sessions?classId=${room.classId}&includeInactive=true`),
      ).items.filter((s) => s.sessionId !== kept.sessionId);
    expect((await sessionsOf()).map((s) => s.date)).to.deep.equal([
      '2026-03-04',
      '2026-03-11',
      '2026-03-18',
      '2026-03-25',
    ]);
    ok(ClassC, await send('POST', `/api/v1/classes/${room.classId}/deactivate`));
    // Four weeks on, the window has moved; a change of the schedule runs it: nothing is made while the
    // class is deactivated, not even the date just added.
    now = Date.parse('2026-03-29T12:00:00Z');
    ok(Schedule, await send('POST', `/api/v1/schedules/${weekly.scheduleId}/add`, { date: '2026-04-02' }));
    const before = ['2026-03-04', '2026-03-11', '2026-03-18', '2026-03-25'];
    expect((await sessionsOf()).map((s) => s.date)).to.deep.equal(before);
    ok(ClassC, await send('POST', `/api/v1/classes/${room.classId}/reactivate`));
    expect((await sessionsOf()).map((s) => s.date)).to.deep.equal([
      ...before,
      '2026-04-01',
      '2026-04-02',
      '2026-04-08',
      '2026-04-15',
      '2026-04-22',
    ]);
  });
});
