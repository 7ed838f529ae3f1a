/** The deadline carried by the async context (decision 0046): its arithmetic, then its three rules. */
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'chai';
import {
  currentDeadline,
  DeadlinePassed,
  deadlineSignal,
  detached,
  remainingMs,
  runWithin,
  startDeadline,
  timeLeftMs,
  untilDeadline,
} from '../../src/lib/deadline.js';

const settled = <A>(p: Promise<A>): Promise<{ value: A } | { error: unknown }> =>
  p.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );

describe('a deadline carried by the async context', () => {
  describe('arithmetic', () => {
    const remaining: ReadonlyArray<[string, number, number, number]> = [
      ['nothing elapsed', 6000, 0, 6000],
      ['part elapsed', 6000, 2500, 3500],
      ['exactly spent', 6000, 6000, 0],
      ['overspent: never below 0', 6000, 7200, 0],
    ];
    for (const [name, limit, elapsed, expected] of remaining)
      it(`remainingMs: ${name}`, () => expect(remainingMs(limit, elapsed)).to.equal(expected));
  });

  describe('context', () => {
    it('is seen by everything the work starts, and by nothing outside it', async () => {
      const deadline = startDeadline(5_000);
      const inside = await runWithin(deadline, async () => {
        await sleep(1);
        return { later: currentDeadline(), shared: detached(() => currentDeadline()) };
      });
      deadline.end();
      expect(inside.later).to.equal(deadline);
      expect(inside.shared).to.equal(undefined);
      expect(currentDeadline()).to.equal(undefined);
      expect(timeLeftMs()).to.equal(undefined);
    });

    it('tells how much time is left, less as time passes', async () => {
      const deadline = startDeadline(5_000, 1_000);
      const [first, second] = await runWithin(deadline, async () => {
        const a = timeLeftMs() ?? -1;
        await sleep(30);
        return [a, timeLeftMs() ?? -1];
      });
      deadline.end();
      expect(first).to.be.at.most(1_000).and.above(second);
      expect(second).to.be.at.least(0);
    });
  });

  describe('firing', () => {
    it('fires when the work is still running at its deadline, with DeadlinePassed as the reason', async () => {
      const deadline = startDeadline(20);
      await deadline.passed;
      expect(deadline.fired()).to.equal(true);
      expect(deadline.signal.reason).to.be.instanceOf(DeadlinePassed);
    });

    it('never fires once the work has ended', async () => {
      const deadline = startDeadline(20);
      deadline.end();
      await sleep(60);
      expect(deadline.fired()).to.equal(false);
      expect(deadline.signal.aborted).to.equal(false);
    });

    it('gives a call in flight the signal, and a call after it fired none (the clean-up runs)', async () => {
      const deadline = startDeadline(20);
      const before = runWithin(deadline, () => deadlineSignal());
      await deadline.passed;
      const after = runWithin(deadline, () => deadlineSignal());
      expect(before).to.equal(deadline.signal);
      expect(after).to.equal(undefined);
    });
  });

  describe('untilDeadline', () => {
    it('gives the value when it comes first', async () => {
      const deadline = startDeadline(5_000);
      const r = await settled(runWithin(deadline, () => untilDeadline(sleep(5, 'stored'))));
      deadline.end();
      expect(r).to.deep.equal({ value: 'stored' });
    });

    it('gives the failure when it comes first', async () => {
      const deadline = startDeadline(5_000);
      const refused = new Error('refused');
      const r = await settled(runWithin(deadline, () => untilDeadline(Promise.reject(refused))));
      deadline.end();
      expect(r).to.deep.equal({ error: refused });
    });

    it('stops waiting at the deadline, while the work waited on goes on', async () => {
      const deadline = startDeadline(20);
      let done = false;
      const slow = sleep(80).then(() => {
        done = true;
      });
      const r = await settled(runWithin(deadline, () => untilDeadline(slow)));
      expect('error' in r && r.error).to.be.instanceOf(DeadlinePassed);
      expect(done).to.equal(false);
      await slow;
      expect(done).to.equal(true);
    });

    it('waits in full outside a deadline', async () => {
      expect(await settled(untilDeadline(sleep(30, 'whole')))).to.deep.equal({ value: 'whole' });
    });
  });
});
