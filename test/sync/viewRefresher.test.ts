/** The views' refresher: after writes pause, or at the latest a bound after the first; errors reported. */
import { expect } from 'chai';
import type { Observable } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { viewRefresher, viewRefreshes$ } from '../../src/sync/viewRefresher.js';

/**
 * Runs `pokes` (a marble of student writes) through the refresher, quiet 3 frames and bounded at 8,
 * each refresh the next of `refreshes` (cold marbles, the last repeated); returns what the test checks.
 */
const refreshing = (
  pokes: string,
  refreshes: ReadonlyArray<string>,
  expected: string,
  unsubscribe?: string,
) => {
  const errors: unknown[] = [];
  const started: number[] = [];
  new TestScheduler((actual, want) => {
    expect(actual).to.deep.equal(want);
  }).run(({ hot, cold, expectObservable }) => {
    const refresh = (): Observable<unknown> => {
      started.push(started.length);
      return cold(refreshes[Math.min(started.length - 1, refreshes.length - 1)] ?? '(r|)');
    };
    const stream = viewRefreshes$(hot(pokes), refresh, {
      quietMs: 3,
      maxWaitMs: 8,
      onError: (e) => errors.push(e),
    });
    expectObservable(stream, unsubscribe).toBe(expected, { d: undefined });
  });
  return { errors, refreshes: started.length };
};

describe('the views refresher (marbles)', () => {
  it('refreshes once writes pause: one refresh for a burst', () => {
    // Writes at 0, 2, 4: quiet from 4, the refresh starts at 7 and ends at once.
    expect(refreshing('a-b-c---------', ['(r|)'], '-------d------').refreshes).to.equal(1);
  });

  it('under a steady stream of writes refreshes at the bound after the first write not yet refreshed for', () => {
    // A write every frame from 0 to 19: quiet never lasts 3 frames; refreshes at 8 and 17 (the bound
    // from the write at 9), and once more 3 frames after the last write.
    const writes = 'abcdefghijklmnopqrst';
    expect(refreshing(`${writes}------`, ['(r|)'], '--------d--------d----d---').refreshes).to.equal(3);
  });

  it('runs one refresh at a time: writes during one are one more refresh after it', () => {
    // The first refresh runs from 3 to 9; the write at 5 is due at 8, while it runs: the second
    // starts when the first ends, at 9, and ends at 11.
    const r = refreshing('a----b---------', ['------(r|)', '--(r|)'], '---------d-d---');
    expect(r.refreshes).to.equal(2);
  });

  it('reports a failed refresh and refreshes again at the next write', () => {
    const r = refreshing('a--------b--------', ['#', '(r|)'], '---d--------d-----');
    expect(r.errors).to.deep.equal(['error']);
    expect(r.refreshes).to.equal(2);
  });

  it('a stop drops the refresh not yet due', () => {
    expect(refreshing('a-------', ['(r|)'], '--', '--!').refreshes).to.equal(0);
  });
});

describe('the views refresher (its stop)', () => {
  it('waits for the refresh under way, then refreshes no more', async () => {
    let calls = 0;
    let finish = () => {};
    const r = viewRefresher(
      () => {
        calls += 1;
        return new Promise<void>((resolve) => {
          finish = resolve;
        });
      },
      { quietMs: 0, maxWaitMs: 0, onError: () => {} },
    );
    r.poke();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(calls).to.equal(1);
    let stopped = false;
    const stopping = r.stop().then(() => {
      stopped = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(stopped).to.equal(false);
    finish();
    await stopping;
    r.poke();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(calls).to.equal(1);
  });
});

describe('the views refresher (held while an import writes its file)', () => {
  const counting = () => {
    let calls = 0;
    const r = viewRefresher(
      async () => {
        calls += 1;
      },
      { quietMs: 0, maxWaitMs: 0, onError: () => {} },
    );
    return { r, calls: () => calls };
  };
  const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

  it('refreshes for no write while held, and once after the release for all of them', async () => {
    const { r, calls } = counting();
    const release = r.hold();
    r.poke();
    r.poke();
    r.poke();
    await settle();
    expect(calls()).to.equal(0);
    release();
    await settle();
    expect(calls()).to.equal(1);
    await r.stop();
  });

  it('refreshes at the last of several releases; a release called twice counts once', async () => {
    const { r, calls } = counting();
    const first = r.hold();
    const second = r.hold();
    r.poke();
    first();
    first();
    await settle();
    expect(calls()).to.equal(0);
    second();
    await settle();
    expect(calls()).to.equal(1);
    await r.stop();
  });

  it('a release with no write meanwhile refreshes nothing, and pokes after it refresh as before', async () => {
    const { r, calls } = counting();
    r.hold()();
    await settle();
    expect(calls()).to.equal(0);
    r.poke();
    await settle();
    expect(calls()).to.equal(1);
    await r.stop();
  });
});
