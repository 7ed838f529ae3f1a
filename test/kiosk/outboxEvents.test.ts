import { expect } from 'chai';
import * as E from 'fp-ts/lib/Either.js';
import { decodeSyncEvent } from '../../src/domain/eventTypes.js';
import { emergencyCheckoutDoc, localCheckinEvents } from '../../src/kiosk/app/outboxEvents.js';

const ids = {
  eventId: '6f1c1d2e-8a9b-4c3d-9e8f-0a1b2c3d4e5f',
  studentId: '1b2c3d4e-5f60-4718-8293-a4b5c6d7e8f9',
  sessionId: '2c3d4e5f-6071-4829-93a4-b5c6d7e8f901',
  checkInId: '3d4e5f60-7182-4930-a4b5-c6d7e8f90112',
};

describe('kiosk: the emergency check-out event', () => {
  it('is built in the shape the server accepts and read back by the desk', () => {
    const doc = emergencyCheckoutDoc({
      ...ids,
      now: new Date('2026-11-26T22:02:00.000Z'),
      baseVersion: null,
      pickupPerson: 'Avó Helena',
      justification: 'A mãe ligou: a avó vem buscar sem a etiqueta.',
    });
    expect(doc._id).to.equal(`event:${ids.eventId}`);
    const { _id, ...event } = doc;
    expect(E.isRight(decodeSyncEvent(event))).to.equal(true);
    expect(localCheckinEvents([{ ...doc }])).to.deep.equal([
      {
        eventId: ids.eventId,
        type: 'EMERGENCY_CHECKOUT',
        sessionId: ids.sessionId,
        studentId: ids.studentId,
        checkInId: ids.checkInId,
        clientTimestamp: '2026-11-26T22:02:00.000Z',
      },
    ]);
  });

  it('fails on the tablet, not after the sync, when the justification is too short', () => {
    expect(() =>
      emergencyCheckoutDoc({
        ...ids,
        now: new Date(),
        baseVersion: null,
        pickupPerson: 'Avó Helena',
        justification: 'curta',
      }),
    ).to.throw(/invalid EMERGENCY_CHECKOUT/);
  });
});
