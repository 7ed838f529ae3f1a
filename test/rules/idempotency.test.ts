import { expect } from 'chai';
import {
  type ClaimDecision,
  decideClaim,
  type LedgerEntryState,
  shouldStore,
} from '../../src/rules/idempotency.js';

const NOW = 1_000_000;
const pending = (
  fingerprint: string,
  leaseUntil: number,
  expiresAt = NOW + 86_400_000,
): LedgerEntryState => ({
  state: 'pending',
  fingerprint,
  leaseUntil,
  expiresAt,
});
const complete = (fingerprint: string, expiresAt: number): LedgerEntryState => ({
  state: 'complete',
  fingerprint,
  expiresAt,
});

describe('decideClaim (idempotency rule)', () => {
  const table: ReadonlyArray<[string, LedgerEntryState | undefined, string, ClaimDecision]> = [
    ['an unused key is claimed', undefined, 'A', 'claim'],
    ['a finished request with the same payload is replayed', complete('A', NOW + 1), 'A', 'replay'],
    [
      'a finished request with another payload is rejected',
      complete('A', NOW + 1),
      'B',
      'reject-different-payload',
    ],
    ['a key past its retention is new, whatever the payload', complete('A', NOW), 'B', 'reclaim'],
    ['a key past its retention is new for the same payload too', complete('A', NOW - 1), 'A', 'reclaim'],
    ['a running request with the same payload is waited for', pending('A', NOW + 1), 'A', 'wait'],
    [
      'a running request with another payload is rejected at once',
      pending('A', NOW + 1),
      'B',
      'reject-different-payload',
    ],
    ['a claim whose lease ran out (owner died) is taken over', pending('A', NOW), 'A', 'reclaim'],
    ['a dead claim is taken over even with another payload', pending('A', NOW - 5), 'B', 'reclaim'],
  ];
  for (const [what, existing, fingerprint, expected] of table) {
    it(`${what} → ${expected}`, () => {
      expect(decideClaim(existing, fingerprint, NOW)).to.equal(expected);
    });
  }

  const statuses: ReadonlyArray<[number, boolean]> = [
    [200, true],
    [201, true],
    [202, true],
    [400, true],
    [404, true],
    [409, true],
    [423, true],
    [429, false],
    [500, false],
    [502, false],
    [503, false],
  ];
  for (const [status, stored] of statuses) {
    it(`a ${status} response is ${stored ? 'stored for replay' : 'not stored, so a retry runs again'}`, () => {
      expect(shouldStore(status)).to.equal(stored);
    });
  }
});
