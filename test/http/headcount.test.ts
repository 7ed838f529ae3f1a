/** Room capacity on classes and a session's headcount, black-box against the running service. */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import * as t from 'io-ts';
import { TOKENS, useService } from '../support/harness.js';
import { decodeAs, expectEnvelope } from '../support/http.js';
import { createdId, seedSmallRoster, syncEvents } from '../support/seed.js';

const Headcount = t.type({
  sessionId: t.string,
  checkedIn: t.number,
  checkedOut: t.number,
  capacity: t.union([t.number, t.null]),
});
const Room = t.type({
  capacity: t.union([t.number, t.null]),
  childrenPerVolunteer: t.union([t.number, t.null]),
});
const room = (json: unknown) => {
  const { capacity, childrenPerVolunteer } = decodeAs(Room, json);
  return { capacity, childrenPerVolunteer };
};
const CheckIn = t.type({ checkInId: t.string, code: t.string });

describe('room capacity and the session headcount', function () {
  this.timeout(60_000);
  const h = useService({}, 'test');
  let classId: string;
  let sessionId: string;
  let children: ReadonlyArray<string>;

  const { send } = h.as(TOKENS.ADMIN);
  const headcount = async (token: string = TOKENS.CHAMADOR, id = sessionId) =>
    h.get(`/api/v1/sessions/${id}/headcount`, token);
  const counted = async () => {
    const r = await headcount();
    expect(r.status, r.text).to.equal(200);
    return decodeAs(Headcount, r.json);
  };

  beforeEach(async () => {
    const roster = await seedSmallRoster(h.url, ['Ana', 'Bia', 'Caio']);
    classId = roster.classId;
    sessionId = roster.sessionId;
    children = roster.studentIds;
  });

  it('a class takes an optional capacity and ratio; null removes them; zero or a fraction is refused', async () => {
    const plain = await send('POST', '/api/v1/classes', { name: 'Berçário' });
    expect(room(plain.json)).to.deep.equal({ capacity: null, childrenPerVolunteer: null });
    const id = await createdId(
      h.url,
      '/api/v1/classes',
      { name: 'Maternal', capacity: 12, childrenPerVolunteer: 4 },
      'classId',
    );
    const patched = await send('PATCH', `/api/v1/classes/${id}`, { capacity: 15 });
    expect(room(patched.json)).to.deep.equal({ capacity: 15, childrenPerVolunteer: 4 });
    const cleared = await send('PATCH', `/api/v1/classes/${id}`, { capacity: null });
    expect(room(cleared.json)).to.deep.equal({ capacity: null, childrenPerVolunteer: 4 });
    for (const capacity of [0, 2.5, -1, '10'])
      expect(
        expectEnvelope(await send('PATCH', `/api/v1/classes/${id}`, { capacity }), 400, 'VALIDATION_FAILED')
          .details,
      ).to.deep.include({
        issues: [{ path: 'body.capacity', message: 'expected an integer from 1 to 10000 or expected null' }],
      });
  });

  it('counts children in the room and gone, each once, beside the capacity', async () => {
    expect(await counted()).to.deep.include({ sessionId, checkedIn: 0, checkedOut: 0, capacity: null });
    await send('PATCH', `/api/v1/classes/${classId}`, { capacity: 2, childrenPerVolunteer: 2 });
    const helper = await send('POST', `/api/v1/sessions/${sessionId}/volunteers`, { name: 'Tia Rute' });
    expect(helper.status, helper.text).to.equal(201);
    const ins: Array<t.TypeOf<typeof CheckIn>> = [];
    for (const studentId of children.slice(0, 2)) {
      const r = await send('POST', '/api/v1/check-in', { studentId, sessionId }, TOKENS.CHAMADOR);
      expect(r.status, r.text).to.equal(201);
      ins.push(decodeAs(CheckIn, r.json));
    }
    const full = await headcount();
    expect(full.json).to.deep.equal({
      sessionId,
      checkedIn: 2,
      checkedOut: 0,
      capacity: 2,
      volunteers: 1,
      childrenPerVolunteer: 2,
      volunteersNeeded: 1,
    });
    const first = ins[0];
    if (first === undefined) throw new Error('no check-in');
    const out = await send(
      'POST',
      '/api/v1/check-out',
      { checkInId: first.checkInId, code: first.code, pickupPerson: 'G' },
      TOKENS.CHAMADOR,
    );
    expect(out.status, out.text).to.equal(200);
    // A tablet's offline check-in counts once it has arrived; the child who left counts as gone.
    const third = children[2] ?? '';
    await syncEvents(h.url, [
      {
        eventId: randomUUID(),
        type: 'CHECK_IN',
        studentId: third,
        sessionId,
        checkInId: randomUUID(),
        clientTimestamp: new Date().toISOString(),
      },
    ]);
    expect(await counted()).to.deep.include({ checkedIn: 2, checkedOut: 1, capacity: 2 });
  });

  it('an unknown session is 404; a reports-only account may not read the room', async () => {
    expectEnvelope(await headcount(TOKENS.CHAMADOR, randomUUID()), 404, 'NOT_FOUND');
    expectEnvelope(await headcount(TOKENS.RELATORIOS), 403, 'FORBIDDEN_ROLE');
    expectEnvelope(await headcount(TOKENS.CHAMADOR, 'not-a-uuid'), 400, 'VALIDATION_FAILED');
  });
});
