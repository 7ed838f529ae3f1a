import { expect } from 'chai';
import {
  familyRows,
  lookupDigits,
  lookupFamilies,
  nobodyToCheckIn,
  SELF_LOOKUPS_PER_MINUTE,
  sessionNow,
  throttleLookup,
} from '../../src/kiosk/app/familyCheckIn.js';
import { buildRosterIndex } from '../../src/kiosk/app/rosterIndex.js';
import { idleExpired, selfServiceAllows } from '../../src/kiosk/app/selfService.js';
import { aRosterStudent } from '../support/fixtures.js';

const student = (studentId: string, displayName: string, classId: string) =>
  aRosterStudent(studentId, displayName, { classId });

const family = (familyKey: string, guardianName: string, phoneSuffix: string, studentIds: string[]) => ({
  _id: `family:${familyKey}`,
  docType: 'rosterFamily',
  familyKey,
  guardianName,
  phoneSuffix,
  studentIds,
  pass: `P${familyKey}`,
  revoked: [],
});

/** Local times of the tablet's day (sessions are dated in the tablet's calendar). */
const DAY = '2026-11-29';
const at = (hour: number, minute = 0): Date => new Date(2026, 10, 29, hour, minute);
const iso = (hour: number): string => at(hour).toISOString();

const session = (
  sessionId: string,
  classId: string,
  times: { date?: string; startsAt?: string | null; endsAt?: string | null; active?: false } = {},
) => ({
  _id: `session:${sessionId}`,
  docType: 'rosterSession',
  sessionId,
  classId,
  date: times.date ?? DAY,
  title: null,
  startsAt: times.startsAt ?? null,
  endsAt: times.endsAt ?? null,
  ...(times.active === false ? { active: false } : {}),
});

const index = buildRosterIndex([
  student('lia', 'Lia Prado', 'small'),
  student('teo', 'Téo Prado', 'small'),
  student('rui', 'Rui Prado', 'juniors'),
  student('ana', 'Ana Souza', 'small'),
  student('bia', 'Bia Lima', 'teens'),
  // Rita's family: three children in two classes.
  family('kPrado', 'Rita', '0001', ['teo', 'rui', 'lia']),
  // Another family sharing the four digits.
  family('kSouza', 'Sara', '0001', ['ana']),
  // A family whose only child was deleted: the document outlives the student document until the next pass.
  family('kGone', 'Zeca', '0001', ['deleted-child']),
  family('kLima', 'Marta', '4321', ['bia', 'deleted-child']),
  { _id: 'class:small', docType: 'rosterClass', classId: 'small', name: 'Pequenos' },
  { _id: 'class:juniors', docType: 'rosterClass', classId: 'juniors', name: 'Juniores' },
  { _id: 'class:teens', docType: 'rosterClass', classId: 'teens', name: 'Adolescentes' },
  session('small-am', 'small', { startsAt: iso(9), endsAt: iso(11) }),
  session('small-pm', 'small', { startsAt: iso(18), endsAt: iso(20) }),
  session('juniors-day', 'juniors'),
  session('teens-tomorrow', 'teens', { date: '2026-11-30' }),
]);

describe('kiosk: the phone lookup', () => {
  const cases: ReadonlyArray<{ typed: string; want: ReadonlyArray<[string, ReadonlyArray<string>]> }> = [
    // Several families share four digits: each shown by first names; a family with no child left is not.
    {
      typed: '0001',
      want: [
        ['Rita', ['Lia', 'Rui', 'Téo']],
        ['Sara', ['Ana']],
      ],
    },
    { typed: ' 43-21 ', want: [['Marta', ['Bia']]] },
    { typed: '4321', want: [['Marta', ['Bia']]] },
    // Fewer or more than four digits never list anything.
    { typed: '', want: [] },
    { typed: '432', want: [] },
    { typed: '54321', want: [] },
    { typed: '9999', want: [] },
    { typed: 'abcd', want: [] },
  ];
  for (const { typed, want } of cases) {
    it(`"${typed}" finds ${want.length === 0 ? 'nothing' : want.map(([g]) => g).join(', ')}`, () => {
      expect(lookupFamilies(index, typed).map((f) => [f.guardianName, f.children])).to.deep.equal(want);
    });
  }

  it('reads exactly four digits out of what is typed', () => {
    expect(lookupDigits('(00) 01')).to.equal('0001');
    expect(lookupDigits('000')).to.equal(undefined);
    expect(lookupDigits('00011')).to.equal(undefined);
  });
});

describe('kiosk: self-service answers a few lookups a minute', () => {
  const minute = (n: number, from = 0) => Array.from({ length: n }, (_, i) => from + i * 1_000);
  const cases: ReadonlyArray<{
    what: string;
    recent: number[];
    now: number;
    answered: boolean;
    kept: number;
  }> = [
    { what: 'the first', recent: [], now: 0, answered: true, kept: 1 },
    {
      what: 'one under the limit',
      recent: minute(SELF_LOOKUPS_PER_MINUTE - 1),
      now: 30_000,
      answered: true,
      kept: 8,
    },
    {
      what: 'one over the limit',
      recent: minute(SELF_LOOKUPS_PER_MINUTE),
      now: 30_000,
      answered: false,
      kept: 8,
    },
    // A minute after the first of them, that one no longer counts.
    { what: 'a minute on', recent: minute(SELF_LOOKUPS_PER_MINUTE), now: 60_000, answered: true, kept: 8 },
    { what: 'long after', recent: minute(SELF_LOOKUPS_PER_MINUTE), now: 600_000, answered: true, kept: 1 },
  ];
  for (const { what, recent, now, answered, kept } of cases) {
    it(what, () => {
      const got = throttleLookup(recent, now);
      expect([got.answered, got.recentMs.length]).to.deep.equal([answered, kept]);
    });
  }

  it('a refused lookup does not push the wait further', () => {
    const full = minute(SELF_LOOKUPS_PER_MINUTE);
    expect(throttleLookup(full, 30_000).recentMs).to.deep.equal(full);
  });
});

describe("kiosk: the session a child goes to now, their own class's", () => {
  const cases: ReadonlyArray<{ what: string; classId: string; now: Date; want: string | undefined }> = [
    { what: 'the session under way', classId: 'small', now: at(10), want: 'small-am' },
    { what: 'the next to start, before any', classId: 'small', now: at(7), want: 'small-am' },
    { what: 'the next to start, between two', classId: 'small', now: at(14), want: 'small-pm' },
    { what: 'the last started, after all (a late family)', classId: 'small', now: at(21), want: 'small-pm' },
    { what: 'a session without times, all day', classId: 'juniors', now: at(23, 30), want: 'juniors-day' },
    { what: "none: the class's session is tomorrow", classId: 'teens', now: at(10), want: undefined },
    { what: 'none: an unknown class', classId: 'nowhere', now: at(10), want: undefined },
  ];
  for (const { what, classId, now, want } of cases) {
    it(what, () => {
      expect(sessionNow(index, classId, now)?.sessionId).to.equal(want);
    });
  }

  it('skips a deactivated session, and every session of a deactivated class', () => {
    const closed = buildRosterIndex([
      session('a', 'c', { startsAt: iso(9), endsAt: iso(11), active: false }),
      session('b', 'c', { startsAt: iso(18), endsAt: iso(20) }),
      session('x', 'gone'),
      { _id: 'class:gone', docType: 'rosterClass', classId: 'gone', name: 'G', active: false },
    ]);
    expect(sessionNow(closed, 'c', at(10))?.sessionId).to.equal('b');
    expect(sessionNow(closed, 'gone', at(10))).to.equal(undefined);
  });
});

describe('kiosk: who the family screen ticks', () => {
  const prado = index.families.get('kPrado');
  if (prado === undefined) throw new Error('fixture');
  const rows = (inside: ReadonlyArray<string>, now = at(10)) =>
    familyRows(index, prado, now, (sessionId, studentId) => inside.includes(`${sessionId}:${studentId}`)).map(
      (r) => [r.student.displayName, r.session?.sessionId, r.ticked, r.why],
    );

  it('ticks every child with a session now, each in their own class', () => {
    expect(rows([])).to.deep.equal([
      ['Lia Prado', 'small-am', true, undefined],
      ['Rui Prado', 'juniors-day', true, undefined],
      ['Téo Prado', 'small-am', true, undefined],
    ]);
  });

  it('leaves a child already in the room unticked, saying so', () => {
    expect(rows(['small-am:teo'])).to.deep.equal([
      ['Lia Prado', 'small-am', true, undefined],
      ['Rui Prado', 'juniors-day', true, undefined],
      ['Téo Prado', 'small-am', false, 'INSIDE'],
    ]);
  });

  it('a family with no child in a session now has nobody to check in', () => {
    const lima = index.families.get('kLima');
    if (lima === undefined) throw new Error('fixture');
    const r = familyRows(index, lima, at(10), () => false);
    expect(r.map((x) => [x.student.displayName, x.ticked, x.why])).to.deep.equal([
      ['Bia Lima', false, 'NO_SESSION'],
    ]);
    expect(nobodyToCheckIn(r)).to.equal(true);
    expect(nobodyToCheckIn(familyRows(index, prado, at(10), () => false))).to.equal(false);
  });

  it('never lists a child the tablet no longer holds (deleted)', () => {
    const lima = index.families.get('kLima');
    expect(lima?.studentIds).to.include('deleted-child');
    if (lima === undefined) throw new Error('fixture');
    expect(familyRows(index, lima, at(10), () => false).map((r) => r.student.studentId)).to.deep.equal([
      'bia',
    ]);
  });
});

describe("kiosk: self-service mode's boundaries", () => {
  const screens: ReadonlyArray<[string, boolean]> = [
    ['self-service', true],
    ['self-service-exit', true],
    ['family-lookup', true],
    ['family', true],
    ['label', true],
    // No name search, no sessions, no check-out, no admin, no other sign-in.
    ['desk', false],
    ['sessions', false],
    ['siblings', false],
    ['checkout', false],
    ['emergency', false],
    ['new-child', false],
    ['admin-conflicts', false],
    ['sign-in', false],
  ];
  for (const [name, allowed] of screens) {
    it(`${allowed ? 'allows' : 'refuses'} the "${name}" screen`, () => {
      expect(selfServiceAllows(name)).to.equal(allowed);
    });
  }

  const idle: ReadonlyArray<[string | undefined, boolean, number, boolean]> = [
    ['family', false, 29_999, false],
    ['family', false, 30_000, true],
    ['label', false, 31_000, true],
    ['family-lookup', false, 45_000, true],
    // The start has nothing of a family's on it; with the scan's overlay open, the camera is on.
    ['self-service', false, 600_000, false],
    ['self-service', true, 29_000, false],
    ['self-service', true, 30_000, true],
  ];
  for (const [name, overlay, untouchedMs, back] of idle) {
    it(`"${name}"${overlay ? ' with the scan open' : ''} untouched for ${untouchedMs} ms ${back ? 'goes back' : 'stays'} (30 s idle)`, () => {
      expect(idleExpired(name, overlay, 1_000, 1_000 + untouchedMs, 30)).to.equal(back);
    });
  }
});
