/**
 * The admission rule over REST, black-box: a full room, a ratio and the volunteers in the room, an age
 * range, the fields a church requires, and an ADMIN's audited override. One service for the file; each
 * test makes its own class and session.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import * as t from 'io-ts';
import { TOKENS, useService } from '../support/harness.js';
import { call, decodeAs, expectEnvelope } from '../support/http.js';
import { createdId, syncEvents } from '../support/seed.js';
import { authHeaders, DEVICE_ID } from '../support/testService.js';

const Volunteer = t.type({ volunteerId: t.string, userId: t.union([t.string, t.null]), name: t.string });
const VolunteerList = t.type({
  items: t.array(t.type({ volunteerId: t.string, checkedOutAt: t.union([t.string, t.null]) })),
});
const AuditPage = t.type({ items: t.array(t.type({ details: t.UnknownRecord, subject_id: t.unknown })) });

/** A class with `rules`, a session of it, and one child per entry of `children`, made as an ADMIN. */
const roomAt = async (
  url: string,
  rules: Record<string, unknown>,
  children: ReadonlyArray<Record<string, unknown>>,
  date = '2026-11-29',
) => {
  const classId = await createdId(
    url,
    '/api/v1/classes',
    { name: `Sala ${randomUUID()}`, ...rules },
    'classId',
  );
  const sessionId = await createdId(url, '/api/v1/sessions', { classId, date }, 'sessionId');
  const studentIds: string[] = [];
  for (const [i, extra] of children.entries())
    studentIds.push(
      await createdId(
        url,
        '/api/v1/students',
        { displayName: `Criança ${i}`, guardianName: 'G', phones: [], classId, ...extra },
        'studentId',
      ),
    );
  return { classId, sessionId, studentIds };
};

describe('the admission rule at the REST check-in', function () {
  this.timeout(60_000);
  const h = useService();

  const { send } = h.as(TOKENS.ADMIN);
  const checkIn = (body: Record<string, unknown>, token: string = TOKENS.CHAMADOR) =>
    send('POST', '/api/v1/check-in', body, token);
  const room = (rules: Record<string, unknown>, children: ReadonlyArray<Record<string, unknown>>) =>
    roomAt(h.url, rules, children);

  it('a full room answers 409 ROOM_FULL with the count; an ADMIN may override and the audit log says so', async () => {
    const { sessionId, studentIds } = await room({ capacity: 2 }, [{}, {}, {}]);
    const [a = '', b = '', c = ''] = studentIds;
    for (const studentId of [a, b]) expect((await checkIn({ sessionId, studentId })).status).to.equal(201);
    const refused = expectEnvelope(await checkIn({ sessionId, studentId: c }), 409, 'ROOM_FULL');
    expect(refused.details).to.deep.equal({ checkedIn: 2, capacity: 2, overridable: false });
    // A volunteer may not pass it, with or without a justification.
    expectEnvelope(
      await checkIn({ sessionId, studentId: c, override: { justification: 'the parent stays with her' } }),
      403,
      'FORBIDDEN_ROLE',
    );
    const asAdmin = expectEnvelope(
      await checkIn({ sessionId, studentId: c }, TOKENS.ADMIN),
      409,
      'ROOM_FULL',
    );
    expect(asAdmin.details).to.include({ overridable: true });
    expectEnvelope(
      await checkIn({ sessionId, studentId: c, override: { justification: 'short' } }, TOKENS.ADMIN),
      400,
      'VALIDATION_FAILED',
    );
    const passed = await checkIn(
      { sessionId, studentId: c, override: { justification: 'the parent stays with her' } },
      TOKENS.ADMIN,
    );
    expect(passed.status, passed.text).to.equal(201);
    const audit = await call(
      `${h.url}/api/v1/audit-logs?endpoint=${encodeURIComponent('POST /api/v1/check-in')}&subjectId=${c}`,
      { headers: authHeaders(TOKENS.ADMIN) },
    );
    expect(audit.status, audit.text).to.equal(200);
    const entries = decodeAs(AuditPage, audit.json).items.filter((e) => e.subject_id === c);
    expect(entries.map((e) => e.details)).to.deep.include.members([
      { status: 201, deviceId: DEVICE_ID, override: true, waived: 'ROOM_FULL' },
    ]);
  });

  it('RECORD_INCOMPLETE names the missing fields; completing the record lets the child in', async () => {
    const config = await send('PUT', '/api/v1/church/check-in-config', {
      pickupMode: 'CODE_ONLY',
      maxCheckoutAttempts: 5,
      emergencyCheckoutAdminOnly: false,
      requiredFields: ['birthDate', 'guardianPhone', 'allergies', 'imageConsent'],
    });
    expect(config.status, config.text).to.equal(200);
    try {
      const { sessionId, studentIds } = await room({}, [{ allergies: 'amendoim' }]);
      const [child = ''] = studentIds;
      const refused = expectEnvelope(
        await checkIn({ sessionId, studentId: child }),
        409,
        'RECORD_INCOMPLETE',
      );
      expect(refused.details).to.deep.equal({
        missing: ['birthDate', 'guardianPhone', 'imageConsent'],
        overridable: false,
      });
      const patched = await send('PATCH', `/api/v1/students/${child}`, {
        birthDate: '2021-03-14',
        phones: [{ number: '+5511987654321', qualifier: 'mãe' }],
      });
      expect(patched.status, patched.text).to.equal(200);
      expect(
        expectEnvelope(await checkIn({ sessionId, studentId: child }), 409, 'RECORD_INCOMPLETE').details,
      ).to.deep.equal({ missing: ['imageConsent'], overridable: false });
    } finally {
      await send('PUT', '/api/v1/church/check-in-config', {
        pickupMode: 'CODE_ONLY',
        maxCheckoutAttempts: 5,
        emergencyCheckoutAdminOnly: false,
      });
    }
  });

  it('a child outside the class’s age range is refused with the age; one inside is admitted', async () => {
    const { sessionId, studentIds } = await room({ ageRange: { minMonths: 36, maxMonths: 59 } }, [
      { birthDate: '2022-06-10' },
      { birthDate: '2024-01-10' },
      {},
    ]);
    const [inside = '', tooYoung = '', unknown = ''] = studentIds;
    expect((await checkIn({ sessionId, studentId: inside })).status).to.equal(201);
    expect(
      expectEnvelope(await checkIn({ sessionId, studentId: tooYoung }), 409, 'AGE_OUT_OF_RANGE').details,
    ).to.deep.equal({ ageMonths: 34, ageRange: { minMonths: 36, maxMonths: 59 }, overridable: false });
    expect(
      expectEnvelope(await checkIn({ sessionId, studentId: unknown }), 409, 'RECORD_INCOMPLETE').details,
    ).to.deep.equal({ missing: ['birthDate'], overridable: false });
  });

  it('volunteers in the room change what RATIO_EXCEEDED allows; one who leaves no longer counts', async () => {
    const { sessionId, studentIds } = await room({ childrenPerVolunteer: 2 }, [{}, {}, {}]);
    const [a = '', b = '', c = ''] = studentIds;
    expect(
      expectEnvelope(await checkIn({ sessionId, studentId: a }), 409, 'RATIO_EXCEEDED').details,
    ).to.deep.equal({ checkedIn: 0, volunteers: 0, childrenPerVolunteer: 2, overridable: false });
    const user = await createdId(
      h.url,
      '/api/v1/users',
      {
        email: `tia-${randomUUID()}@chamada.local`,
        displayName: 'Tia Rute',
        roles: ['CHAMADOR'],
        password: 'uma-senha-longa-o-bastante',
      },
      'userId',
    );
    const added = await send('POST', `/api/v1/sessions/${sessionId}/volunteers`, { userId: user });
    expect(added.status, added.text).to.equal(201);
    expect(decodeAs(Volunteer, added.json)).to.deep.include({ userId: user, name: 'Tia Rute' });
    const first = decodeAs(Volunteer, added.json).volunteerId;
    expect(
      expectEnvelope(
        await send('POST', `/api/v1/sessions/${sessionId}/volunteers`, { userId: user }),
        409,
        'CONFLICT',
      ).details,
    ).to.deep.equal({ reason: 'ALREADY_IN_ROOM' });
    for (const studentId of [a, b]) expect((await checkIn({ sessionId, studentId })).status).to.equal(201);
    expectEnvelope(await checkIn({ sessionId, studentId: c }), 409, 'RATIO_EXCEEDED');
    const helper = await send('POST', `/api/v1/sessions/${sessionId}/volunteers`, { name: 'Seu Jorge' });
    expect(helper.status, helper.text).to.equal(201);
    expect((await checkIn({ sessionId, studentId: c })).status).to.equal(201);
    const headcount = await call(`${h.url}/api/v1/sessions/${sessionId}/headcount`, {
      headers: authHeaders(TOKENS.CHAMADOR),
    });
    expect(headcount.json).to.deep.include({ checkedIn: 3, volunteers: 2, volunteersNeeded: 2 });
    const left = await send('DELETE', `/api/v1/sessions/${sessionId}/volunteers/${first}`, undefined);
    expect(left.status, left.text).to.equal(200);
    expectEnvelope(
      await send('DELETE', `/api/v1/sessions/${sessionId}/volunteers/${first}`, undefined),
      409,
      'CONFLICT',
    );
    const listed = await call(`${h.url}/api/v1/sessions/${sessionId}/volunteers`, {
      headers: authHeaders(TOKENS.CHAMADOR),
    });
    expect(decodeAs(VolunteerList, listed.json).items.map((v) => v.checkedOutAt === null)).to.deep.equal([
      false,
      true,
    ]);
  });

  it('volunteers: an unknown session is 404, a name and a userId together or neither 400, a non-staff id 400', async () => {
    const { sessionId } = await room({}, []);
    expectEnvelope(
      await send('POST', `/api/v1/sessions/${randomUUID()}/volunteers`, { name: 'Rute' }),
      404,
      'NOT_FOUND',
    );
    for (const body of [{}, { name: 'Rute', userId: randomUUID() }, { userId: randomUUID() }])
      expectEnvelope(
        await send('POST', `/api/v1/sessions/${sessionId}/volunteers`, body),
        400,
        'VALIDATION_FAILED',
      );
    expectEnvelope(
      await send('DELETE', `/api/v1/sessions/${sessionId}/volunteers/${randomUUID()}`, undefined),
      404,
      'NOT_FOUND',
    );
    expectEnvelope(
      await send('POST', `/api/v1/sessions/${sessionId}/volunteers`, { name: 'Rute' }, TOKENS.RELATORIOS),
      403,
      'FORBIDDEN_ROLE',
    );
  });

  it('a walk-in visitor is not registered when the room would refuse them', async () => {
    const { sessionId, studentIds } = await room({ capacity: 1 }, [{}]);
    expect((await checkIn({ sessionId, studentId: studentIds[0] })).status).to.equal(201);
    const before = await call(`${h.url}/api/v1/students?limit=200`, {
      headers: authHeaders(TOKENS.ADMIN),
    });
    expectEnvelope(
      await checkIn({
        sessionId,
        visitor: { displayName: 'Visitante Novo', guardianName: 'Mãe', phone: '+5511912345678' },
      }),
      409,
      'ROOM_FULL',
    );
    const after = await call(`${h.url}/api/v1/students?limit=200`, {
      headers: authHeaders(TOKENS.ADMIN),
    });
    expect(after.text).to.equal(before.text);
    expect(after.text).not.to.contain('Visitante Novo');
  });
});

describe('the admission rule on offline check-ins that reach the server', function () {
  this.timeout(60_000);
  const h = useService();

  const Exceptions = t.type({
    items: t.array(
      t.type({
        policy: t.string,
        subjectId: t.string,
        reason: t.string,
        refusals: t.array(t.UnknownRecord),
        event: t.type({ eventId: t.string, role: t.string }),
      }),
    ),
  });
  const exceptions = async () => {
    const r = await call(`${h.url}/api/v1/reports/conflicts?limit=200`, {
      headers: authHeaders(TOKENS.RELATORIOS),
    });
    expect(r.status, r.text).to.equal(200);
    return decodeAs(Exceptions, r.json).items.filter((i) => i.policy === 'ADMISSION_RULE');
  };
  const offlineCheckIn = (sessionId: string, studentId: string, minute: number, extra: object = {}) => ({
    eventId: randomUUID(),
    type: 'CHECK_IN',
    studentId,
    sessionId,
    checkInId: randomUUID(),
    clientTimestamp: `2026-11-29T09:${String(minute).padStart(2, '0')}:00.000Z`,
    ...extra,
  });
  const storedPayload = async (eventId: string) =>
    decodeAs(t.type({ payload: t.UnknownRecord }), await h.svc.store.db.events.get(`event:${eventId}`))
      .payload;

  it('a tablet’s check-ins into a full room are all kept, and those past the capacity reported with their reason', async () => {
    const { sessionId, studentIds: children } = await roomAt(h.url, { capacity: 1 }, [{}, {}, {}]);
    // Sent in another order than they were made: the room is judged in the device's order.
    const batch = children.map((id, i) => offlineCheckIn(sessionId, id, i)).reverse();
    const answer = await syncEvents(h.url, batch);
    expect(answer.failed).to.deep.equal([]);
    expect(answer.synced.map((s) => s.status)).to.deep.equal(['APPLIED', 'APPLIED', 'APPLIED']);
    const found = await exceptions();
    expect(found.map((e) => [e.subjectId, e.reason, e.refusals])).to.have.deep.members([
      [children[1], 'ROOM_FULL', [{ reason: 'ROOM_FULL', checkedIn: 1, capacity: 1 }]],
      [children[2], 'ROOM_FULL', [{ reason: 'ROOM_FULL', checkedIn: 2, capacity: 1 }]],
    ]);
    expect(await storedPayload(batch[0]?.eventId ?? '')).to.deep.include({
      admission: { refusals: [{ reason: 'ROOM_FULL', checkedIn: 2, capacity: 1 }] },
    });
    const headcount = await call(`${h.url}/api/v1/sessions/${sessionId}/headcount`, {
      headers: authHeaders(TOKENS.CHAMADOR),
    });
    expect(headcount.json).to.deep.include({ checkedIn: 3, capacity: 1 });
    // The tablet sends the batch again (its answer was lost): nothing is reported twice.
    const again = await syncEvents(h.url, batch);
    expect(again.synced.map((s) => s.duplicate)).to.deep.equal([true, true, true]);
    expect(await exceptions()).to.have.length(2);
    // The report filters by child, as for conflicts.
    const one = await call(`${h.url}/api/v1/reports/conflicts?subjectId=${children[2]}`, {
      headers: authHeaders(TOKENS.RELATORIOS),
    });
    expect(decodeAs(Exceptions, one.json).items.map((i) => i.subjectId)).to.deep.equal([children[2]]);
  });

  it('an ADMIN’s offline override is honoured and kept in the event; a volunteer’s is reported like any other', async () => {
    const { sessionId, studentIds: children } = await roomAt(h.url, { capacity: 1 }, [{}, {}, {}]);
    const [a = '', b = '', c = ''] = children;
    const override = { override: { justification: 'the mother stays in the room' } };
    await syncEvents(h.url, [offlineCheckIn(sessionId, a, 0)]);
    const byAdmin = offlineCheckIn(sessionId, b, 1, override);
    expect((await syncEvents(h.url, [byAdmin], TOKENS.ADMIN)).synced[0]?.status).to.equal('APPLIED');
    expect(await storedPayload(byAdmin.eventId)).to.deep.include({
      override: { justification: 'the mother stays in the room', waived: ['ROOM_FULL'] },
    });
    const byVolunteer = offlineCheckIn(sessionId, c, 2, override);
    await syncEvents(h.url, [byVolunteer]);
    const found = (await exceptions()).filter((e) => children.includes(e.subjectId));
    expect(found.map((e) => [e.subjectId, e.event.eventId, e.event.role])).to.deep.equal([
      [c, byVolunteer.eventId, 'CHAMADOR'],
    ]);
  });
});
