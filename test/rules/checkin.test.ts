import { createHmac } from 'node:crypto';
import { expect } from 'chai';
import fc from 'fast-check';
import { codeFor, dayKey } from '../../src/crypto/dayKeys.js';
import {
  type CheckinCommand,
  type CheckinDecision,
  type CheckoutDecision,
  CODE_ALPHABET,
  codeFromDigest,
  dailyCode,
  decideCheckin,
  decideCheckout,
  endOfUtcDay,
  grantActive,
  grantWindow,
  headcountOf,
  isOffensive,
  mayEmergencyCheckout,
  normaliseCode,
  phoneSuffixMatches,
  roomIsFull,
  utcDay,
  volunteersNeeded,
} from '../../src/rules/checkin.js';

const SECRET = new Uint8Array(32).fill(7);
const STUDENT = '6f1c2a8e-9d3b-4c5e-8f7a-1b2c3d4e5f60';

describe('daily code', () => {
  it('is 6 characters from an alphabet without look-alikes (no 0, O, 1, I, L)', () => {
    for (const c of ['0', 'O', '1', 'I', 'L']) expect(CODE_ALPHABET).not.to.contain(c);
    fc.assert(
      fc.property(
        fc.uuid(),
        fc.date({ min: new Date('2020-01-01'), max: new Date('2035-01-01'), noInvalidDate: true }),
        (id, at) => {
          const code = codeFor(SECRET, id, at);
          expect(code).to.match(new RegExp(`^[${CODE_ALPHABET}]{6}$`));
          expect(isOffensive(code)).to.equal(false);
        },
      ),
      { numRuns: 500 },
    );
  });

  const sameDay: ReadonlyArray<[string, string, boolean]> = [
    ['2026-11-25T00:00:00.000Z', '2026-11-25T23:59:59.999Z', true],
    ['2026-11-25T23:59:59.999Z', '2026-11-26T00:00:00.000Z', false],
    ['2026-11-25T12:00:00.000Z', '2026-11-25T12:00:00.000Z', true],
    ['2026-12-31T23:59:59.999Z', '2027-01-01T00:00:00.000Z', false],
  ];
  for (const [a, b, same] of sameDay) {
    it(`${a} and ${b} give ${same ? 'the same code (a reprinted label matches)' : 'different codes (UTC midnight)'}`, () => {
      expect(codeFor(SECRET, STUDENT, new Date(a)) === codeFor(SECRET, STUDENT, new Date(b))).to.equal(same);
    });
  }

  it('depends on the child and on the secret', () => {
    const at = new Date('2026-11-25T10:00:00Z');
    expect(codeFor(SECRET, STUDENT, at)).not.to.equal(
      codeFor(SECRET, '11111111-2222-4333-8444-555555555555', at),
    );
    expect(codeFor(SECRET, STUDENT, at)).not.to.equal(codeFor(new Uint8Array(32).fill(8), STUDENT, at));
  });

  it('a device holding only the day key computes the same code as the server', () => {
    const at = new Date('2026-11-25T10:00:00Z');
    const key = dayKey(SECRET, utcDay(at));
    const onDevice = dailyCode(STUDENT, (m) => new Uint8Array(createHmac('sha256', key).update(m).digest()));
    expect(onDevice).to.equal(codeFor(SECRET, STUDENT, at));
  });

  it('maps digest bytes uniformly, skipping bytes at or above 248', () => {
    expect(codeFromDigest(new Uint8Array([0, 1, 30, 31, 248, 255, 62, 5]))).to.equal('23Z227');
    expect(codeFromDigest(new Uint8Array([250, 251, 252]))).to.equal(undefined);
  });

  it('re-derives deterministically when a draw is offensive', () => {
    let calls = 0;
    const code = dailyCode(STUDENT, (m) => {
      calls += 1;
      // First draw spells "PUTA22", which must be skipped; the second draw is clean.
      return m.endsWith(':1') ? new Uint8Array([0, 0, 0, 0, 0, 0]) : new Uint8Array([20, 25, 24, 8, 0, 0]);
    });
    expect(code).to.equal('222222');
    expect(calls).to.equal(2);
  });

  it('is typed case-insensitively', () => expect(normaliseCode(' ab3k9z ')).to.equal('AB3K9Z'));
});

describe('check-out decision', () => {
  const base = {
    status: 'CHECKED_IN' as const,
    failedAttempts: 0,
    maxAttempts: 5,
    codeMatches: true,
    adultAllowed: true,
  };
  const table: ReadonlyArray<[string, Partial<typeof base>, CheckoutDecision]> = [
    ['the right code and an allowed adult check the child out', {}, { kind: 'CHECK_OUT' }],
    [
      'a wrong code counts one failure and says how many remain',
      { codeMatches: false },
      { kind: 'MISMATCH', remainingAttempts: 4, locksNow: false },
    ],
    [
      'the 5th wrong code locks',
      { codeMatches: false, failedAttempts: 4 },
      { kind: 'MISMATCH', remainingAttempts: 0, locksNow: true },
    ],
    ['after 5 failures even the right code is locked out', { failedAttempts: 5 }, { kind: 'LOCKED' }],
    ['a wrong code when locked stays locked', { failedAttempts: 5, codeMatches: false }, { kind: 'LOCKED' }],
    [
      'a checked-out child cannot be checked out again',
      { status: 'CHECKED_OUT' as never },
      { kind: 'ALREADY_CHECKED_OUT' },
    ],
    [
      'a check-in that lost a conflict cannot be checked out, even with the right code',
      { status: 'SUPERSEDED' as never },
      { kind: 'SUPERSEDED' },
    ],
    [
      'the right code with an adult not on the list is refused without burning an attempt',
      { adultAllowed: false },
      { kind: 'ADULT_NOT_AUTHORIZED' },
    ],
    [
      'a limit of 1 locks at the first failure',
      { codeMatches: false, maxAttempts: 1 },
      { kind: 'MISMATCH', remainingAttempts: 0, locksNow: true },
    ],
  ];
  for (const [what, over, expected] of table) {
    it(what, () => expect(decideCheckout({ ...base, ...over })).to.deep.equal(expected));
  }
});

describe('emergency policy', () => {
  const table: ReadonlyArray<[string[], string[], boolean, boolean]> = [
    [['ADMIN'], [], true, true],
    [['ADMIN'], [], false, true],
    [['CHAMADOR'], [], false, true],
    [['CHAMADOR'], [], true, false],
    [['PORTEIRO'], ['attendance'], false, true],
    [['PORTEIRO'], ['attendance'], true, false],
    [['RELATORIOS'], [], false, false],
  ];
  for (const [roles, permissions, adminOnly, allowed] of table) {
    it(`${roles.join(',')} with adminOnly=${adminOnly} → ${allowed ? 'allowed' : 'refused'}`, () =>
      expect(mayEmergencyCheckout(roles, permissions, adminOnly)).to.equal(allowed));
  }
});

describe('temporary (N3) grant window', () => {
  const now = new Date('2026-11-25T10:00:00.000Z');
  it('defaults to now until the end of the UTC day', () => {
    expect(grantWindow(now)).to.deep.equal({
      ok: true,
      validFrom: now,
      validUntil: new Date('2026-11-25T23:59:59.999Z'),
    });
    expect(endOfUtcDay(new Date('2026-11-25T23:59:59.999Z')).toISOString()).to.equal(
      '2026-11-25T23:59:59.999Z',
    );
  });

  const windows: ReadonlyArray<[string, string | undefined, string | undefined, string]> = [
    ['exactly 7 days is allowed', '2026-11-25T10:00:00.000Z', '2026-12-02T10:00:00.000Z', 'ok'],
    [
      '7 days and 1 ms is refused',
      '2026-11-25T10:00:00.000Z',
      '2026-12-02T10:00:00.001Z',
      'LONGER_THAN_7_DAYS',
    ],
    [
      'an end before the start is refused',
      '2026-11-26T10:00:00.000Z',
      '2026-11-26T09:00:00.000Z',
      'ENDS_BEFORE_START',
    ],
    [
      'a window already over is refused',
      '2026-11-24T08:00:00.000Z',
      '2026-11-24T18:00:00.000Z',
      'ALREADY_OVER',
    ],
    ['a future start defaults to the end of its own day', '2026-11-27T08:00:00.000Z', undefined, 'ok'],
  ];
  for (const [what, from, until, expected] of windows) {
    it(what, () => {
      const w = grantWindow(
        now,
        from === undefined ? undefined : new Date(from),
        until === undefined ? undefined : new Date(until),
      );
      expect(w.ok ? 'ok' : w.reason).to.equal(expected);
    });
  }

  const gate: ReadonlyArray<[string, string, boolean]> = [
    ['inside the window', '2026-11-25T12:00:00.000Z', true],
    ['at its last millisecond', '2026-11-25T23:59:59.999Z', true],
    ['one millisecond after (UTC midnight)', '2026-11-26T00:00:00.000Z', false],
    ['before it starts', '2026-11-25T09:59:59.999Z', false],
  ];
  for (const [what, at, active] of gate) {
    it(`a grant is ${active ? 'active' : 'inert'} ${what}`, () => {
      const g = {
        validFrom: '2026-11-25T10:00:00.000Z',
        validUntil: '2026-11-25T23:59:59.999Z',
        revokedAt: null,
      };
      expect(grantActive(g, new Date(at))).to.equal(active);
    });
  }

  it('a revoked grant is inert inside its window', () => {
    expect(
      grantActive(
        {
          validFrom: '2026-11-25T10:00:00.000Z',
          validUntil: '2026-11-25T23:59:59.999Z',
          revokedAt: '2026-11-25T11:00:00.000Z',
        },
        new Date('2026-11-25T12:00:00Z'),
      ),
    ).to.equal(false);
  });
});

describe('phone suffix at the gate', () => {
  const table: ReadonlyArray<[string, string, boolean]> = [
    ['+55 (11) 5555-0101', '0101', true],
    ['+55 (11) 5555-0101', '55-0101', true],
    ['+55 (11) 5555-0101', '0102', false],
    ['+55 (11) 5555-0101', '101', false],
  ];
  for (const [phone, suffix, ok] of table) {
    it(`"${suffix}" ${ok ? 'matches' : 'does not match'} ${phone}`, () =>
      expect(phoneSuffixMatches(phone, suffix)).to.equal(ok));
  }
});

describe('decideCheckin: what a command on a child check-in aspect becomes', () => {
  const open = { checkInId: 'c1', status: 'CHECKED_IN' };
  const closed = { checkInId: 'c0', status: 'CHECKED_OUT' };
  const lost = { checkInId: 'c9', status: 'SUPERSEDED' };
  const cases: ReadonlyArray<{
    name: string;
    checkins: ReadonlyArray<{ checkInId: string; status: string }>;
    command: CheckinCommand;
    expected: CheckinDecision;
  }> = [
    {
      name: 'a first check-in',
      checkins: [],
      command: { type: 'CHECK_IN', checkInId: 'new' },
      expected: { kind: 'EVENT', type: 'CHECK_IN', checkInId: 'new' },
    },
    {
      name: 're-entry after a check-out, or after a check-in that lost a conflict',
      checkins: [closed, lost],
      command: { type: 'CHECK_IN', checkInId: 'new' },
      expected: { kind: 'EVENT', type: 'CHECK_IN', checkInId: 'new' },
    },
    {
      name: 'a second check-in while one is open',
      checkins: [closed, open],
      command: { type: 'CHECK_IN', checkInId: 'new' },
      expected: { kind: 'REFUSED', reason: 'ALREADY_CHECKED_IN' },
    },
    {
      name: 'a check-in under an id the aspect already holds (a faulty device)',
      checkins: [closed],
      command: { type: 'CHECK_IN', checkInId: 'c0' },
      expected: { kind: 'REFUSED', reason: 'CHECK_IN_ID_TAKEN' },
    },
    {
      name: 'a check-out of the open check-in',
      checkins: [closed, open],
      command: { type: 'CHECK_OUT', checkInId: 'c1' },
      expected: { kind: 'EVENT', type: 'CHECK_OUT', checkInId: 'c1' },
    },
    {
      name: 'an emergency check-out of the open check-in',
      checkins: [open],
      command: { type: 'EMERGENCY_CHECKOUT', checkInId: 'c1' },
      expected: { kind: 'EVENT', type: 'EMERGENCY_CHECKOUT', checkInId: 'c1' },
    },
    {
      name: 'a check-out of a closed check-in',
      checkins: [closed, open],
      command: { type: 'CHECK_OUT', checkInId: 'c0' },
      expected: { kind: 'REFUSED', reason: 'NOT_OPEN' },
    },
    {
      name: 'an emergency check-out of a check-in that lost a conflict',
      checkins: [lost],
      command: { type: 'EMERGENCY_CHECKOUT', checkInId: 'c9' },
      expected: { kind: 'REFUSED', reason: 'NOT_OPEN' },
    },
    {
      name: 'a check-out of a check-in the aspect does not hold',
      checkins: [open],
      command: { type: 'CHECK_OUT', checkInId: 'elsewhere' },
      expected: { kind: 'REFUSED', reason: 'NOT_OPEN' },
    },
  ];
  for (const c of cases)
    it(c.name, () => {
      expect(decideCheckin(c.checkins, c.command)).to.deep.equal(c.expected);
    });
});

describe('the headcount of a session (table)', () => {
  const IN = { status: 'CHECKED_IN' };
  const OUT = { status: 'CHECKED_OUT' };
  const LOST = { status: 'SUPERSEDED' };
  const table: ReadonlyArray<
    readonly [string, Array<Array<{ status: string }>>, { checkedIn: number; checkedOut: number }]
  > = [
    ['nobody yet', [], { checkedIn: 0, checkedOut: 0 }],
    ['two in, one gone', [[IN], [IN], [IN, OUT]], { checkedIn: 2, checkedOut: 1 }],
    ['a child who came back counts once, as in the room', [[OUT, IN]], { checkedIn: 1, checkedOut: 0 }],
    ['a check-in that lost a conflict never happened', [[IN, LOST], [LOST]], { checkedIn: 1, checkedOut: 0 }],
    ['a child with no check-in that stands is not counted', [[]], { checkedIn: 0, checkedOut: 0 }],
  ];
  for (const [name, children, expected] of table)
    it(name, () => {
      expect(headcountOf(children)).to.deep.equal(expected);
    });

  it('a room is full at its capacity, never without one; a ratio asks for whole volunteers', () => {
    expect([roomIsFull(9, 10), roomIsFull(10, 10), roomIsFull(11, 10), roomIsFull(500, null)]).to.deep.equal([
      false,
      true,
      true,
      false,
    ]);
    expect([
      volunteersNeeded(0, 4),
      volunteersNeeded(4, 4),
      volunteersNeeded(5, 4),
      volunteersNeeded(5, null),
    ]).to.deep.equal([0, 1, 2, null]);
  });
});
