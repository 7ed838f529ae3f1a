/** The admission rule: one table covering every refusal, the override, and the record's facts. */
import { expect } from 'chai';
import {
  type AdmissionCommand,
  type AdmissionDecision,
  type AdmissionFacts,
  type AdmissionRecord,
  admissionRecordOf,
  ageFits,
  ageInMonths,
  decideAdmission,
  missingFields,
  policyRefusals,
} from '../../src/rules/admission.js';

const complete: AdmissionRecord = {
  birthMonth: '2020-05',
  guardianPhone: true,
  allergiesAnswered: true,
  specialNeedsAnswered: true,
  imageConsentAnswered: true,
};

/** A child of five and a half at a Sunday meeting, in an open room with no rules: admitted. */
const base: AdmissionFacts = {
  student: { deleted: false, visitor: false, record: complete },
  session: { date: '2025-11-30', active: true, classActive: true },
  room: { capacity: null, childrenPerVolunteer: null, ageRange: null },
  occupancy: { checkedIn: 0, volunteers: 0 },
  checkins: [],
  requiredFields: [],
  actorRoles: ['CHAMADOR'],
};
const admin = { actorRoles: ['ADMIN'] };
const command: AdmissionCommand = { checkInId: 'c1' };
const overriding: AdmissionCommand = {
  checkInId: 'c1',
  override: { justification: 'a parent is staying in the room' },
};
const admitted: AdmissionDecision = {
  kind: 'ADMIT',
  event: { type: 'CHECK_IN', checkInId: 'c1' },
  waived: [],
  justification: null,
};
const full = {
  room: { capacity: 10, childrenPerVolunteer: null, ageRange: null },
  occupancy: { checkedIn: 10, volunteers: 0 },
};

describe('decideAdmission: whether a child may be checked in now (table)', () => {
  const cases: ReadonlyArray<{
    readonly name: string;
    readonly facts: Partial<AdmissionFacts>;
    readonly command?: AdmissionCommand;
    readonly expected: AdmissionDecision;
  }> = [
    { name: 'a child with nothing against them is admitted', facts: {}, expected: admitted },
    {
      name: 'an unknown session is refused before anything else',
      facts: { session: undefined, student: undefined },
      expected: { kind: 'REFUSE', refusal: { reason: 'SESSION_NOT_FOUND' } },
    },
    {
      name: 'an unknown child is refused',
      facts: { student: undefined },
      expected: { kind: 'REFUSE', refusal: { reason: 'STUDENT_NOT_FOUND' } },
    },
    {
      name: 'a deactivated session is refused, and no override passes it',
      facts: { session: { date: '2025-11-30', active: false, classActive: true }, ...admin },
      command: overriding,
      expected: { kind: 'REFUSE', refusal: { reason: 'SESSION_DEACTIVATED' } },
    },
    {
      name: "a session of a deactivated class is refused with the class's reason, whatever its own status",
      facts: { session: { date: '2025-11-30', active: false, classActive: false } },
      expected: { kind: 'REFUSE', refusal: { reason: 'CLASS_DEACTIVATED' } },
    },
    {
      name: 'a first-time visitor into a deactivated class is refused before being registered',
      facts: {
        session: { date: '2025-11-30', active: true, classActive: false },
        student: { deleted: false, visitor: true, record: complete },
      },
      expected: { kind: 'REFUSE', refusal: { reason: 'CLASS_DEACTIVATED' } },
    },
    {
      name: 'a closed session is refused before the child is looked at: unknown, deleted or already in',
      facts: {
        session: { date: '2025-11-30', active: false, classActive: true },
        student: { deleted: true, visitor: false, record: complete },
        checkins: [{ checkInId: 'c2', status: 'CHECKED_IN' }],
      },
      expected: { kind: 'REFUSE', refusal: { reason: 'SESSION_DEACTIVATED' } },
    },
    {
      name: 'a session no longer deactivated admits again',
      facts: { session: { date: '2025-11-30', active: true, classActive: true } },
      expected: admitted,
    },
    {
      name: 'a deleted child is refused, and no override passes it',
      facts: { student: { deleted: true, visitor: false, record: complete }, ...admin },
      command: overriding,
      expected: { kind: 'REFUSE', refusal: { reason: 'STUDENT_DELETED' } },
    },
    {
      name: 'a child already in this session is refused, and no override passes it',
      facts: {
        checkins: [
          { checkInId: 'c0', status: 'CHECKED_OUT' },
          { checkInId: 'c2', status: 'CHECKED_IN' },
        ],
        ...admin,
        ...full,
      },
      command: overriding,
      expected: { kind: 'REFUSE', refusal: { reason: 'ALREADY_CHECKED_IN' } },
    },
    {
      name: 'a child who left, or whose check-in lost a conflict, may come back',
      facts: {
        checkins: [
          { checkInId: 'c0', status: 'CHECKED_OUT' },
          { checkInId: 'c9', status: 'SUPERSEDED' },
        ],
      },
      expected: admitted,
    },
    {
      name: 'a room at its capacity refuses a volunteer, who may not override',
      facts: full,
      expected: {
        kind: 'REFUSE',
        refusal: { reason: 'ROOM_FULL', checkedIn: 10, capacity: 10 },
        overridable: false,
      },
    },
    {
      name: 'a room one below its capacity takes one more',
      facts: { ...full, occupancy: { checkedIn: 9, volunteers: 0 } },
      expected: admitted,
    },
    {
      name: 'a room at its capacity refuses an ADMIN without an override, saying it may be overridden',
      facts: { ...full, ...admin },
      expected: {
        kind: 'REFUSE',
        refusal: { reason: 'ROOM_FULL', checkedIn: 10, capacity: 10 },
        overridable: true,
      },
    },
    {
      name: "an ADMIN's override passes a full room and names what it waived",
      facts: { ...full, ...admin },
      command: overriding,
      expected: {
        ...admitted,
        waived: [{ reason: 'ROOM_FULL', checkedIn: 10, capacity: 10 }],
        justification: 'a parent is staying in the room',
      },
    },
    {
      name: "a volunteer's override changes nothing",
      facts: full,
      command: overriding,
      expected: {
        kind: 'REFUSE',
        refusal: { reason: 'ROOM_FULL', checkedIn: 10, capacity: 10 },
        overridable: false,
      },
    },
    {
      name: 'an override with nothing to waive is an ordinary admission',
      facts: admin,
      command: overriding,
      expected: admitted,
    },
    {
      name: 'a ratio with no volunteer in the room refuses the first child',
      facts: { room: { capacity: null, childrenPerVolunteer: 5, ageRange: null } },
      expected: {
        kind: 'REFUSE',
        refusal: { reason: 'RATIO_EXCEEDED', checkedIn: 0, volunteers: 0, childrenPerVolunteer: 5 },
        overridable: false,
      },
    },
    {
      name: 'two volunteers at five children each take the tenth child',
      facts: {
        room: { capacity: null, childrenPerVolunteer: 5, ageRange: null },
        occupancy: { checkedIn: 9, volunteers: 2 },
      },
      expected: admitted,
    },
    {
      name: 'two volunteers at five children each refuse the eleventh',
      facts: {
        room: { capacity: null, childrenPerVolunteer: 5, ageRange: null },
        occupancy: { checkedIn: 10, volunteers: 2 },
      },
      expected: {
        kind: 'REFUSE',
        refusal: { reason: 'RATIO_EXCEEDED', checkedIn: 10, volunteers: 2, childrenPerVolunteer: 5 },
        overridable: false,
      },
    },
    {
      name: 'a record without a required field names what is missing, in the catalogue order',
      facts: {
        requiredFields: ['imageConsent', 'birthDate', 'allergies'],
        student: {
          deleted: false,
          visitor: false,
          record: { ...complete, birthMonth: null, imageConsentAnswered: false },
        },
      },
      expected: {
        kind: 'REFUSE',
        refusal: { reason: 'RECORD_INCOMPLETE', missing: ['birthDate', 'imageConsent'] },
        overridable: false,
      },
    },
    {
      name: 'a guardian phone and the special-needs question can be required too',
      facts: {
        requiredFields: ['guardianPhone', 'specialNeeds'],
        student: {
          deleted: false,
          visitor: false,
          record: { ...complete, guardianPhone: false, specialNeedsAnswered: false },
        },
      },
      expected: {
        kind: 'REFUSE',
        refusal: { reason: 'RECORD_INCOMPLETE', missing: ['guardianPhone', 'specialNeeds'] },
        overridable: false,
      },
    },
    {
      name: 'a child older than the class takes is refused with the age and the range',
      facts: {
        room: { capacity: null, childrenPerVolunteer: null, ageRange: { minMonths: 24, maxMonths: 47 } },
      },
      expected: {
        kind: 'REFUSE',
        refusal: { reason: 'AGE_OUT_OF_RANGE', ageMonths: 66, ageRange: { minMonths: 24, maxMonths: 47 } },
        overridable: false,
      },
    },
    {
      name: 'a child born inside the class’s birth months is admitted',
      facts: {
        room: {
          capacity: null,
          childrenPerVolunteer: null,
          ageRange: { bornFrom: '2020-04', bornUntil: '2021-03' },
        },
      },
      expected: admitted,
    },
    {
      name: 'a class with an age range needs the birth date even when the church requires none',
      facts: {
        room: { capacity: null, childrenPerVolunteer: null, ageRange: { maxMonths: 72 } },
        student: { deleted: false, visitor: false, record: { ...complete, birthMonth: null } },
      },
      expected: {
        kind: 'REFUSE',
        refusal: { reason: 'RECORD_INCOMPLETE', missing: ['birthDate'] },
        overridable: false,
      },
    },
    {
      name: 'a first-time visitor is held to the room, not to the record or the age',
      facts: {
        requiredFields: ['birthDate'],
        room: { capacity: 10, childrenPerVolunteer: null, ageRange: { maxMonths: 12 } },
        occupancy: { checkedIn: 3, volunteers: 0 },
        student: { deleted: false, visitor: true, record: { ...complete, birthMonth: null } },
      },
      expected: admitted,
    },
    {
      name: 'a first-time visitor is refused by a full room',
      facts: { ...full, student: { deleted: false, visitor: true, record: complete } },
      expected: {
        kind: 'REFUSE',
        refusal: { reason: 'ROOM_FULL', checkedIn: 10, capacity: 10 },
        overridable: false,
      },
    },
    {
      name: 'every broken rule is waived by one override; the first is the one a refusal names',
      facts: {
        ...admin,
        requiredFields: ['allergies'],
        student: { deleted: false, visitor: false, record: { ...complete, allergiesAnswered: false } },
        room: { capacity: 10, childrenPerVolunteer: 4, ageRange: { minMonths: 72 } },
        occupancy: { checkedIn: 10, volunteers: 2 },
      },
      command: overriding,
      expected: {
        ...admitted,
        waived: [
          { reason: 'RECORD_INCOMPLETE', missing: ['allergies'] },
          { reason: 'AGE_OUT_OF_RANGE', ageMonths: 66, ageRange: { minMonths: 72 } },
          { reason: 'ROOM_FULL', checkedIn: 10, capacity: 10 },
          { reason: 'RATIO_EXCEEDED', checkedIn: 10, volunteers: 2, childrenPerVolunteer: 4 },
        ],
        justification: 'a parent is staying in the room',
      },
    },
  ];
  for (const c of cases)
    it(c.name, () => {
      expect(decideAdmission(c.command ?? command, { ...base, ...c.facts })).to.deep.equal(c.expected);
    });
});

describe('ages in whole months, from the birth month (table)', () => {
  const table: ReadonlyArray<readonly [string, string, number]> = [
    ['2020-05', '2020-05-31', 0],
    ['2020-05', '2021-04-01', 11],
    ['2020-05', '2021-05-01', 12],
    ['2019-12', '2020-01-15', 1],
  ];
  for (const [born, meeting, months] of table)
    it(`born ${born}, at a meeting on ${meeting}: ${months} months`, () =>
      expect(ageInMonths(born, meeting)).to.equal(months));

  it('each bound of a range is inclusive', () => {
    const range = { minMonths: 12, maxMonths: 23, bornFrom: '2019-01', bornUntil: '2024-12' };
    expect(
      [
        ['2024-11', '2025-11-02'],
        ['2023-12', '2025-11-02'],
        ['2023-11', '2025-11-02'],
        ['2024-12', '2025-11-02'],
      ].map(([born = '', at = '']) => ageFits(range, born, at)),
    ).to.deep.equal([true, true, false, false]);
  });
});

describe('what the rule reads of a record', () => {
  it('keeps the birth month only, and whether each question was answered', () => {
    expect(
      admissionRecordOf({
        birthDate: '2020-05-17',
        phones: [],
        allergies: 'nenhuma',
        specialNeeds: null,
        imageConsents: 1,
      }),
    ).to.deep.equal({
      birthMonth: '2020-05',
      guardianPhone: false,
      allergiesAnswered: true,
      specialNeedsAnswered: false,
      imageConsentAnswered: true,
    });
  });

  it('requires nothing when the church requires nothing', () => {
    expect(missingFields({ ...complete, birthMonth: null, guardianPhone: false }, [])).to.deep.equal([]);
  });

  it('lists no policy refusal for a room without rules, whatever its count', () => {
    expect(policyRefusals({ ...base, occupancy: { checkedIn: 500, volunteers: 0 } })).to.deep.equal([]);
  });
});
