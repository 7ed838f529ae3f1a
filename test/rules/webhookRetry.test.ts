import { expect } from 'chai';
import {
  type AttemptEnd,
  decideRetry,
  WEBHOOK_RETRY,
  type WebhookRetryPolicy,
  withinBudget,
} from '../../src/rules/webhookRetry.js';

const POLICY: WebhookRetryPolicy = {
  attempts: 4,
  attemptTimeoutMs: 1_000,
  firstDelayMs: 400,
  maxDelayMs: 1_000,
  deadlineMs: 10_000,
};

describe('retrying a webhook message', () => {
  const table: ReadonlyArray<[string, AttemptEnd, boolean]> = [
    ['a 2xx is delivered', { status: 204 }, false],
    ['no answer (timeout, refused connection) may pass', { status: null }, true],
    ['500 may pass', { status: 500 }, true],
    ['503 may pass', { status: 503 }, true],
    ['429 may pass', { status: 429 }, true],
    ['408 may pass', { status: 408 }, true],
    ["400 is the gateway's word", { status: 400 }, false],
    ["401 is the gateway's word", { status: 401 }, false],
    ["410 is the gateway's word", { status: 410 }, false],
  ];
  for (const [what, end, retried] of table) {
    it(`${what}: ${retried ? 'tried again' : 'not tried again'}`, () => {
      expect(decideRetry(1, end, 0, 0, POLICY).retry).to.equal(retried);
    });
  }

  it('waits twice as long after each failure, up to the ceiling, jittered over its upper half', () => {
    const delays = [1, 2, 3].map((made) => {
      const low = decideRetry(made, { status: 502 }, 0, 0, POLICY);
      const high = decideRetry(made, { status: 502 }, 0, 0.999_999, POLICY);
      return [low.retry ? low.delayMs : -1, high.retry ? high.delayMs : -1];
    });
    expect(delays).to.deep.equal([
      [200, 400],
      [400, 800],
      [500, 1_000],
    ]);
  });

  it('stops after the last attempt', () => {
    expect(decideRetry(4, { status: 502 }, 0, 0, POLICY)).to.deep.equal({ retry: false });
  });

  it('starts no retry that could not end before the deadline', () => {
    // 8,500 ms spent, a 200 ms wait and a 1,000 ms attempt would end at 9,700: allowed; at 9,000 not.
    expect(decideRetry(1, { status: null }, 8_500, 0, POLICY).retry).to.equal(true);
    expect(decideRetry(1, { status: null }, 9_000, 0, POLICY).retry).to.equal(false);
  });

  it('by default, after two attempts that timed out there is no third: a request is held about 6.5 s at most', () => {
    const { attemptTimeoutMs, firstDelayMs } = WEBHOOK_RETRY;
    expect(decideRetry(1, { status: null }, attemptTimeoutMs, 0.999).retry).to.equal(true);
    expect(decideRetry(2, { status: null }, 2 * attemptTimeoutMs + firstDelayMs, 0)).to.deep.equal({
      retry: false,
    });
  });

  describe("within a request's deadline (decision 0046)", () => {
    const budgets: ReadonlyArray<[string, number | undefined, number, number]> = [
      // [what, time left, attempt timeout, retry deadline], with a reserve of 1,000 ms
      ['no deadline: the policy as it is', undefined, 1_000, 10_000],
      ['plenty left: the policy as it is', 20_000, 1_000, 10_000],
      ['5 s left: retries end by 4 s', 5_000, 1_000, 4_000],
      ['1.5 s left: one short attempt', 1_500, 500, 500],
      ['less than the reserve: an attempt that fails at once', 800, 1, 0],
      [
        'a fraction of a millisecond left over: whole milliseconds (a timer takes no fraction)',
        1_299.4,
        299,
        299,
      ],
    ];
    for (const [what, left, attemptTimeoutMs, deadlineMs] of budgets)
      it(what, () =>
        expect(withinBudget(POLICY, left, 1_000)).to.deep.equal({ ...POLICY, attemptTimeoutMs, deadlineMs }),
      );

    it('with the default policy and the default 6 s deadline, a gateway that never answers gets one attempt', () => {
      const bounded = withinBudget(WEBHOOK_RETRY, 6_000, 1_000);
      expect(bounded.attemptTimeoutMs).to.equal(WEBHOOK_RETRY.attemptTimeoutMs);
      expect(decideRetry(1, { status: null }, bounded.attemptTimeoutMs, 0, bounded)).to.deep.equal({
        retry: false,
      });
    });

    it('a gateway that answers 503 at once is still tried again within it', () => {
      const bounded = withinBudget(WEBHOOK_RETRY, 6_000, 1_000);
      expect(decideRetry(1, { status: 503 }, 50, 0.5, bounded).retry).to.equal(true);
    });
  });
});
