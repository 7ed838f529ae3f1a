/** Deactivating and reactivating nuclei, classes and sessions: one table for the rule, one for placement. */
import { expect } from 'chai';
import * as E from 'fp-ts/lib/Either.js';
import type { ActivityStatus } from '../../src/domain/classes.js';
import {
  type Deactivatable,
  decideStatusChange,
  placementRefusal,
  type StatusChange,
  type StatusFacts,
  type StatusRefusal,
} from '../../src/rules/deactivation.js';

const active: StatusFacts = { status: 'ACTIVE', parent: null, activeClassIds: [] };
const deactivated: StatusFacts = { ...active, status: 'DEACTIVATED' };

describe('decideStatusChange: deactivating and reactivating (table)', () => {
  const cases: ReadonlyArray<{
    readonly name: string;
    readonly kind: Deactivatable;
    readonly change: StatusChange;
    readonly facts: StatusFacts;
    readonly expected: E.Either<StatusRefusal, ActivityStatus>;
  }> = [
    {
      name: 'an active class is deactivated',
      kind: 'class',
      change: 'DEACTIVATE',
      facts: { ...active, parent: 'ACTIVE' },
      expected: E.right('DEACTIVATED'),
    },
    {
      name: 'an active session is deactivated, whatever its class',
      kind: 'session',
      change: 'DEACTIVATE',
      facts: { ...active, parent: 'DEACTIVATED' },
      expected: E.right('DEACTIVATED'),
    },
    {
      name: 'a second deactivation is refused, so the client learns nothing changed',
      kind: 'session',
      change: 'DEACTIVATE',
      facts: deactivated,
      expected: E.left({ reason: 'ALREADY_DEACTIVATED' }),
    },
    {
      name: 'a nucleus without active classes is deactivated',
      kind: 'nucleus',
      change: 'DEACTIVATE',
      facts: active,
      expected: E.right('DEACTIVATED'),
    },
    {
      name: 'a nucleus with active classes is refused, naming them in order: nothing cascades',
      kind: 'nucleus',
      change: 'DEACTIVATE',
      facts: { ...active, activeClassIds: ['c2', 'c1'] },
      expected: E.left({ reason: 'NUCLEUS_HAS_ACTIVE_CLASSES', classIds: ['c1', 'c2'] }),
    },
    {
      name: 'an already deactivated nucleus says so before anything about its classes',
      kind: 'nucleus',
      change: 'DEACTIVATE',
      facts: { ...deactivated, activeClassIds: ['c1'] },
      expected: E.left({ reason: 'ALREADY_DEACTIVATED' }),
    },
    {
      name: 'a deactivated nucleus is reactivated; its classes stay as they are',
      kind: 'nucleus',
      change: 'REACTIVATE',
      facts: deactivated,
      expected: E.right('ACTIVE'),
    },
    {
      name: 'reactivating what is active is refused',
      kind: 'class',
      change: 'REACTIVATE',
      facts: { ...active, parent: 'DEACTIVATED' },
      expected: E.left({ reason: 'ALREADY_ACTIVE' }),
    },
    {
      name: 'a class is reactivated in an active nucleus',
      kind: 'class',
      change: 'REACTIVATE',
      facts: { ...deactivated, parent: 'ACTIVE' },
      expected: E.right('ACTIVE'),
    },
    {
      name: 'a class without a nucleus is reactivated',
      kind: 'class',
      change: 'REACTIVATE',
      facts: deactivated,
      expected: E.right('ACTIVE'),
    },
    {
      name: 'a class is not reactivated in a deactivated nucleus',
      kind: 'class',
      change: 'REACTIVATE',
      facts: { ...deactivated, parent: 'DEACTIVATED' },
      expected: E.left({ reason: 'NUCLEUS_DEACTIVATED' }),
    },
    {
      name: 'a session is not reactivated in a deactivated class',
      kind: 'session',
      change: 'REACTIVATE',
      facts: { ...deactivated, parent: 'DEACTIVATED' },
      expected: E.left({ reason: 'CLASS_DEACTIVATED' }),
    },
    {
      name: 'a session is reactivated in an active class',
      kind: 'session',
      change: 'REACTIVATE',
      facts: { ...deactivated, parent: 'ACTIVE' },
      expected: E.right('ACTIVE'),
    },
  ];
  for (const c of cases)
    it(c.name, () => expect(decideStatusChange(c.kind, c.change, c.facts)).to.deep.equal(c.expected));
});

describe('placementRefusal: what a deactivated parent takes no more of (table)', () => {
  const table: ReadonlyArray<readonly [Deactivatable, ActivityStatus | null, StatusRefusal | undefined]> = [
    ['class', 'DEACTIVATED', { reason: 'NUCLEUS_DEACTIVATED' }],
    ['class', 'ACTIVE', undefined],
    ['class', null, undefined],
    ['session', 'DEACTIVATED', { reason: 'CLASS_DEACTIVATED' }],
    ['session', 'ACTIVE', undefined],
    // A nucleus belongs to nothing.
    ['nucleus', 'DEACTIVATED', undefined],
  ];
  for (const [kind, parent, expected] of table)
    it(`a ${kind} under ${parent ?? 'nothing'}: ${expected?.reason ?? 'placed'}`, () =>
      expect(placementRefusal(kind, parent)).to.deep.equal(expected));
});
