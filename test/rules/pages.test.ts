import { expect } from 'chai';
import fc from 'fast-check';
import {
  decidePage,
  guardianPhones,
  PAGE_LIMITS,
  type PageDecision,
  pageText,
} from '../../src/rules/pages.js';

const NOW = 1_700_000_000_000;
const MIN = 60_000;

describe('decidePage (the per-child page limit)', () => {
  const table: ReadonlyArray<[string, ReadonlyArray<number>, PageDecision]> = [
    ['the first page of a child at a session is allowed', [], { allowed: true }],
    [
      'a second page within two minutes waits for the first one to be two minutes old',
      [NOW - 30_000],
      { allowed: false, reason: 'COOLDOWN', retryAfterSeconds: 90 },
    ],
    ['a page exactly two minutes after the last is allowed', [NOW - 2 * MIN], { allowed: true }],
    [
      'a partial second to wait is rounded up',
      [NOW - 2 * MIN + 1],
      { allowed: false, reason: 'COOLDOWN', retryAfterSeconds: 1 },
    ],
    [
      'the cooldown counts from the newest page, whatever the order given',
      [NOW - 50 * MIN, NOW - MIN, NOW - 10 * MIN],
      { allowed: false, reason: 'COOLDOWN', retryAfterSeconds: 60 },
    ],
    [
      'four pages in the hour leave room for a fifth',
      [NOW - 3 * MIN, NOW - 10 * MIN, NOW - 20 * MIN, NOW - 59 * MIN],
      { allowed: true },
    ],
    [
      'a sixth page in the hour waits until the oldest of the five leaves the hour',
      [NOW - 3 * MIN, NOW - 10 * MIN, NOW - 20 * MIN, NOW - 30 * MIN, NOW - 50 * MIN],
      { allowed: false, reason: 'TOO_MANY_PAGES', retryAfterSeconds: 10 * 60 },
    ],
    [
      'pages older than the hour no longer count',
      [NOW - 3 * MIN, NOW - 10 * MIN, NOW - 20 * MIN, NOW - 30 * MIN, NOW - 60 * MIN, NOW - 90 * MIN],
      { allowed: true },
    ],
    [
      'with more than five in the hour (two instances at once), the wait is for the fifth newest',
      [NOW - 3 * MIN, NOW - 4 * MIN, NOW - 10 * MIN, NOW - 20 * MIN, NOW - 30 * MIN, NOW - 50 * MIN],
      { allowed: false, reason: 'TOO_MANY_PAGES', retryAfterSeconds: 30 * 60 },
    ],
  ];
  for (const [name, sentAt, want] of table)
    it(name, () => expect(decidePage(sentAt, NOW)).to.deep.equal(want));

  it('a page allowed after waiting Retry-After is never refused again for the same history', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 3 * 60 * MIN }), { maxLength: 12 }), (ages) => {
        const sentAt = ages.map((a) => NOW - a);
        const first = decidePage(sentAt, NOW);
        if (first.allowed) return;
        const later = NOW + first.retryAfterSeconds * 1000;
        const second = decidePage(sentAt, later);
        // The other limit may still hold; a limit never refuses twice for the same reason.
        if (!second.allowed) expect(second.reason).to.not.equal(first.reason);
      }),
    );
  });

  it('the limits are one page per two minutes and five an hour', () =>
    expect(PAGE_LIMITS).to.deep.equal({ cooldownMs: 2 * MIN, perWindow: { limit: 5, windowMs: 60 * MIN } }));
});

describe('guardianPhones', () => {
  it('pages each number once, however it is written, and skips entries without digits', () =>
    expect(
      guardianPhones([
        { number: '+55 11 98765-4321' },
        { number: '+5511987654321' },
        { number: '—' },
        { number: '(11) 5555-2222' },
      ]),
    ).to.deep.equal(['+55 11 98765-4321', '(11) 5555-2222']));
});

describe('pageText', () => {
  it("names the child and carries the volunteer's line, or asks the guardian to come", () => {
    expect(pageText('Ana', 'Ela está com febre.')).to.equal('Chamada: Ana — Ela está com febre.');
    expect(pageText('Ana', null)).to.equal('Chamada: Ana — por favor, venha até a sala.');
  });
});
