import { expect } from 'chai';
import fc from 'fast-check';
import {
  decideRateLimit,
  decideSlidingWindow,
  LOGIN_POLICY,
  type RateLimitDecision,
  type RateLimitPolicy,
  REFRESH_POLICY,
  rollCounts,
  windowIndex,
} from '../../src/rules/rateLimit.js';

const NOW = 1_700_000_000_000;
const FIVE_A_MINUTE: RateLimitPolicy = { limit: 5, windowMs: 60_000 };

describe('decideRateLimit (sliding-window rule)', () => {
  const table: ReadonlyArray<[string, number, number | undefined, RateLimitDecision]> = [
    [
      'the first request of a window is allowed, four remain until it leaves the window',
      1,
      NOW,
      { allowed: true, quota: { remaining: 4, resetSeconds: 60 } },
    ],
    [
      'the last request within the limit is allowed, none remains until the oldest leaves',
      5,
      NOW - 59_000,
      { allowed: true, quota: { remaining: 0, resetSeconds: 1 } },
    ],
    [
      'one request over the limit is refused until the request that frees a place leaves the window',
      6,
      NOW - 15_000,
      { allowed: false, retryAfterSeconds: 45 },
    ],
    ['a partial second to wait is rounded up', 6, NOW - 15_001, { allowed: false, retryAfterSeconds: 45 }],
    [
      'a refusal always asks for at least one second',
      6,
      NOW - 59_999,
      { allowed: false, retryAfterSeconds: 1 },
    ],
    [
      'a freeing request already outside the window still asks for one second',
      6,
      NOW - 61_000,
      { allowed: false, retryAfterSeconds: 1 },
    ],
    [
      'a burst within the same millisecond waits the whole window',
      6,
      NOW,
      { allowed: false, retryAfterSeconds: 60 },
    ],
    [
      'far over the limit the wait still depends only on the request that frees a place',
      40,
      NOW - 30_000,
      { allowed: false, retryAfterSeconds: 30 },
    ],
    [
      'without a known freeing request the whole window is to be waited',
      6,
      undefined,
      { allowed: false, retryAfterSeconds: 60 },
    ],
  ];
  for (const [what, rank, freesPlaceAt, expected] of table) {
    it(`${what} (rank ${rank})`, () => {
      expect(decideRateLimit({ rank, freesPlaceAt, now: NOW, policy: FIVE_A_MINUTE })).to.deep.equal(
        expected,
      );
    });
  }

  it('rounds a window that is not a whole number of seconds up when the freeing request is unknown', () => {
    expect(
      decideRateLimit({
        rank: 2,
        freesPlaceAt: undefined,
        now: NOW,
        policy: { limit: 1, windowMs: 1_500 },
      }),
    ).to.deep.equal({ allowed: false, retryAfterSeconds: 2 });
  });

  const policies: ReadonlyArray<[string, RateLimitPolicy, number]> = [
    ['login', LOGIN_POLICY, 5],
    ['refresh', REFRESH_POLICY, 10],
  ];
  for (const [name, policy, limit] of policies) {
    it(`the ${name} policy allows ${limit} requests a minute and refuses the next`, () => {
      expect(policy).to.deep.equal({ limit, windowMs: 60_000 });
      const at = (rank: number) => decideRateLimit({ rank, freesPlaceAt: NOW, now: NOW, policy });
      expect(at(limit)).to.deep.equal({ allowed: true, quota: { remaining: 0, resetSeconds: 60 } });
      expect(at(limit + 1)).to.deep.equal({ allowed: false, retryAfterSeconds: 60 });
    });
  }
});

describe('decideSlidingWindow (the per-device rule, counted in memory)', () => {
  const TEN_A_MINUTE: RateLimitPolicy = { limit: 10, windowMs: 60_000 };
  const decide = (current: number, previous: number, elapsedMs: number, policy = TEN_A_MINUTE) =>
    decideSlidingWindow({ counts: { current, previous }, elapsedMs, policy });

  it('allows up to the limit in a fresh window and says what remains until the window ends', () => {
    expect(decide(1, 0, 0)).to.deep.equal({ allowed: true, quota: { remaining: 9, resetSeconds: 60 } });
    expect(decide(10, 0, 45_500)).to.deep.equal({ allowed: true, quota: { remaining: 0, resetSeconds: 15 } });
  });

  it('weighs the previous window by the share the sliding window still overlaps', () => {
    // 20 last minute, 15 s into this one: 20 × 45/60 = 15 still count, over 10 on their own. With this
    // refusal and the next request there is room for 8 of them: 20 × (60 − t)/60 = 8 at t = 36 s, 21 s on.
    expect(decide(1, 20, 15_000)).to.deep.equal({ allowed: false, retryAfterSeconds: 21 });
    // 45 s in: 20 × 15/60 = 5, plus this one: 6 of 10.
    expect(decide(1, 20, 45_000)).to.deep.equal({ allowed: true, quota: { remaining: 4, resetSeconds: 15 } });
  });

  it('a refusal with this window full waits into the next one, until its count has faded enough', () => {
    // 11 counted (the refusal included), 30 s in: from the next window on they weigh 11 × (60 − t)/60,
    // which is 9 (room for one more) at t = 60 × 2/11 ≈ 10.9 s: 30 + 10.9 s, rounded up.
    expect(decide(11, 0, 30_000)).to.deep.equal({ allowed: false, retryAfterSeconds: 41 });
  });

  it('a limit of one waits until the refused window has faded entirely', () => {
    expect(decide(2, 0, 0, { limit: 1, windowMs: 60_000 })).to.deep.equal({
      allowed: false,
      retryAfterSeconds: 120,
    });
  });

  it('rolls counts forward by window: one on the current becomes the previous, two on nothing is left', () => {
    const counts = { current: 7, previous: 3 };
    expect(rollCounts(counts, 5, 5)).to.deep.equal(counts);
    expect(rollCounts(counts, 5, 6)).to.deep.equal({ current: 0, previous: 7 });
    expect(rollCounts(counts, 5, 8)).to.deep.equal({ current: 0, previous: 0 });
    expect(windowIndex(119_999, 60_000)).to.equal(1);
    expect(windowIndex(120_000, 60_000)).to.equal(2);
  });

  it('whoever obeys Retry-After is allowed then, and not a second earlier (no other request between)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1_000 }),
        fc.integer({ min: 1, max: 600 }),
        fc.integer({ min: 0, max: 3_000 }),
        fc.integer({ min: 0, max: 3_000 }),
        fc.double({ min: 0, max: 0.9999, noNaN: true }),
        (limit, windowSeconds, current, previous, fraction) => {
          const policy = { limit, windowMs: windowSeconds * 1000 };
          const elapsedMs = Math.floor(fraction * policy.windowMs);
          const verdict = decideSlidingWindow({
            counts: { current: current + 1, previous },
            elapsedMs,
            policy,
          });
          if (verdict.allowed) return;
          const retryAt = (seconds: number) => {
            const at = elapsedMs + seconds * 1000;
            const index = windowIndex(at, policy.windowMs);
            const rolled = rollCounts({ current: current + 1, previous }, 0, index);
            return decideSlidingWindow({
              counts: { current: rolled.current + 1, previous: rolled.previous },
              elapsedMs: at - index * policy.windowMs,
              policy,
            }).allowed;
          };
          expect(retryAt(verdict.retryAfterSeconds), 'allowed after Retry-After').to.equal(true);
          if (verdict.retryAfterSeconds > 1) expect(retryAt(verdict.retryAfterSeconds - 1)).to.equal(false);
        },
      ),
      { numRuns: 2_000 },
    );
  });
});
