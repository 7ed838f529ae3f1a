/**
 * Check-ins follow their events: a tablet's offline check-in, check-out and emergency check-out
 * become the records the REST desk reads and acts on, and an ADMIN's offline decision overrides a
 * concurrent CHAMADOR one, whichever path each came by.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import * as t from 'io-ts';
import { TOKENS, useService } from '../support/harness.js';
import { call, decodeAs, expectEnvelope } from '../support/http.js';
import { seedSmallRoster, syncEvents } from '../support/seed.js';
import { authHeaders, mutationHeaders } from '../support/testService.js';

const CheckIn = t.type({ checkInId: t.string, code: t.string, status: t.string });
const Found = t.type({ checkIn: t.type({ checkInId: t.string, status: t.string }) });
describe('check-in records follow the check-in events', function () {
  this.timeout(60_000);
  const h = useService({}, 'test');
  let sessionId: string;
  let studentId: string;
  const { post } = h.as(TOKENS.CHAMADOR);
  const sync = async (events: unknown[], token: string = TOKENS.CHAMADOR) => {
    const answer = await syncEvents(h.url, events, token);
    expect(answer.failed).to.deep.equal([]);
    return answer;
  };
  const find = async (checkInId: string) => {
    const r = await call(`${h.url}/api/v1/check-in/active?checkInId=${checkInId}`, {
      headers: authHeaders(TOKENS.CHAMADOR),
    });
    expect(r.status, r.text).to.equal(200);
    return decodeAs(Found, r.json).checkIn;
  };
  const offlineCheckIn = (checkInId: string, at = '2026-11-26T09:00:00.000Z') => ({
    eventId: randomUUID(),
    type: 'CHECK_IN',
    studentId,
    sessionId,
    checkInId,
    clientTimestamp: at,
  });

  beforeEach(async () => {
    ({
      sessionId,
      studentIds: [studentId = ''],
    } = await h.seedRoster({ students: ['Ana'] }));
  });

  it('an offline check-in becomes a record the desk finds and checks out with the daily code', async () => {
    const checkInId = randomUUID();
    await sync([offlineCheckIn(checkInId)]);
    expect((await find(checkInId)).status).to.equal('CHECKED_IN');
    // The desk looks the child up and reads the code the tablet printed (the same derivation).
    const byChild = await call(
      `${h.url}/api/v1/check-in/active?studentId=${studentId}&sessionId=${sessionId}`,
      {
        headers: authHeaders(TOKENS.CHAMADOR),
      },
    );
    expect(decodeAs(Found, byChild.json).checkIn.checkInId).to.equal(checkInId);
    const record = await h.svc.deps.attendance.checkins.find({ checkInId });
    if (record._tag === 'Left') throw new Error('not found');
    const out = await post('/api/v1/check-out', {
      checkInId,
      code: record.right.checkin.code,
      pickupPerson: 'Maria',
    });
    expect(out.status, out.text).to.equal(200);
    expect((await find(checkInId)).status).to.equal('CHECKED_OUT');
    // A second check-in at the desk while none is open is a re-entry, and works.
    const again = await post('/api/v1/check-in', { studentId, sessionId });
    expect(again.status, again.text).to.equal(201);
  });

  it('an offline check-out of a desk check-in closes it; the desk then answers 409', async () => {
    const desk = await post('/api/v1/check-in', { studentId, sessionId });
    expect(desk.status, desk.text).to.equal(201);
    const c = decodeAs(CheckIn, desk.json);
    const aspect = `checkin:${sessionId}:${studentId}`;
    const version = (await h.svc.deps.sync.pipeline.current(aspect))?.version ?? null;
    await sync([
      {
        eventId: randomUUID(),
        type: 'CHECK_OUT',
        studentId,
        sessionId,
        checkInId: c.checkInId,
        pickupPerson: 'Avó',
        baseVersion: version,
        clientTimestamp: new Date().toISOString(),
      },
    ]);
    expect((await find(c.checkInId)).status).to.equal('CHECKED_OUT');
    const out = await post('/api/v1/check-out', {
      checkInId: c.checkInId,
      code: c.code,
      pickupPerson: 'Maria',
    });
    expectEnvelope(out, 409, 'CONFLICT');
  });

  it("an ADMIN's offline emergency check-out overrides a concurrent, later desk check-out by a CHAMADOR", async () => {
    const desk = decodeAs(CheckIn, (await post('/api/v1/check-in', { studentId, sessionId })).json);
    const aspect = `checkin:${sessionId}:${studentId}`;
    const seen = (await h.svc.deps.sync.pipeline.current(aspect))?.version ?? null;
    // The CHAMADOR checks the child out at the desk (online)...
    const out = await post('/api/v1/check-out', {
      checkInId: desk.checkInId,
      code: desk.code,
      pickupPerson: 'Tio',
    });
    expect(out.status, out.text).to.equal(200);
    // ...while an ADMIN's tablet, offline, had done an emergency check-out from the same version, earlier.
    const emergency = {
      eventId: randomUUID(),
      type: 'EMERGENCY_CHECKOUT',
      studentId,
      sessionId,
      checkInId: desk.checkInId,
      pickupPerson: 'Avó',
      justification: 'febre alta, mãe autorizou',
      baseVersion: seen,
      clientTimestamp: '2026-01-01T00:00:00.000Z',
    };
    const answer = await sync([emergency], TOKENS.ADMIN);
    expect(answer.synced[0]?.status).to.equal('APPLIED');
    expect(answer.conflicts.map((c) => [c.policy, c.winnerEventId])).to.deep.equal([
      ['ADMIN_PRECEDENCE', emergency.eventId],
    ]);
    const record = await h.svc.deps.attendance.checkins.find({ checkInId: desk.checkInId });
    if (record._tag === 'Left') throw new Error('not found');
    expect(record.right.checkin).to.deep.include({
      status: 'CHECKED_OUT',
      emergency: true,
      pickupPerson: 'Avó',
      checkedOutBy: 'dev-admin',
    });
  });

  it('two offline check-ins of one child: the ADMIN one stands, the other is kept as SUPERSEDED', async () => {
    const callerCheckIn = randomUUID();
    await sync([offlineCheckIn(callerCheckIn, '2026-11-26T09:05:00.000Z')]);
    expect((await find(callerCheckIn)).status).to.equal('CHECKED_IN');
    const adminCheckIn = randomUUID();
    const answer = await sync([offlineCheckIn(adminCheckIn, '2026-11-26T09:00:00.000Z')], TOKENS.ADMIN);
    expect(answer.conflicts.map((c) => c.policy)).to.deep.equal(['ADMIN_PRECEDENCE']);
    expect((await find(adminCheckIn)).status).to.equal('CHECKED_IN');
    expect((await find(callerCheckIn)).status).to.equal('SUPERSEDED');
    // The desk finds the standing one by child, and refuses to check out the superseded one.
    const byChild = await call(
      `${h.url}/api/v1/check-in/active?studentId=${studentId}&sessionId=${sessionId}`,
      {
        headers: authHeaders(TOKENS.CHAMADOR),
      },
    );
    expect(decodeAs(Found, byChild.json).checkIn.checkInId).to.equal(adminCheckIn);
    const refused = await post('/api/v1/check-out/emergency', {
      checkInId: callerCheckIn,
      justification: 'tentativa no registro perdido',
      pickupPerson: 'Maria',
    });
    expect(expectEnvelope(refused, 409, 'CONFLICT').details).to.deep.include({
      reason: 'CHECKIN_SUPERSEDED',
    });
  });
});

describe('student records follow their field events', function () {
  this.timeout(60_000);
  const h = useService({}, 'test');
  let studentId: string;
  const send = (method: string, path: string, body: unknown, token: string) =>
    call(`${h.url}${path}`, { method, headers: mutationHeaders(token), body: JSON.stringify(body) });
  const read = async () => {
    const r = await call(`${h.url}/api/v1/students/${studentId}`, {
      headers: authHeaders(TOKENS.ADMIN),
    });
    return decodeAs(t.type({ displayName: t.string, allergies: t.union([t.string, t.null]) }), r.json);
  };
  const listed = async () => {
    const r = await call(`${h.url}/api/v1/students?q=joao`, {
      headers: authHeaders(TOKENS.ADMIN),
    });
    return decodeAs(t.type({ items: t.array(t.type({ displayName: t.string })) }), r.json).items.map(
      (i) => i.displayName,
    );
  };

  beforeEach(async () => {
    studentId = (await seedSmallRoster(h.url, ['Joao'])).studentIds[0] ?? '';
  });

  it("an ADMIN's offline correction beats a concurrent, later desk edit; an edit based on it then applies", async () => {
    const desk = await send(
      'PATCH',
      `/api/v1/students/${studentId}`,
      { displayName: 'João Pedro' },
      TOKENS.CADASTRO,
    );
    expect(desk.status, desk.text).to.equal(200);
    expect((await read()).displayName).to.equal('João Pedro');
    // The ADMIN's tablet had the creation value (no version) and corrected the name before the desk did.
    const admin = {
      eventId: randomUUID(),
      type: 'STUDENT_FIELD_SET',
      studentId,
      field: 'displayName',
      value: 'João P.',
      clientTimestamp: '2026-01-01T10:02:00.000Z',
    };
    const answer = await syncEvents(h.url, [admin], TOKENS.ADMIN);
    expect(answer.synced[0]?.status).to.equal('APPLIED');
    expect(answer.conflicts.map((c) => [c.policy, c.winnerEventId])).to.deep.equal([
      ['ADMIN_PRECEDENCE', admin.eventId],
    ]);
    expect((await read()).displayName).to.equal('João P.');
    expect(await listed()).to.deep.equal(['João P.']);
    // The desk, now having seen the ADMIN's version, fixes it again: no conflict, it applies.
    const again = await send(
      'PATCH',
      `/api/v1/students/${studentId}`,
      { displayName: 'João Pedro' },
      TOKENS.CADASTRO,
    );
    expect(again.status, again.text).to.equal(200);
    expect((await read()).displayName).to.equal('João Pedro');
    expect(await listed()).to.deep.equal(['João Pedro']);
  });

  it('a PATCH stores one event per changed field, with its value, and none for an unchanged one', async () => {
    const r = await send(
      'PATCH',
      `/api/v1/students/${studentId}`,
      { displayName: 'Joao', allergies: 'Leite' },
      TOKENS.CADASTRO,
    );
    expect(r.status, r.text).to.equal(200);
    const events = await h.svc.store.db.events.find({
      selector: { type: 'STUDENT_FIELD_SET', subjectId: studentId },
    });
    expect(events.docs.map((d) => JSON.stringify(d))).to.have.length(1);
    expect(JSON.stringify(events.docs[0])).to.contain('"field":"allergies"');
    expect((await read()).allergies).to.equal('Leite');
  });
});
