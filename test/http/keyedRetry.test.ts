/**
 * A keyed request answered 503 "recorded but not applied yet" (the pipeline did not decide its event
 * within the wait: a backlog, another instance busy) has stored its event. The client sends it again
 * under the same Idempotency-Key, as the answer tells it to; the retry must meet that event as its
 * own and answer what the first attempt would have: not "already checked in", not a second event.
 * The service here waits 0 ms for the pipeline, so a first attempt is answered before its decision.
 */
import { expect } from 'chai';
import * as t from 'io-ts';
import { TOKENS, useService } from '../support/harness.js';
import { call, decodeAs, expectEnvelope, type HttpResult } from '../support/http.js';
import { authHeaders, mutate, mutationHeaders } from '../support/testService.js';

const CheckIn = t.type({ checkInId: t.string, studentId: t.string, code: t.string, status: t.string });
const Id = (key: string) => t.type({ [key]: t.string });

describe('a keyed request retried after 503 "recorded but not applied yet"', function () {
  this.timeout(60_000);
  const h = useService({ settleTimeoutMs: 0 }, 'test');
  let classId: string;
  let sessionId: string;
  const url = (p: string) => `${h.url}${p}`;
  const created = async (path: string, body: unknown, key: string): Promise<string> => {
    const r = await mutate(url(path), 'POST', body, TOKENS.ADMIN);
    expect(r.status, r.text).to.equal(201);
    return String(decodeAs(Id(key), r.json)[key]);
  };
  const keyed = (path: string, body: unknown, key: string): Promise<HttpResult> =>
    call(url(path), {
      method: 'POST',
      headers: mutationHeaders(TOKENS.CHAMADOR, key),
      body: JSON.stringify(body),
    });
  /** Waits (bounded) until the pipeline has caught up, so a retry meets the earlier attempt's decision. */
  const projected = async (ready: () => Promise<boolean>) => {
    for (let i = 0; i < 200 && !(await ready()); i += 1) await new Promise((r) => setTimeout(r, 25));
  };
  const eventsOf = async (type: string, studentId: string) =>
    (await h.svc.store.db.events.find({ selector: { type, subjectId: studentId }, limit: 100 })).docs.length;
  /** The first attempt of `send`'s request that was answered 503 (of a few children, to be sure of one). */
  const answered503 = async (
    send: (n: number) => Promise<HttpResult>,
  ): Promise<{ n: number; first: HttpResult }> => {
    for (let n = 0; n < 5; n += 1) {
      const first = await send(n);
      if (first.status === 503) return { n, first };
      expect(first.status, first.text).to.be.oneOf([200, 201]);
    }
    throw new Error('the pipeline decided every first attempt within 0 ms: nothing was retried');
  };

  beforeEach(async () => {
    classId = await created('/api/v1/classes', { name: 'Turma' }, 'classId');
    sessionId = await created('/api/v1/sessions', { classId, date: '2026-11-27' }, 'sessionId');
  });

  const newStudent = (name: string) =>
    created('/api/v1/students', { displayName: name, guardianName: 'G', phones: [], classId }, 'studentId');
  const active = async (studentId: string) =>
    call(url(`/api/v1/check-in/active?studentId=${studentId}&sessionId=${sessionId}`), {
      headers: authHeaders(TOKENS.CHAMADOR),
    });

  it('a check-in retried under its key answers 201 with the same check-in, and one CHECK_IN event stands', async () => {
    const students = await Promise.all([0, 1, 2, 3, 4].map((i) => newStudent(`Criança ${i}`)));
    const keys = students.map(() => crypto.randomUUID());
    const { n, first } = await answered503((i) =>
      keyed('/api/v1/check-in', { studentId: students[i], sessionId }, keys[i] ?? ''),
    );
    expectEnvelope(first, 503, 'STORE_UNAVAILABLE');
    const studentId = students[n] ?? '';
    await projected(async () => (await active(studentId)).status === 200);
    const retry = await keyed('/api/v1/check-in', { studentId, sessionId }, keys[n] ?? '');
    expect(retry.status, retry.text).to.equal(201);
    const open = decodeAs(t.type({ checkIn: CheckIn }), (await active(studentId)).json).checkIn;
    expect(decodeAs(CheckIn, retry.json).checkInId).to.equal(open.checkInId);
    expect(await eventsOf('CHECK_IN', studentId)).to.equal(1);
    // A new key is a new request: the child is in already.
    expectEnvelope(
      await keyed('/api/v1/check-in', { studentId, sessionId }, crypto.randomUUID()),
      409,
      'CONFLICT',
    );
  });

  it('a check-out retried under its key answers 200, and one CHECK_OUT event stands', async () => {
    // With a 0 ms wait a check-in may itself be answered 503: read the check-in it made.
    const checkedIn = async (studentId: string) => {
      await keyed('/api/v1/check-in', { studentId, sessionId }, crypto.randomUUID());
      await projected(async () => (await active(studentId)).status === 200);
      return decodeAs(t.type({ checkIn: CheckIn }), (await active(studentId)).json).checkIn;
    };
    const students = await Promise.all([0, 1, 2, 3, 4].map((i) => newStudent(`Criança ${i}`)));
    const checkins: Array<t.TypeOf<typeof CheckIn>> = [];
    for (const s of students) checkins.push(await checkedIn(s));
    const keys = students.map(() => crypto.randomUUID());
    const body = (i: number) => ({
      checkInId: checkins[i]?.checkInId,
      code: checkins[i]?.code,
      pickupPerson: 'Responsável',
    });
    const { n, first } = await answered503((i) => keyed('/api/v1/check-out', body(i), keys[i] ?? ''));
    expectEnvelope(first, 503, 'STORE_UNAVAILABLE');
    const studentId = students[n] ?? '';
    await projected(async () => (await active(studentId)).status === 404);
    const retry = await keyed('/api/v1/check-out', body(n), keys[n] ?? '');
    expect(retry.status, retry.text).to.equal(200);
    expect(decodeAs(CheckIn, retry.json).status).to.equal('CHECKED_OUT');
    expect(await eventsOf('CHECK_OUT', studentId)).to.equal(1);
    expectEnvelope(await keyed('/api/v1/check-out', body(n), crypto.randomUUID()), 409, 'CONFLICT');
  });

  it('a walk-in visitor retried under its key is registered once', async () => {
    const keys = [0, 1, 2, 3, 4].map(() => crypto.randomUUID());
    const visitor = (i: number) => ({
      sessionId,
      visitor: { displayName: `Visitante ${i}`, guardianName: 'Tia Ana', phone: '+55 11 5555-9999' },
    });
    const { n, first } = await answered503((i) => keyed('/api/v1/check-in', visitor(i), keys[i] ?? ''));
    expectEnvelope(first, 503, 'STORE_UNAVAILABLE');
    const named = async () => {
      const r = await call(url(`/api/v1/students?limit=50&q=${encodeURIComponent(`Visitante ${n}`)}`), {
        headers: authHeaders(TOKENS.ADMIN),
      });
      return decodeAs(t.type({ items: t.array(t.type({ studentId: t.string })) }), r.json).items;
    };
    const [registered] = await named();
    await projected(async () => (await active(registered?.studentId ?? '')).status === 200);
    const retry = await keyed('/api/v1/check-in', visitor(n), keys[n] ?? '');
    expect(retry.status, retry.text).to.equal(201);
    expect(decodeAs(CheckIn, retry.json).studentId).to.equal(registered?.studentId);
    expect(await named(), 'one child registered').to.have.length(1);
    expect(await eventsOf('STUDENT_CREATED', registered?.studentId ?? '')).to.equal(1);
  });
});

describe('a keyed check-out retried while the pipeline has closed the record but not committed the aspect', function () {
  this.timeout(60_000);
  const h = useService({ settleTimeoutMs: 3_000 }, 'test');

  it('waits for its own first attempt and answers 200, not 409 ALREADY_CHECKED_OUT', async () => {
    const url = (p: string) => `${h.url}${p}`;
    const created = async (path: string, body: unknown, key: string): Promise<string> => {
      const r = await mutate(url(path), 'POST', body, TOKENS.ADMIN);
      expect(r.status, r.text).to.equal(201);
      return String(decodeAs(Id(key), r.json)[key]);
    };
    const classId = await created('/api/v1/classes', { name: 'Turma' }, 'classId');
    const sessionId = await created('/api/v1/sessions', { classId, date: '2026-11-27' }, 'sessionId');
    const studentId = await created(
      '/api/v1/students',
      { displayName: 'Ana', guardianName: 'G', phones: [], classId },
      'studentId',
    );
    const checkIn = await mutate(url('/api/v1/check-in'), 'POST', { studentId, sessionId }, TOKENS.CHAMADOR);
    expect(checkIn.status, checkIn.text).to.equal(201);
    const { checkInId, code } = decodeAs(CheckIn, checkIn.json);
    // Hold the pipeline's commits of the child's check-in aspect: its write-through (the record) runs,
    // its aspect write waits, as when a commit is slow or loses to another instance's.
    const projections = h.svc.store.db.projections;
    const bulkDocs: unknown = Reflect.get(projections, 'bulkDocs');
    if (typeof bulkDocs !== 'function') throw new Error('no bulkDocs');
    let open: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    Reflect.set(projections, 'bulkDocs', async (docs: unknown, ...rest: unknown[]) => {
      if (JSON.stringify(docs).includes(`"aspect:checkin:${sessionId}:${studentId}"`)) await gate;
      return Reflect.apply(bulkDocs, projections, [docs, ...rest]);
    });
    const key = crypto.randomUUID();
    const send = () =>
      call(url('/api/v1/check-out'), {
        method: 'POST',
        headers: mutationHeaders(TOKENS.CHAMADOR, key),
        body: JSON.stringify({ checkInId, code, pickupPerson: 'Responsável' }),
      });
    expectEnvelope(await send(), 503, 'STORE_UNAVAILABLE');
    const record = async () =>
      (await h.svc.store.db.private.get(`checkin:${checkInId}`).catch(() => undefined)) ?? {};
    for (let i = 0; i < 200 && Reflect.get(await record(), 'status') !== 'CHECKED_OUT'; i += 1)
      await new Promise((r) => setTimeout(r, 25));
    expect(Reflect.get(await record(), 'status'), 'the record closed before the aspect').to.equal(
      'CHECKED_OUT',
    );
    const retry = send();
    setTimeout(open, 200);
    const answer = await retry;
    expect(answer.status, answer.text).to.equal(200);
    expect(decodeAs(CheckIn, answer.json).status).to.equal('CHECKED_OUT');
  });
});
