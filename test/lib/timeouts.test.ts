import { expect } from 'chai';
import { waitAtMost, withTimeout } from '../../src/lib/timeouts.js';

const never = new Promise<never>(() => undefined);

describe('lib: waits bounded in time', () => {
  it('waitAtMost ends when the awaited promise settles, long before the limit', async () => {
    const started = Date.now();
    await waitAtMost(Promise.resolve('done'), 10_000);
    expect(Date.now() - started).to.be.below(1_000);
  });

  it('waitAtMost ends at the limit when the awaited promise never settles', async () => {
    const started = Date.now();
    await waitAtMost(never, 30);
    expect(Date.now() - started).to.be.at.least(25);
  });

  it("waitAtMost rejects with the awaited promise's own error", async () => {
    const failed = waitAtMost(Promise.reject(new Error('refused')), 10_000);
    const error = await failed.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).to.be.instanceOf(Error).with.property('message', 'refused');
  });

  it('waitAtMost ends when its signal aborts, and at once when it was aborted before', async () => {
    const started = Date.now();
    const stop = new AbortController();
    setTimeout(() => stop.abort(), 20);
    await waitAtMost(never, 10_000, stop.signal);
    await waitAtMost(never, 10_000, AbortSignal.abort());
    expect(Date.now() - started).to.be.below(1_000);
  });

  it('withTimeout gives the value when it comes in time', async () => {
    expect(await withTimeout(Promise.resolve(42), 10_000)).to.equal(42);
  });

  it('withTimeout rejects naming the limit when the value does not come in time', async () => {
    const error = await withTimeout(never, 20).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).to.be.instanceOf(Error).with.property('message', 'timed out after 20 ms');
  });
});
