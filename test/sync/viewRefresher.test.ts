/** The views' refresher: after writes pause, or at the latest a bound after the first; errors reported. */
import { expect } from 'chai';
import { type RefresherTimers, viewRefresher } from '../../src/sync/viewRefresher.js';

/** A clock the test moves; timers fire as it passes them. */
const manualTimers = () => {
  let clock = 0;
  let pending: Array<{ at: number; fn: () => void; live: boolean }> = [];
  const timers: RefresherTimers = {
    now: () => clock,
    after: (ms, fn) => {
      const t = { at: clock + ms, fn, live: true };
      pending.push(t);
      return () => {
        t.live = false;
      };
    },
  };
  const advance = (ms: number) => {
    clock += ms;
    const due = pending.filter((t) => t.live && t.at <= clock);
    pending = pending.filter((t) => t.live && t.at > clock);
    for (const t of due) t.fn();
  };
  return { timers, advance };
};

describe('viewRefresher', () => {
  it('refreshes once writes pause, one refresh for a burst', async () => {
    const m = manualTimers();
    let calls = 0;
    const r = viewRefresher(
      async () => {
        calls += 1;
      },
      { quietMs: 100, maxWaitMs: 1_000, onError: () => {}, timers: m.timers },
    );
    for (let i = 0; i < 5; i += 1) {
      r.poke();
      m.advance(50);
    }
    expect(calls).to.equal(0);
    m.advance(50);
    expect(calls).to.equal(1);
    m.advance(1_000);
    expect(calls).to.equal(1);
    await r.idle();
  });

  it('under a steady stream of writes refreshes at the latest the bound after the first', async () => {
    const m = manualTimers();
    let calls = 0;
    const r = viewRefresher(
      async () => {
        calls += 1;
      },
      { quietMs: 100, maxWaitMs: 300, onError: () => {}, timers: m.timers },
    );
    for (let i = 0; i < 10; i += 1) {
      r.poke();
      m.advance(50);
    }
    // 500 ms of writes every 50 ms: refreshed at 300, then the next bound runs from the write after it.
    expect(calls).to.equal(1);
    m.advance(100);
    expect(calls).to.equal(2);
    await r.idle();
  });

  it('reports a failed refresh, and refreshes again at the next write', async () => {
    const m = manualTimers();
    const errors: unknown[] = [];
    let fail = true;
    let calls = 0;
    const r = viewRefresher(
      async () => {
        calls += 1;
        if (fail) throw new Error('couch down');
      },
      { quietMs: 10, maxWaitMs: 100, onError: (e) => errors.push(e), timers: m.timers },
    );
    r.poke();
    m.advance(10);
    await r.idle();
    expect(errors).to.have.length(1);
    fail = false;
    r.poke();
    m.advance(10);
    await r.idle();
    expect(calls).to.equal(2);
    expect(errors).to.have.length(1);
  });

  it('a stop drops the refresh not yet due', async () => {
    const m = manualTimers();
    let calls = 0;
    const r = viewRefresher(
      async () => {
        calls += 1;
      },
      { quietMs: 100, maxWaitMs: 1_000, onError: () => {}, timers: m.timers },
    );
    r.poke();
    await r.idle();
    m.advance(1_000);
    expect(calls).to.equal(0);
  });
});
