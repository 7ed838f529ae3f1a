import { expect } from 'chai';
import type { AspectChange } from '../../src/domain/eventTypes.js';
import {
  type AspectEventRecord,
  foldAspect,
  holdsEvents,
  kindOfAspect,
  outcomeOf,
  projectAspect,
  standingOf,
} from '../../src/rules/projections.js';

const rec = (
  eventId: string,
  change: AspectChange,
  opts: { role?: string; at?: string; base?: string | null; user?: string } = {},
): AspectEventRecord => ({
  eventId,
  baseVersion: opts.base ?? null,
  subjectId: 'stu-1',
  userId: opts.user ?? `user-${eventId}`,
  role: opts.role ?? 'CHAMADOR',
  deviceId: `dev-${eventId}`,
  clientTimestamp: opts.at ?? '2026-11-26T10:00:00.000Z',
  serverTimestamp: '2026-11-26T12:00:00.000Z',
  type: change.type,
  payload: {},
  change,
});

const checkIn = (id: string): AspectChange => ({
  type: 'CHECK_IN',
  checkInId: id,
  sessionId: 'ses-1',
  visitor: false,
});
const checkOut = (id: string, who = 'Maria'): AspectChange => ({
  type: 'CHECK_OUT',
  checkInId: id,
  sessionId: 'ses-1',
  pickupPerson: who,
});

describe('projection folds (table)', () => {
  it('names the kind of an aspect from its prefix', () => {
    expect(kindOfAspect('attendance:s:2026-11-26')).to.equal('attendance');
    expect(kindOfAspect('checkin:ses:s')).to.equal('checkin');
    expect(kindOfAspect('student:s:allergies')).to.equal('student');
    expect(kindOfAspect('weather:today')).to.equal(undefined);
    expect(kindOfAspect('no-colon')).to.equal(undefined);
  });

  const checkinTable: ReadonlyArray<
    readonly [
      string,
      AspectEventRecord[],
      ReadonlyArray<{ id: string; status: string; pickup: string | null }>,
      string[],
    ]
  > = [
    [
      'a check-in alone is open',
      [rec('e1', checkIn('c1'))],
      [{ id: 'c1', status: 'CHECKED_IN', pickup: null }],
      [],
    ],
    [
      'a check-out closes it with the adult who collected the child',
      [rec('e1', checkIn('c1')), rec('e2', checkOut('c1'), { base: 'e1' })],
      [{ id: 'c1', status: 'CHECKED_OUT', pickup: 'Maria' }],
      [],
    ],
    [
      'a re-entry after a check-out opens a second check-in',
      [
        rec('e1', checkIn('c1')),
        rec('e2', checkOut('c1'), { base: 'e1' }),
        rec('e3', checkIn('c2'), { base: 'e2' }),
      ],
      [
        { id: 'c1', status: 'CHECKED_OUT', pickup: 'Maria' },
        { id: 'c2', status: 'CHECKED_IN', pickup: null },
      ],
      [],
    ],
    [
      'a second check-in while one is open changes nothing',
      [rec('e1', checkIn('c1')), rec('e2', checkIn('c2'), { base: 'e1' })],
      [{ id: 'c1', status: 'CHECKED_IN', pickup: null }],
      ['e2'],
    ],
    [
      'a check-out of a check-in that is not open changes nothing',
      [rec('e1', checkIn('c1')), rec('e2', checkOut('zz'), { base: 'e1' })],
      [{ id: 'c1', status: 'CHECKED_IN', pickup: null }],
      ['e2'],
    ],
  ];
  for (const [name, applied, expected, ineffective] of checkinTable) {
    it(`check-in: ${name}`, () => {
      const state = foldAspect('checkin', applied);
      expect(state?.kind).to.equal('checkin');
      if (state?.kind !== 'checkin') return;
      expect(
        state.checkins.map((c) => ({ id: c.checkInId, status: c.status, pickup: c.pickupPerson })),
      ).to.deep.equal(expected);
      expect(state.ineffective).to.deep.equal(ineffective);
    });
  }

  it('emergency check-out records the justification; a normal one does not', () => {
    const state = foldAspect('checkin', [
      rec('e1', checkIn('c1')),
      rec(
        'e2',
        {
          type: 'EMERGENCY_CHECKOUT',
          checkInId: 'c1',
          sessionId: 'ses-1',
          pickupPerson: 'Avó',
          justification: 'febre alta',
        },
        { base: 'e1', at: '2026-11-26T11:00:00.000Z' },
      ),
    ]);
    expect(state).to.deep.include({ kind: 'checkin', sessionId: 'ses-1' });
    if (state?.kind !== 'checkin') return;
    expect(state.checkins[0]).to.deep.include({
      status: 'CHECKED_OUT',
      emergency: true,
      justification: 'febre alta',
      checkedOutAt: '2026-11-26T11:00:00.000Z',
      checkedOutBy: 'user-e2',
    });
  });

  it('an attendance mark and a student field take the last applied event', () => {
    expect(
      foldAspect('attendance', [
        rec('e1', { type: 'MARK_PRESENT', sessionId: 'ses-1' }),
        rec('e2', { type: 'MARK_ABSENT', sessionId: 'ses-1' }, { base: 'e1' }),
      ]),
    ).to.deep.include({ mark: 'ABSENT', eventId: 'e2', sessionId: 'ses-1', day: '2026-11-26' });
    expect(
      foldAspect('student', [
        rec('e1', { type: 'STUDENT_FIELD_SET', field: 'allergies', value: 'amendoim' }),
      ]),
    ).to.deep.equal({
      kind: 'student',
      studentId: 'stu-1',
      field: 'allergies',
      value: 'amendoim',
      eventId: 'e1',
    });
    expect(foldAspect('attendance', [])).to.equal(null);
  });
});

/** After e1 opened c1: an ADMIN's check-out offline and a later CHAMADOR's, both based on e1. */
const concurrentCheckOuts = (): AspectEventRecord[] => [
  rec('e2', checkOut('c1', 'Avó'), { role: 'ADMIN', base: 'e1', at: '2026-11-26T11:00:00.000Z' }),
  rec('e3', checkOut('c1', 'Tio'), { role: 'CHAMADOR', base: 'e1', at: '2026-11-26T11:30:00.000Z' }),
];

describe('projectAspect', () => {
  it('an ADMIN check-out offline beats a concurrent later CHAMADOR check-out, with both sides in the record', () => {
    const p = projectAspect(
      'checkin:ses-1:stu-1',
      'checkin',
      [rec('e1', checkIn('c1'))],
      concurrentCheckOuts(),
    );
    expect(p.applied).to.deep.equal(['e1', 'e2']);
    expect(standingOf(p, 'e3')).to.equal('SUPERSEDED');
    expect(standingOf(p, 'e2')).to.equal('APPLIED');
    expect(standingOf(p, 'nope')).to.equal(undefined);
    expect(p.version).to.equal('e2');
    expect(p.conflicts).to.have.length(1);
    expect(p.conflicts[0]).to.deep.include({
      policy: 'ADMIN_PRECEDENCE',
      detectedAt: '2026-11-26T12:00:00.000Z',
    });
    expect(p.conflicts[0]?.winner).to.deep.include({ eventId: 'e2', role: 'ADMIN', deviceId: 'dev-e2' });
    expect(p.conflicts[0]?.loser).to.deep.include({ eventId: 'e3', role: 'CHAMADOR' });
    // What changed is named, never the personal value (who collected the child).
    expect(JSON.stringify(p.conflicts)).not.to.contain('Tio');
    if (p.state?.kind === 'checkin') expect(p.state.checkins[0]?.pickupPerson).to.equal('Avó');
  });

  it('an event already known is not merged twice', () => {
    const known = [rec('e1', checkIn('c1'))];
    const p = projectAspect('checkin:ses-1:stu-1', 'checkin', known, [rec('e1', checkIn('c1'))]);
    expect(p.events).to.have.length(1);
  });
});

describe('outcomeOf: what an event came to, for a request and a tablet alike', () => {
  // e1 opens c1; e2 (ADMIN) and e3 (CHAMADOR) close it concurrently: e3 loses; e4 closes c1 again
  // after e2 (applied in order, but c1 is no longer open); e5 names a base nobody has seen.
  const p = projectAspect(
    'checkin:ses-1:stu-1',
    'checkin',
    [rec('e1', checkIn('c1'))],
    [
      ...concurrentCheckOuts(),
      rec('e4', checkOut('c1', 'Mãe'), { base: 'e2', at: '2026-11-26T11:40:00.000Z' }),
      rec('e5', checkOut('c1', 'Pai'), { base: 'unseen', at: '2026-11-26T11:50:00.000Z' }),
    ],
  );
  const table: ReadonlyArray<readonly [string, string, ReturnType<typeof outcomeOf>]> = [
    ['the check-in', 'e1', 'APPLIED'],
    ["the ADMIN's check-out", 'e2', 'APPLIED'],
    ['the concurrent check-out that lost', 'e3', 'SUPERSEDED'],
    ['a later check-out of a check-in already closed', 'e4', 'NO_EFFECT'],
    ['an event whose base has not arrived', 'e5', 'WAITING'],
    ['an event the aspect does not hold', 'nope', undefined],
  ];
  for (const [name, eventId, expected] of table)
    it(name, () => {
      expect(outcomeOf(p, eventId)).to.equal(expected);
    });
});

describe('a later copy of an event (two instances on a CouchDB cluster)', () => {
  const first = rec('e1', checkIn('c1'));
  const later = { ...first, serverTimestamp: '2026-11-26T12:00:00.150Z' };
  it('replaces the copy the aspect holds, so the projection follows the copy that stands', () => {
    const p = projectAspect('checkin:ses-1:stu-1', 'checkin', [first], [later]);
    expect(p.events).to.deep.equal([later]);
  });
  it('is not held until the aspect holds that very copy', () => {
    expect(holdsEvents([first], [first])).to.equal(true);
    expect(holdsEvents([first], [later])).to.equal(false);
    expect(holdsEvents([first], [first, rec('e2', checkOut('c1'))])).to.equal(false);
    expect(holdsEvents([], [])).to.equal(true);
  });
});

describe('a visitor registration (table)', () => {
  const registered = (displayName: string): AspectChange => ({
    type: 'VISITOR_REGISTERED',
    displayName,
    guardianName: 'Rita',
    phone: '11 91234-5678',
    classId: 'cls-1',
    allergies: null,
    specialNeeds: 'Usa óculos',
  });

  it('names its aspect kind', () => {
    expect(kindOfAspect('visitor:stu-1')).to.equal('visitor');
  });

  const table: ReadonlyArray<
    readonly [
      string,
      AspectEventRecord[],
      string | null,
      ReadonlyArray<readonly [string, string | undefined]>,
    ]
  > = [
    ['no event: no visitor', [], null, []],
    [
      'one registration creates the child with its fields',
      [rec('r1', registered('Helena'))],
      'Helena',
      [['r1', 'APPLIED']],
    ],
    [
      'two concurrent registrations of one id (a faulty device): the conflict rule picks one, the other is kept superseded',
      [
        rec('r1', registered('Helena')),
        rec('r2', registered('Helena P.'), { at: '2026-11-26T10:05:00.000Z' }),
      ],
      'Helena P.',
      [
        ['r1', 'SUPERSEDED'],
        ['r2', 'APPLIED'],
      ],
    ],
    [
      'a registration based on the first one applies in order but changes nothing: a registration is no edit',
      [rec('r1', registered('Helena')), rec('r2', registered('Outra'), { base: 'r1' })],
      'Helena',
      [
        ['r1', 'APPLIED'],
        ['r2', 'NO_EFFECT'],
      ],
    ],
  ];
  for (const [name, events, displayName, outcomes] of table)
    it(name, () => {
      const p = projectAspect('visitor:stu-1', 'visitor', [], events);
      const state = p.state?.kind === 'visitor' ? p.state : null;
      expect(state?.displayName ?? null).to.equal(displayName);
      if (state !== null)
        expect(state).to.deep.include({
          studentId: 'stu-1',
          guardianName: 'Rita',
          classId: 'cls-1',
          allergies: null,
          specialNeeds: 'Usa óculos',
        });
      expect(outcomes.map(([id]) => [id, outcomeOf(p, id)])).to.deep.equal(outcomes);
    });

  it('the fold is the same whatever order the events arrive in', () => {
    const a = rec('r1', registered('Helena'));
    const b = rec('r2', registered('Helena P.'), { at: '2026-11-26T10:05:00.000Z' });
    expect(projectAspect('visitor:stu-1', 'visitor', [a], [b]).state).to.deep.equal(
      projectAspect('visitor:stu-1', 'visitor', [b], [a]).state,
    );
  });
});
