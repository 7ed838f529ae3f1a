import { expect } from 'chai';
import { TestScheduler } from 'rxjs/testing';
import { idempotencyPurge$, PURGE_PERIOD_MS } from '../../src/jobs/idempotencyPurge.js';

const newScheduler = () =>
  new TestScheduler((actual, expected) => {
    expect(actual).to.deep.equal(expected);
  });

describe('idempotency purge schedule (marbles)', () => {
  it('purges once a period, with the clock at that moment', () => {
    const asked: number[] = [];
    newScheduler().run(({ cold, expectObservable }) => {
      const purge = (now: number) => {
        asked.push(now);
        return cold('-a|', { a: 2 });
      };
      const clock = () => new Date(1_000);
      expectObservable(idempotencyPurge$(purge, clock, 10), '^ 35ms !').toBe('11ms a 9ms a 9ms a', {
        a: { ok: true, purged: 2 },
      });
    });
    expect(asked).to.deep.equal([1_000, 1_000, 1_000]);
  });

  it('reports a failed run and keeps the schedule going', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      let runs = 0;
      const purge = () => {
        runs += 1;
        return runs === 1 ? cold<number>('-#', undefined, new TypeError('disk')) : cold('-a|', { a: 1 });
      };
      expectObservable(
        idempotencyPurge$(purge, () => new Date(0), 10),
        '^ 25ms !',
      ).toBe('11ms e 9ms a', {
        e: { ok: false, error: 'TypeError' },
        a: { ok: true, purged: 1 },
      });
    });
  });

  it('does not start a run while the previous one is still going', () => {
    newScheduler().run(({ cold, expectObservable }) => {
      let runs = 0;
      const purge = () => {
        runs += 1;
        return cold('15ms a|', { a: runs });
      };
      // Ticks at 10, 20, 30, 40: the 20 tick falls inside the first run and is skipped.
      expectObservable(
        idempotencyPurge$(purge, () => new Date(0), 10),
        '^ 50ms !',
      ).toBe('25ms a 19ms b', {
        a: { ok: true, purged: 1 },
        b: { ok: true, purged: 2 },
      });
    });
  });
});

describe('idempotency purge period', () => {
  it('runs at least once a minute, so each run indexes at most a minute of ledger writes', () => {
    expect(PURGE_PERIOD_MS).to.be.at.most(60_000);
  });
});
