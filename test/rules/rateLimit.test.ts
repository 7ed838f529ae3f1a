import { expect } from 'chai';
import {
  decideRateLimit,
  LOGIN_POLICY,
  type RateLimitDecision,
  type RateLimitPolicy,
  REFRESH_POLICY,
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
