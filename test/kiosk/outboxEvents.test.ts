import { expect } from 'chai';
import * as E from 'fp-ts/lib/Either.js';
import { decodeSyncEvent } from '../../src/domain/eventTypes.js';
import {
  checkInDoc,
  emergencyCheckoutDoc,
  localCheckinEvents,
  localVisitors,
  visitorProblems,
  visitorRegisteredDoc,
} from '../../src/kiosk/app/outboxEvents.js';

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

describe("kiosk: a check-in with an ADMIN's override", () => {
  it('carries the justification in the shape the server accepts, and a plain check-in carries none', () => {
    const common = { ...ids, now: new Date('2026-11-26T09:00:00.000Z'), baseVersion: null };
    const { _id, ...overridden } = checkInDoc({
      ...common,
      override: { justification: 'A mãe fica na sala com ela.' },
    });
    const decoded = decodeSyncEvent(overridden);
    expect(E.isRight(decoded) && decoded.right).to.deep.include({
      type: 'CHECK_IN',
      override: { justification: 'A mãe fica na sala com ela.' },
    });
    expect(checkInDoc(common)).not.to.have.property('override');
  });

  it('fails on the tablet when the justification is shorter than the server takes', () => {
    expect(() =>
      checkInDoc({ ...ids, now: new Date(), baseVersion: null, override: { justification: 'curta' } }),
    ).to.throw(/invalid CHECK_IN/);
  });
});

describe('kiosk: a first-time visitor (the new-child form)', () => {
  const form = { displayName: 'Helena Prado', guardianName: 'Rita Prado', phone: '+55 11 91234-5678' };
  const problemsTable: ReadonlyArray<readonly [string, Record<string, string>, string[]]> = [
    ['a complete form', {}, []],
    ['with allergies and care notes', { allergies: 'Lactose', specialNeeds: 'Usa óculos' }, []],
    ['an empty name', { displayName: '' }, ['displayName']],
    ['a guardian name over 120 characters', { guardianName: 'x'.repeat(121) }, ['guardianName']],
    [
      'a phone under 4 characters, and no guardian',
      { phone: '123', guardianName: '' },
      ['guardianName', 'phone'],
    ],
    ['allergies over 2,000 characters', { allergies: 'x'.repeat(2001) }, ['allergies']],
  ];
  for (const [name, over, fields] of problemsTable)
    it(`the server's codec judges ${name}`, () => {
      expect([...visitorProblems({ ...form, ...over })].sort()).to.deep.equal(fields);
    });

  it('is recorded in the shape the server accepts and shown on the desk with the phone as its last four digits', () => {
    const doc = visitorRegisteredDoc(
      { ...form, allergies: 'Lactose' },
      {
        eventId: ids.eventId,
        studentId: ids.studentId,
        classId: ids.sessionId,
        now: new Date('2026-11-29T09:00:00.000Z'),
      },
    );
    const { _id, ...event } = doc;
    expect(E.isRight(decodeSyncEvent(event))).to.equal(true);
    expect(localVisitors([{ ...doc }])).to.deep.equal([
      {
        eventId: ids.eventId,
        student: {
          _id: `student:${ids.studentId}`,
          docType: 'rosterStudent',
          studentId: ids.studentId,
          displayName: 'Helena Prado',
          classId: ids.sessionId,
          photoRef: null,
          allergies: 'Lactose',
          specialNeeds: null,
          visitor: true,
          pickup: [{ name: 'Rita Prado', level: 'N1', relationship: 'guardian', phoneSuffixes: ['5678'] }],
        },
      },
    ]);
    expect(localCheckinEvents([{ ...doc }])).to.deep.equal([]);
  });
});
