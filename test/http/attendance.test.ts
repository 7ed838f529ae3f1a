/** Attendance marks through the conflict rule, black-box. */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import * as t from 'io-ts';
import { TOKENS, useService } from '../support/harness.js';
import { decodeAs, expectEnvelope } from '../support/http.js';

const Accepted = t.type({ eventId: t.string, accepted: t.boolean, serverTime: t.string });

describe('attendance marks', function () {
  this.timeout(60_000);
  const h = useService({}, 'test');
  let studentId: string;
  let sessionId: string;
  const { post: send } = h.as(TOKENS.CADASTRO);
  const mark = (body: Record<string, unknown>, token: string = TOKENS.CHAMADOR) =>
    send(
      '/api/v1/attendance/events',
      { studentId, sessionId, actionType: 'MARK_PRESENT', timestamp: '2026-11-25T10:00:00.000Z', ...body },
      token,
    );

  beforeEach(async () => {
    ({
      sessionId,
      studentIds: [studentId = ''],
    } = await h.seedRoster({ students: ['Ana'], date: '2026-11-25' }));
  });

  it('answers 202 with the event id, accepted, and the server time', async () => {
    const r = await mark({});
    expect(r.status, r.text).to.equal(202);
    expect(decodeAs(Accepted, r.json).accepted).to.equal(true);
  });

  it('stores an event sent twice (new Idempotency-Key, same eventId) once', async () => {
    const eventId = randomUUID();
    const a = decodeAs(Accepted, (await mark({ eventId })).json);
    const b = decodeAs(Accepted, (await mark({ eventId })).json);
    expect(b.eventId).to.equal(a.eventId);
    const stored = await h.svc.store.db.events.find({ selector: { eventId } });
    expect(stored.docs).to.have.length(1);
  });

  it('an ADMIN mark beats a concurrent, later CHAMADOR mark; a mark based on the ADMIN one stands', async () => {
    const admin = decodeAs(
      Accepted,
      (await mark({ actionType: 'MARK_ABSENT', timestamp: '2026-11-25T09:00:00.000Z' }, TOKENS.ADMIN)).json,
    );
    expect(admin.accepted).to.equal(true);
    const concurrent = decodeAs(Accepted, (await mark({ timestamp: '2026-11-25T11:00:00.000Z' })).json);
    expect(concurrent.accepted).to.equal(false);
    const after = decodeAs(
      Accepted,
      (await mark({ timestamp: '2026-11-25T12:00:00.000Z', baseVersion: admin.eventId })).json,
    );
    expect(after.accepted).to.equal(true);
  });

  it('unknown student or session → 404; RELATORIOS → 403; an eventId reused for another mark → 409', async () => {
    expectEnvelope(await mark({ studentId: randomUUID() }), 404, 'NOT_FOUND');
    expectEnvelope(await mark({ sessionId: randomUUID() }), 404, 'NOT_FOUND');
    expectEnvelope(await mark({}, TOKENS.RELATORIOS), 403, 'FORBIDDEN_ROLE');
    const eventId = randomUUID();
    await mark({ eventId });
    expectEnvelope(await mark({ eventId }, TOKENS.ADMIN), 409, 'CONFLICT');
  });
});
