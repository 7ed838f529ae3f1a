/**
 * A REST mutation whose own event the conflict rule supersedes says so, naming the policy, the winner
 * and the loser as `/sync/events` does (issue 24, item 4). The competing event is made to arrive
 * between the request's read of the aspect and its own append: a tablet's event synced meanwhile, or
 * an event another instance on the same CouchDB appended (written to the shared store directly).
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import * as t from 'io-ts';
import type { NewEvent } from '../../src/domain/event.js';
import { TOKENS, useService } from '../support/harness.js';
import { decodeAs, expectEnvelope, type HttpResult } from '../support/http.js';
import { syncEvents } from '../support/seed.js';

const CheckIn = t.type({ checkInId: t.string });
const Superseded = t.type({
  reason: t.string,
  policy: t.string,
  winnerEventId: t.string,
  loserEventId: t.string,
});
const OTHER_DEVICE = '0d6a4d3c-5b2e-4f1a-9c8b-7a6f5e4d3c2b';

describe('conflicts named on every path (REST mutations superseded by the conflict rule)', function () {
  this.timeout(60_000);
  const h = useService({}, 'test');
  let sessionId: string;
  let studentId: string;
  const { post } = h.as(TOKENS.CHAMADOR);

  /**
   * Runs `meanwhile` just before the next event the service appends is stored (the request has read
   * the aspect and decided on it): whatever `meanwhile` stores then is concurrent with it.
   */
  const beforeNextAppend = (meanwhile: (mine: NewEvent) => Promise<void>): void => {
    const events = h.svc.stores.events;
    const original = events.append.bind(events);
    Object.assign(events, {
      append: async (mine: NewEvent) => {
        Object.assign(events, { append: original });
        await meanwhile(mine);
        return original(mine);
      },
    });
  };

  /** Expects the 409 CONFLICT_SUPERSEDED a mutation lost with, naming its reason, policy and winner. */
  const expectSuperseded = (
    r: HttpResult,
    named: { readonly reason: string; readonly policy: string; readonly winnerEventId: string },
  ) => {
    const details = decodeAs(Superseded, expectEnvelope(r, 409, 'CONFLICT_SUPERSEDED').details);
    expect(details).to.deep.include(named);
    return details;
  };

  /** An ADMIN tablet's offline event of the child's check-in aspect, synced now; its id. */
  const adminTabletEvent = async (event: Record<string, unknown>): Promise<string> => {
    const eventId = randomUUID();
    const answer = await syncEvents(h.url, [{ eventId, studentId, sessionId, ...event }], TOKENS.ADMIN);
    expect(answer.synced[0]?.status).to.equal('APPLIED');
    return eventId;
  };

  beforeEach(async () => {
    ({
      sessionId,
      studentIds: [studentId = ''],
    } = await h.seedRoster({ students: ['Ana'] }));
  });

  it('a check-in that lost to an ADMIN tablet check-in synced meanwhile → 409 naming ADMIN_PRECEDENCE', async () => {
    let tabletEventId = '';
    beforeNextAppend(async () => {
      tabletEventId = await adminTabletEvent({
        type: 'CHECK_IN',
        checkInId: randomUUID(),
        clientTimestamp: '2026-11-26T09:00:00.000Z',
      });
    });
    const r = await post('/api/v1/check-in', { studentId, sessionId });
    const details = expectSuperseded(r, {
      reason: 'CHECKIN_SUPERSEDED',
      policy: 'ADMIN_PRECEDENCE',
      winnerEventId: tabletEventId,
    });
    // The loser is this request's own event, kept in the store.
    const stored = await h.svc.stores.events.get(details.loserEventId);
    expect(stored?.type).to.equal('CHECK_IN');
    expect(stored?.actor.userId).to.equal('dev-caller');
  });

  it('a check-in racing another instance’s later check-in of the child → 409 naming LAST_WRITER_WINS', async () => {
    let rivalEventId = '';
    beforeNextAppend(async (mine) => {
      rivalEventId = randomUUID();
      // What another instance on the same CouchDB appends from the same read: same aspect, same base,
      // a CHAMADOR one a minute later.
      await h.svc.stores.events.append({
        ...mine,
        eventId: rivalEventId,
        deviceId: OTHER_DEVICE,
        payload: { ...mine.payload, checkInId: randomUUID() },
        clientTimestamp: new Date(Date.parse(mine.clientTimestamp) + 60_000).toISOString(),
        serverTimestamp: new Date(Date.parse(mine.serverTimestamp) + 60_000).toISOString(),
      });
    });
    const r = await post('/api/v1/check-in', { studentId, sessionId });
    const details = expectSuperseded(r, {
      reason: 'CHECKIN_SUPERSEDED',
      policy: 'LAST_WRITER_WINS',
      winnerEventId: rivalEventId,
    });
    expect(details.loserEventId).not.to.equal(rivalEventId);
  });

  it('an emergency check-out that lost to an ADMIN tablet check-out synced meanwhile → 409 naming it', async () => {
    const checkedIn = decodeAs(CheckIn, (await post('/api/v1/check-in', { studentId, sessionId })).json);
    let tabletEventId = '';
    beforeNextAppend(async (mine) => {
      tabletEventId = await adminTabletEvent({
        type: 'EMERGENCY_CHECKOUT',
        checkInId: checkedIn.checkInId,
        justification: 'febre alta, mãe autorizou',
        pickupPerson: 'Avó',
        baseVersion: mine.baseVersion,
        clientTimestamp: '2026-01-01T00:00:00.000Z',
      });
    });
    const r = await post('/api/v1/check-out/emergency', {
      checkInId: checkedIn.checkInId,
      justification: 'pai chegou mais cedo',
      pickupPerson: 'Pai',
    });
    expectSuperseded(r, {
      reason: 'CHECKOUT_SUPERSEDED',
      policy: 'ADMIN_PRECEDENCE',
      winnerEventId: tabletEventId,
    });
  });

  it('an attendance mark answered accepted: false names policy, winner and loser', async () => {
    const Accepted = t.intersection([
      t.type({ eventId: t.string, accepted: t.boolean }),
      t.partial({ policy: t.string, winnerEventId: t.string, loserEventId: t.string }),
    ]);
    const mark = (timestamp: string, token: string) =>
      post(
        '/api/v1/attendance/events',
        { studentId, sessionId, actionType: 'MARK_PRESENT', timestamp },
        token,
      );
    const admin = decodeAs(Accepted, (await mark('2026-11-26T09:00:00.000Z', TOKENS.ADMIN)).json);
    expect(admin).not.to.have.property('policy');
    const lost = decodeAs(Accepted, (await mark('2026-11-26T11:00:00.000Z', TOKENS.CHAMADOR)).json);
    expect(lost).to.deep.include({
      accepted: false,
      policy: 'ADMIN_PRECEDENCE',
      winnerEventId: admin.eventId,
      loserEventId: lost.eventId,
    });
  });
});
