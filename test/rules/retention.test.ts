/** What a retention run ends, and what an anonymised record keeps (decision 0045): pure rules, table-tested. */
import { expect } from 'chai';
import { decodeChange } from '../../src/domain/eventTypes.js';
import { ANONYMISED, DEFAULT_RETENTION, type RetentionPeriods } from '../../src/domain/retention.js';
import { personalStudentFields, type StudentRecord } from '../../src/domain/student.js';
import {
  anonymisedAuditDetails,
  anonymisedCheckinFields,
  anonymisedConsentFields,
  anonymisedPayload,
  anonymisedStudent,
  aspectEndsNow,
  auditEntryAnonymisedNow,
  cutoffsOf,
  deletionTimeOf,
  isAnonymisedAudit,
  pageEndsNow,
  photoErasedNow,
  type StudentFacts,
  studentAnonymisedNow,
} from '../../src/rules/retention.js';

const NOW = new Date('2026-03-10T12:00:00.000Z');
const PERIODS: RetentionPeriods = {
  deletedStudentDays: 30,
  attendanceDays: 60,
  pageDays: 90,
  auditDays: 365,
};
const CUT = cutoffsOf(PERIODS, NOW);

describe('retention cutoffs', () => {
  it('are the instants (and, for attendance, the UTC day) each period back from now', () => {
    expect(CUT).to.deep.equal({
      deletedBefore: '2026-02-08T12:00:00.000Z',
      attendanceBeforeDay: '2026-01-09',
      pagesSentBefore: '2025-12-10T12:00:00.000Z',
      auditBefore: '2025-03-10T12:00:00.000Z',
    });
  });

  it('move with the periods: the defaults keep five years of attendance and of audit subjects', () => {
    const c = cutoffsOf(DEFAULT_RETENTION, NOW);
    expect(c.attendanceBeforeDay).to.equal('2021-03-11');
    expect(c.auditBefore).to.equal('2021-03-11T12:00:00.000Z');
    expect(c.deletedBefore).to.equal('2026-02-08T12:00:00.000Z');
  });
});

describe('which deleted students are anonymised now', () => {
  // what, facts, anonymised now?
  const cases: ReadonlyArray<readonly [string, StudentFacts, boolean]> = [
    [
      'deleted longer ago than the period',
      { status: 'DELETED', deletedAt: '2026-02-08T11:59:59.999Z', anonymisedAt: null },
      true,
    ],
    [
      'deleted exactly the period ago: kept (never a moment early)',
      { status: 'DELETED', deletedAt: '2026-02-08T12:00:00.000Z', anonymisedAt: null },
      false,
    ],
    [
      'deleted within the period',
      { status: 'DELETED', deletedAt: '2026-03-01T00:00:00.000Z', anonymisedAt: null },
      false,
    ],
    [
      'anonymised already: once only',
      { status: 'DELETED', deletedAt: '2025-01-01T00:00:00.000Z', anonymisedAt: '2025-02-01T00:00:00.000Z' },
      false,
    ],
    ['active, however old', { status: 'ACTIVE', deletedAt: null, anonymisedAt: null }, false],
    [
      'a device-precision time (no milliseconds) is compared as a time',
      { status: 'DELETED', deletedAt: '2026-02-08T11:59:59Z', anonymisedAt: null },
      true,
    ],
  ];
  for (const [what, facts, expected] of cases)
    it(`${what} → ${expected ? 'anonymised' : 'kept'}`, () => {
      expect(studentAnonymisedNow(facts, CUT)).to.equal(expected);
    });

  it('takes the deletion time from the record, or its last change for one deleted before it was kept', () => {
    const base = { updatedAt: '2025-12-01T00:00:00.000Z' };
    expect(deletionTimeOf({ ...base, status: 'DELETED', deletedAt: '2025-11-01T00:00:00.000Z' })).to.equal(
      '2025-11-01T00:00:00.000Z',
    );
    expect(deletionTimeOf({ ...base, status: 'DELETED' })).to.equal('2025-12-01T00:00:00.000Z');
    expect(deletionTimeOf({ ...base, status: 'DELETED', deletedAt: null })).to.equal(
      '2025-12-01T00:00:00.000Z',
    );
    expect(deletionTimeOf({ ...base, status: 'ACTIVE' })).to.equal(null);
  });

  it("erases a deleted student's photo whatever the period, an active one's never", () => {
    expect(photoErasedNow({ status: 'DELETED' })).to.equal(true);
    expect(photoErasedNow({ status: 'ACTIVE' })).to.equal(false);
  });
});

describe('which check-in and attendance aspects end now', () => {
  // what, aspect day, ends?
  const cases: ReadonlyArray<readonly [string, string, boolean]> = [
    ['a day before the cutoff day', '2026-01-08', true],
    ['the cutoff day itself: part of it is within the period', '2026-01-09', false],
    ['a recent day', '2026-03-10', false],
    ['years ago', '2019-06-01', true],
    ['an aspect with no day (nothing to date it by) is never ended', '', false],
    ['a malformed day is never ended', 'not-a-day', false],
  ];
  for (const [what, day, expected] of cases)
    it(`${what} → ${expected ? 'ends' : 'kept'}`, () => {
      expect(aspectEndsNow(day, CUT)).to.equal(expected);
    });
});

describe('which pages and audit entries end now', () => {
  const pages: ReadonlyArray<readonly [string, string, boolean]> = [
    ['sent before the cutoff', '2025-12-10T11:59:59.999Z', true],
    ['sent at the cutoff', '2025-12-10T12:00:00.000Z', false],
    ['sent yesterday', '2026-03-09T12:00:00.000Z', false],
    ['an unreadable time is kept', 'yesterday', false],
  ];
  for (const [what, sentAt, expected] of pages)
    it(`a page ${what} → ${expected ? 'deleted' : 'kept'}`, () => {
      expect(pageEndsNow(sentAt, CUT)).to.equal(expected);
    });

  const entries: ReadonlyArray<readonly [string, string, boolean, boolean]> = [
    ['older than the period', '2025-03-10T11:59:59.999Z', false, true],
    ['at the cutoff', '2025-03-10T12:00:00.000Z', false, false],
    ['older, but anonymised already', '2024-01-01T00:00:00.000Z', true, false],
    ['recent', '2026-03-01T00:00:00.000Z', false, false],
  ];
  for (const [what, createdAt, anonymised, expected] of entries)
    it(`an audit entry ${what} → ${expected ? 'anonymised' : 'kept'}`, () => {
      expect(auditEntryAnonymisedNow({ created_at: createdAt, anonymised }, CUT)).to.equal(expected);
    });
});

const record: StudentRecord = {
  studentId: '0b6f3c1e-5a3c-4c2e-9f1d-1f7e2f0a9b11',
  displayName: 'Ana Souza',
  photoRef: 'photos/x/abc.jpg',
  photo_refs: ['photos/x/abc.jpg'],
  guardianName: 'Maria Souza',
  guardianNameAlt: 'João Souza',
  birthDate: '2019-05-04',
  phones: [{ number: '+55 11 98765-4321', qualifier: 'mãe' }],
  address: { street: 'Rua A', city: 'São Paulo' },
  allergies: 'amendoim',
  specialNeeds: 'TEA',
  classId: '3f6b1c2d-7e8f-4a9b-8c0d-1e2f3a4b5c6d',
  nucleusId: '4a5b6c7d-8e9f-4a0b-9c1d-2e3f4a5b6c7d',
  familyMembershipStatus: 'MEMBRO',
  imageConsentId: '5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d',
  visitor: false,
  status: 'DELETED',
  createdAt: '2024-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
  deleted_justification: 'A família mudou de cidade, pediu a exclusão',
  deletedAt: '2026-01-01T00:00:00.000Z',
};

describe('an anonymised student', () => {
  const at = '2026-03-10T12:00:00.000Z';
  const done = anonymisedStudent(record, at);

  it('clears every personal and sensitive field the Student codec classifies (names read as anonymised)', () => {
    const cleared: Record<string, unknown> = {
      displayName: ANONYMISED,
      guardianName: ANONYMISED,
      guardianNameAlt: null,
      birthDate: null,
      phones: [],
      address: null,
      allergies: null,
      specialNeeds: null,
      photoRef: null,
      photo_refs: [],
      deleted_justification: null,
    };
    // A personal field added to the codec later must be cleared here too, or this fails.
    expect(personalStudentFields().sort()).to.deep.equal(Object.keys(cleared).sort());
    for (const [field, value] of Object.entries(cleared))
      expect(done[field as keyof StudentRecord], field).to.deep.equal(value);
  });

  it('keeps its id, class, nucleus, status, visitor flag, membership status and creation and deletion times', () => {
    for (const field of [
      'studentId',
      'classId',
      'nucleusId',
      'status',
      'visitor',
      'familyMembershipStatus',
      'imageConsentId',
      'createdAt',
      'deletedAt',
    ] as const)
      expect(done[field], field).to.deep.equal(record[field]);
    expect(done.anonymisedAt).to.equal(at);
    expect(done.updatedAt).to.equal(at);
  });

  it('keeps the deletion time of a record deleted before it was kept, from its last change', () => {
    const { deletedAt: _d, ...older } = record;
    expect(anonymisedStudent(older, at).deletedAt).to.equal(record.updatedAt);
  });
});

describe("an anonymised student's events", () => {
  // kind, payload as stored, payload once anonymised
  const cases: ReadonlyArray<readonly [string, string, Record<string, unknown>, Record<string, unknown>]> = [
    [
      'a field set keeps which field, not its value',
      'STUDENT_FIELD_SET',
      { field: 'allergies', value: 'amendoim' },
      { field: 'allergies' },
    ],
    [
      'a check-out keeps the check-in, not who collected the child',
      'CHECK_OUT',
      { checkInId: 'c-1', sessionId: 's-1', pickupPerson: 'Maria Souza' },
      { checkInId: 'c-1', sessionId: 's-1' },
    ],
    [
      "an emergency keeps that it was one, not its justification's text",
      'EMERGENCY_CHECKOUT',
      {
        checkInId: 'c-1',
        sessionId: 's-1',
        pickupPerson: 'Tio Zé',
        justification: 'A mãe ligou do hospital',
      },
      { checkInId: 'c-1', sessionId: 's-1', justification: ANONYMISED },
    ],
    [
      "a check-in keeps that the rule was waived, not the ADMIN's words nor the rule's facts about the child",
      'CHECK_IN',
      {
        checkInId: 'c-1',
        sessionId: 's-1',
        visitor: false,
        override: { justification: 'Irmão mais velho na sala' },
        admission: { refusals: [{ reason: 'AGE_OUT_OF_RANGE', ageMonths: 30 }] },
      },
      { checkInId: 'c-1', sessionId: 's-1', visitor: false, override: { justification: ANONYMISED } },
    ],
    [
      "a visitor's registration keeps the class, and placeholders for the names and phone it requires",
      'VISITOR_REGISTERED',
      {
        displayName: 'Davi',
        guardianName: 'Rute',
        phone: '11 91234-5678',
        classId: 'k-1',
        allergies: 'leite',
        specialNeeds: null,
      },
      { displayName: ANONYMISED, guardianName: ANONYMISED, phone: ANONYMISED, classId: 'k-1' },
    ],
    [
      'a mark is unchanged: it names no one',
      'MARK_PRESENT',
      { actionType: 'MARK_PRESENT', sessionId: 's-1' },
      { actionType: 'MARK_PRESENT', sessionId: 's-1' },
    ],
    [
      'a soft delete loses its justification (free text)',
      'SOFT_DELETE',
      { justification: 'Pedido da mãe, Maria Souza', photoErased: true },
      { justification: ANONYMISED, photoErased: true },
    ],
    [
      'a pickup grant keeps its ids and window, not the adult',
      'AUTHORIZED_PICKUP',
      {
        action: 'GRANTED',
        authorizationId: 'a-1',
        valid_until: '2026-01-01T23:59:59.999Z',
        adultName: 'Tia Lu',
      },
      { action: 'GRANTED', authorizationId: 'a-1', valid_until: '2026-01-01T23:59:59.999Z' },
    ],
    [
      'a key no one has judged yet is dropped',
      'SOMETHING_NEW',
      { checkInId: 'c-1', note: 'Maria disse que volta às 11h' },
      { checkInId: 'c-1' },
    ],
  ];
  for (const [what, type, payload, expected] of cases)
    it(what, () => {
      const out = anonymisedPayload(payload);
      expect(out).to.deep.equal(expected);
      // What the projections fold still reads the same kind of change.
      const before = decodeChange(type, payload);
      if (before !== undefined) expect(decodeChange(type, out)?.type).to.equal(before.type);
    });

  it('is idempotent: anonymising twice changes nothing more', () => {
    for (const [, , payload] of cases)
      expect(anonymisedPayload(anonymisedPayload(payload))).to.deep.equal(anonymisedPayload(payload));
  });
});

describe("an anonymised student's check-ins, consents and audit entries", () => {
  it('check-ins name no adult, and an emergency keeps only that it had a justification', () => {
    expect(anonymisedCheckinFields({ pickupPerson: 'Maria', justification: null })).to.deep.equal({
      pickupPerson: null,
      justification: null,
    });
    expect(anonymisedCheckinFields({ pickupPerson: 'Maria', justification: 'Urgência' })).to.deep.equal({
      pickupPerson: null,
      justification: ANONYMISED,
    });
  });

  it('consents lose who gave them and the reason of a revocation', () => {
    expect(
      anonymisedConsentFields({ granted_by_name: 'Maria Souza', revocation_reason: 'Mudou de ideia' }),
    ).to.deep.equal({ granted_by_name: ANONYMISED, revocation_reason: ANONYMISED });
    expect(anonymisedConsentFields({ granted_by_name: 'Maria', revocation_reason: null })).to.deep.equal({
      granted_by_name: ANONYMISED,
      revocation_reason: null,
    });
  });

  // what, details, details once anonymised (the time added)
  const audits: ReadonlyArray<readonly [string, Record<string, unknown>, Record<string, unknown>]> = [
    [
      "a request's entry keeps status and error code, not its device",
      { status: 409, errorCode: 'CONFLICT', deviceId: 'd-1', replayOf: 'c-1' },
      { status: 409, errorCode: 'CONFLICT' },
    ],
    [
      "a conflict's entry keeps the policy, not the aspect (which holds the student's id) or the events",
      {
        code: 'CONFLICT_SUPERSEDED',
        policy: 'ADMIN_PRECEDENCE',
        aspect: 'checkin:s-1:st-1',
        winnerEventId: 'e-1',
        loserEventId: 'e-2',
      },
      { code: 'CONFLICT_SUPERSEDED', policy: 'ADMIN_PRECEDENCE' },
    ],
    [
      "a page's entry keeps its counts, not the page",
      { pageId: 'p-1', phonesPaged: 2, phonesFailed: 0, status: 201 },
      { phonesPaged: 2, phonesFailed: 0, status: 201 },
    ],
    [
      "a visitor's registration keeps its code, not the student it names",
      { code: 'VISITOR_REGISTERED', eventId: 'e-1', studentId: 'st-1' },
      { code: 'VISITOR_REGISTERED' },
    ],
    [
      "an override's entry keeps what was waived and that it was one",
      { override: true, waived: 'ROOM_FULL', status: 201 },
      { override: true, waived: 'ROOM_FULL', status: 201 },
    ],
  ];
  for (const [what, details, expected] of audits)
    it(what, () => {
      const at = '2026-03-10T12:00:00.000Z';
      const out = anonymisedAuditDetails(details, at);
      expect(out).to.deep.equal({ ...expected, anonymisedAt: at });
      expect(isAnonymisedAudit(out)).to.equal(true);
      expect(isAnonymisedAudit(details)).to.equal(false);
    });
});
