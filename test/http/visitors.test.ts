/**
 * First-time visitors registered at the door (VISITOR_REGISTERED), black-box against the running
 * service: through `POST /api/v1/sync/events` and through the tablets' replication push.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import * as t from 'io-ts';
import { useService } from '../support/harness.js';
import { decodeAs } from '../support/http.js';
import { seedSmallRoster, syncEvents } from '../support/seed.js';
import { makeTablet, type Tablet } from '../support/tablet.js';
import { DEV_TOKENS } from '../support/testService.js';

const today = () => new Date().toISOString().slice(0, 10);

const VisitorRead = t.type({
  studentId: t.string,
  displayName: t.string,
  guardianName: t.string,
  visitor: t.boolean,
  classId: t.string,
  allergies: t.union([t.string, t.null]),
  phones: t.array(t.type({ number: t.string, qualifier: t.string })),
});

const AuditPage = t.type({ items: t.array(t.type({ details: t.UnknownRecord, subject_id: t.unknown })) });

describe('first-time visitors registered at the door', function () {
  this.timeout(60_000);
  let classId: string;
  let sessionId: string;
  let tablets: Tablet[] = [];
  // Registered before the service's hooks: the tablets close before the service stops.
  afterEach(async () => {
    for (const tablet of tablets) await tablet.close();
  });
  const h = useService({}, 'test');

  const registration = (over: Record<string, unknown> = {}) => ({
    eventId: randomUUID(),
    type: 'VISITOR_REGISTERED',
    studentId: randomUUID(),
    clientTimestamp: new Date().toISOString(),
    displayName: 'Helena Prado',
    guardianName: 'Rita Prado',
    phone: '+55 11 91234-5678',
    allergies: 'Lactose',
    classId,
    ...over,
  });
  const checkIn = (studentId: string) => ({
    eventId: randomUUID(),
    type: 'CHECK_IN',
    studentId,
    sessionId,
    checkInId: randomUUID(),
    clientTimestamp: new Date().toISOString(),
  });
  const readStudent = async (studentId: string) => {
    const r = await h.get(`/api/v1/students/${studentId}`, DEV_TOKENS.DEV_ADMIN_TOKEN);
    return { status: r.status, student: r.status === 200 ? decodeAs(VisitorRead, r.json) : undefined };
  };
  const visitorAudits = async (studentId: string) => {
    const r = await h.get(`/api/v1/audit-logs?limit=200`, DEV_TOKENS.DEV_ADMIN_TOKEN);
    expect(r.status, r.text).to.equal(200);
    return decodeAs(AuditPage, r.json).items.filter(
      (i) => i.subject_id === studentId && i.details.code === 'VISITOR_REGISTERED',
    );
  };

  beforeEach(async () => {
    tablets = [];
    const roster = await seedSmallRoster(h.url, ['Ana'], today());
    classId = roster.classId;
    sessionId = roster.sessionId;
  });

  it('a registration and the check-in that follows it in one batch create the visitor and check them in', async () => {
    const reg = registration();
    const visit = checkIn(reg.studentId);
    const r = await syncEvents(h.url, [reg, visit]);
    expect(r.failed).to.deep.equal([]);
    expect(r.synced.map((s) => [s.eventId, s.status, s.duplicate])).to.deep.equal([
      [reg.eventId, 'APPLIED', false],
      [visit.eventId, 'APPLIED', false],
    ]);
    const { student } = await readStudent(reg.studentId);
    expect(student).to.deep.equal({
      ...student,
      studentId: reg.studentId,
      displayName: 'Helena Prado',
      guardianName: 'Rita Prado',
      visitor: true,
      classId,
      allergies: 'Lactose',
      phones: [{ number: '+55 11 91234-5678', qualifier: 'visitante' }],
    });
    const desk = await h.get(
      `/api/v1/check-in/active?checkInId=${visit.checkInId}`,
      DEV_TOKENS.DEV_CALLER_TOKEN,
    );
    expect(desk.status, desk.text).to.equal(200);
    expect(desk.text).to.contain('Helena Prado');
    // The desk shows who may collect the child by the phone's last four digits only.
    expect(desk.text).not.to.contain('91234');
    expect(await visitorAudits(reg.studentId)).to.have.length(1);
  });

  it('a resend of the same registration, in a new batch, is a duplicate and registers nobody twice', async () => {
    const reg = registration();
    const visit = checkIn(reg.studentId);
    await syncEvents(h.url, [reg, visit]);
    const again = await syncEvents(h.url, [reg, visit]);
    expect(again.failed).to.deep.equal([]);
    expect(again.synced.map((s) => s.duplicate)).to.deep.equal([true, true]);
    const list = await h.get(`/api/v1/students?q=Helena`, DEV_TOKENS.DEV_ADMIN_TOKEN);
    expect(list.status, list.text).to.equal(200);
    const ids = decodeAs(t.type({ items: t.array(t.type({ studentId: t.string })) }), list.json).items.map(
      (i) => i.studentId,
    );
    expect(ids).to.deep.equal([reg.studentId]);
    await h.svc.deps.sync.pipeline.catchUp();
    expect(await visitorAudits(reg.studentId)).to.have.length(1);
  });

  it('invalid registrations are refused one by one with a reason; the rest of the batch applies', async () => {
    const noPhone = registration();
    const { phone: _p, ...withoutPhone } = noPhone;
    const otherClass = registration({ classId: randomUUID() });
    const existing = registration({
      studentId: (await seedSmallRoster(h.url, ['Bia'], today())).studentIds[0],
    });
    const good = registration({ displayName: 'Caio Lima' });
    const r = await syncEvents(h.url, [
      withoutPhone,
      otherClass,
      existing,
      checkIn(noPhone.studentId),
      good,
      checkIn(good.studentId),
    ]);
    expect(r.failed.map((f) => [f.index, f.reason])).to.deep.equal([
      [0, 'VALIDATION_FAILED'],
      [1, 'UNKNOWN_CLASS'],
      [2, 'STUDENT_ID_TAKEN'],
      // A check-in of a child whose registration was refused names nobody the server knows.
      [3, 'UNKNOWN_SUBJECT'],
    ]);
    expect(r.failed[0]?.issues?.map((i) => i.path)).to.deep.equal(['body.events.0.phone']);
    expect(r.synced.map((s) => s.status)).to.deep.equal(['APPLIED', 'APPLIED']);
    expect((await readStudent(noPhone.studentId)).status).to.equal(404);
    expect((await readStudent(good.studentId)).student?.visitor).to.equal(true);
  });

  it('the same child registered on two tablets offline becomes two visitors, for the office to merge', async () => {
    const first = registration();
    const second = registration({ clientTimestamp: new Date(Date.now() + 1000).toISOString() });
    const r = await syncEvents(h.url, [first, checkIn(first.studentId), second, checkIn(second.studentId)]);
    expect(r.failed).to.deep.equal([]);
    for (const id of [first.studentId, second.studentId])
      expect((await readStudent(id)).student).to.deep.include({ displayName: 'Helena Prado', visitor: true });
  });

  it('pushed by replication, the registration and a check-in pushed later are stored; the next pull holds the visitor without the phone', async () => {
    const tablet = makeTablet(h.url, DEV_TOKENS.DEV_CALLER_TOKEN);
    tablets.push(tablet);
    const reg = registration();
    await tablet.outbox.put({ _id: `event:${reg.eventId}`, ...reg });
    const first = await tablet.push();
    expect(first.doc_write_failures).to.equal(0);
    // The check-in travels in a later push, possibly before the pipeline has created the record.
    const visit = checkIn(reg.studentId);
    await tablet.outbox.put({ _id: `event:${visit.eventId}`, ...visit });
    const second = await tablet.push();
    expect([second.docs_written, second.doc_write_failures]).to.deep.equal([1, 0]);
    await h.svc.deps.sync.pipeline.catchUp();
    await h.svc.deps.replication.reconciler.refresh();
    await tablet.pull();
    const students = await tablet.docs('rosterStudent');
    expect(students.get(`student:${reg.studentId}`)).to.deep.include({
      displayName: 'Helena Prado',
      visitor: true,
      pickup: [{ name: 'Rita Prado', level: 'N1', relationship: 'guardian', phoneSuffixes: ['5678'] }],
    });
    expect(JSON.stringify([...students.values()])).not.to.contain('91234');
    const state = (await tablet.docs('rosterCheckin')).get(`checkin:${sessionId}:${reg.studentId}`);
    expect(state).to.deep.include({ version: visit.eventId });
  });

  it('a CHAMADOR may register visitors; a role without attendance may not', async () => {
    const reg = registration();
    const r = await syncEvents(h.url, [reg], DEV_TOKENS.DEV_CADASTRO_TOKEN);
    expect(r.failed.map((f) => f.reason)).to.deep.equal(['FORBIDDEN_ROLE']);
  });
});
