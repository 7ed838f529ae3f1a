/** The views' refresher: one refresh for a burst of pokes, one more for pokes during a refresh, errors reported. */
import { expect } from 'chai';
import { viewRefresher } from '../../src/sync/viewRefresher.js';

/** A refresh the test finishes by hand. */
const manual = () => {
  const pending: Array<() => void> = [];
  let calls = 0;
  return {
    refresh: () => {
      calls += 1;
      return new Promise<void>((resolve) => pending.push(resolve));
    },
    finish: () => pending.shift()?.(),
    calls: () => calls,
  };
};

const tick = () => new Promise<void>((r) => setImmediate(r));

describe('viewRefresher', () => {
  it('a burst of pokes is one refresh, and pokes during it one more after it; then it rests', async () => {
    const m = manual();
    const r = viewRefresher(m.refresh, { gapMs: 0, onError: () => {}, sleep: async () => {} });
    r.poke();
    r.poke();
    r.poke();
    await tick();
    expect(m.calls()).to.equal(1);
    r.poke();
    r.poke();
    m.finish();
    await tick();
    expect(m.calls()).to.equal(2);
    m.finish();
    await r.idle();
    expect(m.calls()).to.equal(2);
    r.poke();
    await tick();
    expect(m.calls()).to.equal(3);
    m.finish();
    await r.idle();
  });

  it('waits the gap between refreshes, and a failed refresh is reported and retried on the next poke', async () => {
    const gaps: number[] = [];
    const errors: unknown[] = [];
    let fail = true;
    let calls = 0;
    const r = viewRefresher(
      async () => {
        calls += 1;
        if (fail) throw new Error('couch down');
      },
      { gapMs: 250, onError: (e) => errors.push(e), sleep: async (ms) => void gaps.push(ms) },
    );
    r.poke();
    await r.idle();
    expect(errors).to.have.length(1);
    expect(gaps).to.deep.equal([250]);
    fail = false;
    r.poke();
    await r.idle();
    expect(calls).to.equal(2);
    expect(errors).to.have.length(1);
  });
});
