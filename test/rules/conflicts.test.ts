import { expect } from 'chai';
import fc from 'fast-check';
import { type AspectEvent, resolveAll, resolveAspect } from '../../src/rules/conflicts.js';

const ev = (
  eventId: string,
  actorRole: string,
  clientTimestamp: string,
  baseVersion: string | null = null,
  aspect = 'student:1/displayName',
): AspectEvent => ({
  eventId,
  aspect,
  baseVersion,
  actorRole,
  clientTimestamp,
});

describe('conflict rule (ADMIN precedence)', () => {
  const table: ReadonlyArray<[string, AspectEvent[], string[], string[], string[]]> = [
    [
      'an ADMIN edit beats a concurrent, later CHAMADOR edit',
      [ev('a', 'ADMIN', '10:00'), ev('c', 'CHAMADOR', '11:00')],
      ['a'],
      ['c'],
      ['ADMIN_PRECEDENCE a>c'],
    ],
    [
      'between equals the later clientTimestamp wins',
      [ev('x', 'CHAMADOR', '10:00'), ev('y', 'CHAMADOR', '11:00')],
      ['y'],
      ['x'],
      ['LAST_WRITER_WINS y>x'],
    ],
    [
      'same timestamp, same rank: the greater eventId wins',
      [ev('m', 'CADASTRO', '10:00'), ev('n', 'CADASTRO', '10:00')],
      ['n'],
      ['m'],
      ['LAST_WRITER_WINS n>m'],
    ],
    [
      'two ADMINs: the later wins by time',
      [ev('a1', 'ADMIN', '09:00'), ev('a2', 'ADMIN', '09:30')],
      ['a2'],
      ['a1'],
      ['LAST_WRITER_WINS a2>a1'],
    ],
    [
      'an event based on the winner is not a conflict: precedence never freezes an aspect',
      [ev('a', 'ADMIN', '10:00'), ev('c', 'CHAMADOR', '12:00', 'a')],
      ['a', 'c'],
      [],
      [],
    ],
    [
      'an event built on a loser loses with it',
      [ev('a', 'ADMIN', '10:00'), ev('c1', 'CHAMADOR', '11:00'), ev('c2', 'CHAMADOR', '12:00', 'c1')],
      ['a'],
      ['c1', 'c2'],
      ['ADMIN_PRECEDENCE a>c1', 'BASED_ON_SUPERSEDED a>c2'],
    ],
    [
      'sequential edits by anyone simply apply in order',
      [ev('c1', 'CHAMADOR', '10:00'), ev('c2', 'RELATORIOS', '09:00', 'c1'), ev('a', 'ADMIN', '08:00', 'c2')],
      ['c1', 'c2', 'a'],
      [],
      [],
    ],
    ['an event whose base has not arrived waits', [ev('c2', 'CHAMADOR', '12:00', 'c1')], [], [], []],
  ];
  for (const [what, events, applied, superseded, conflicts] of table) {
    it(what, () => {
      const r = resolveAspect('student:1/displayName', events);
      expect(r.applied).to.deep.equal(applied);
      expect([...r.superseded].sort()).to.deep.equal([...superseded].sort());
      expect(r.conflicts.map((c) => `${c.policy} ${c.winnerEventId}>${c.loserEventId}`)).to.deep.equal(
        conflicts,
      );
    });
  }

  it('keeps an event whose base is missing waiting, and applies it once the base arrives', () => {
    expect(resolveAspect('s', [ev('c2', 'CHAMADOR', '12:00', 'c1', 's')]).waiting).to.deep.equal(['c2']);
    expect(
      resolveAspect('s', [ev('c2', 'CHAMADOR', '12:00', 'c1', 's'), ev('c1', 'CHAMADOR', '11:00', null, 's')])
        .applied,
    ).to.deep.equal(['c1', 'c2']);
  });

  it('property: any arrival order of the same events gives the same result (convergence)', () => {
    const roles = fc.constantFrom('ADMIN', 'CHAMADOR', 'CADASTRO', 'RELATORIOS');
    const eventsArb = fc
      .array(
        fc.record({
          role: roles,
          minute: fc.integer({ min: 0, max: 59 }),
          aspect: fc.constantFrom('a', 'b'),
          baseIndex: fc.integer({ min: -1, max: 20 }),
        }),
        {
          minLength: 1,
          maxLength: 20,
        },
      )
      .map((raw) =>
        raw.map((r, i) => {
          const base = r.baseIndex >= 0 && r.baseIndex < i ? raw[r.baseIndex] : undefined;
          return ev(
            `e${String(i).padStart(2, '0')}`,
            r.role,
            `10:${String(r.minute).padStart(2, '0')}`,
            base !== undefined && base.aspect === r.aspect
              ? `e${String(r.baseIndex).padStart(2, '0')}`
              : null,
            r.aspect,
          );
        }),
      );
    fc.assert(
      fc.property(eventsArb, fc.integer(), (events, seed) => {
        const shuffled = [...events].sort(
          (x, y) => ((x.eventId.charCodeAt(2) * 31 + seed) % 7) - ((y.eventId.charCodeAt(2) * 31 + seed) % 7),
        );
        expect(JSON.stringify([...resolveAll(shuffled)])).to.equal(JSON.stringify([...resolveAll(events)]));
      }),
      { numRuns: 500 },
    );
  });
});
