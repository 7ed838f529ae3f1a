/**
 * The session/user read cache: a cached read saves a store read, a write through the store is seen
 * by the next read ("at once", decision 0013), and a read that raced a write never fills the cache.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import fc from 'fast-check';
import type { SessionDoc } from '../../src/domain/session.js';
import {
  type DocCache,
  docCache,
  listingCache,
  noDocCache,
  weighedCache,
  writingThrough,
} from '../../src/store/docCache.js';
import { type NewSession, sessionStore } from '../../src/store/sessions.js';
import { embeddedStore } from '../support/storeBackends.js';

const deferred = <T>() => {
  let resolve: (v: T) => void = () => undefined;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
};

/**
 * A store whose reads and writes complete when fast-check's scheduler lets them: a read sees the
 * document when it starts, so a write may land before it answers; writes land in an order the
 * scheduler picks too.
 */
const scheduledStore = <V>(s: fc.Scheduler) => {
  const stored = new Map<string, V>();
  return {
    stored,
    load: (id: string): Promise<V | undefined> => {
      const seen = stored.get(id);
      return s.schedule(Promise.resolve(), `load ${id}`).then(() => seen);
    },
    write: (id: string, value: V): Promise<void> =>
      s.schedule(Promise.resolve(), `write ${id}=${String(value)}`).then(() => {
        stored.set(id, value);
      }),
  };
};

/** After the run, what the cache answers for every id is what the store holds. */
const expectFresh = async <V>(
  s: fc.Scheduler,
  cache: Pick<DocCache<V>, 'read'>,
  db: ReturnType<typeof scheduledStore<V>>,
  ids: ReadonlyArray<string>,
): Promise<void> => {
  for (const id of ids) {
    const fresh = cache.read(id, () => db.load(id));
    await s.waitFor(fresh);
    expect(await fresh, `cached ${id}`).to.equal(db.stored.get(id));
  }
};

describe('document read cache', () => {
  it('reads the store once for repeated reads of one id', async () => {
    const cache = docCache<string>();
    let loads = 0;
    const load = async () => {
      loads += 1;
      return 'v';
    };
    expect(await cache.read('a', load)).to.equal('v');
    expect(await cache.read('a', load)).to.equal('v');
    expect(loads).to.equal(1);
  });

  it('reads again after forget', async () => {
    const cache = docCache<number>();
    let value = 1;
    const load = async () => value;
    await cache.read('a', load);
    value = 2;
    cache.forget('a');
    expect(await cache.read('a', load)).to.equal(2);
  });

  it('does not keep a value read while a write was under way', async () => {
    const cache = docCache<string>();
    const slow = deferred<string>();
    const racing = cache.read('a', () => slow.promise);
    // The write lands (and forgets) while the read is still out; the read returns the old value once.
    cache.forget('a');
    slow.resolve('old');
    expect(await racing).to.equal('old');
    expect(await cache.read('a', async () => 'new')).to.equal('new');
  });

  it('keeps a value read while other ids were written', async () => {
    const cache = docCache<string>();
    const slow = deferred<string>();
    const reading = cache.read('a', () => slow.promise);
    cache.forget('b');
    cache.remember('c', 'c1');
    slow.resolve('a1');
    await reading;
    let loads = 0;
    await cache.read('a', async () => {
      loads += 1;
      return 'a2';
    });
    expect(loads).to.equal(0);
  });

  it('readMany fills the ids that were not written meanwhile, and only those', async () => {
    const cache = docCache<string>();
    const slow = deferred<Map<string, string>>();
    const reading = cache.readMany(['a', 'b', 'c'], () => slow.promise);
    cache.forget('b');
    slow.resolve(
      new Map([
        ['a', 'a1'],
        ['b', 'b-old'],
      ]),
    );
    expect([...(await reading)]).to.deep.equal([
      ['a', 'a1'],
      ['b', 'b-old'],
    ]);
    const loaded: string[][] = [];
    const again = await cache.readMany(['a', 'b', 'c'], async (missing) => {
      loaded.push([...missing]);
      return new Map([['b', 'b-new']]);
    });
    // `c` was read as absent and is remembered so; `b` raced a write and is read again.
    expect(loaded).to.deep.equal([['b']]);
    expect([...again]).to.deep.equal([
      ['a', 'a1'],
      ['b', 'b-new'],
    ]);
  });

  it('remembers nothing of a load that failed', async () => {
    const cache = docCache<string>();
    const failing = cache.read('a', async () => {
      throw new Error('store down');
    });
    await failing.then(
      () => expect.fail('the failure must reach the caller'),
      (e: unknown) => expect(e).to.be.instanceOf(Error),
    );
    expect(await cache.read('a', async () => 'a1')).to.equal('a1');
  });

  it('never keeps a stale value, however reads and writes interleave (property)', async () => {
    const ids = ['a', 'b', 'c'] as const;
    const op = fc.oneof(
      fc.record({ kind: fc.constant('read' as const), id: fc.constantFrom(...ids) }),
      fc.record({ kind: fc.constant('write' as const), id: fc.constantFrom(...ids), value: fc.nat(99) }),
    );
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), fc.array(op, { minLength: 1, maxLength: 12 }), async (s, ops) => {
        const cache = docCache<number>();
        const db = scheduledStore<number>(s);
        const write = (id: string, value: number) => writingThrough(cache, id, () => db.write(id, value));
        const running = ops.map((o) =>
          o.kind === 'read' ? cache.read(o.id, () => db.load(o.id)) : write(o.id, o.value),
        );
        await s.waitFor(Promise.all(running));
        await expectFresh(s, cache, db, ids);
      }),
      { seed: 20261126, numRuns: 300 },
    );
  });

  it('keeps at most its bound, dropping the oldest fill first', async () => {
    const cache = docCache<string>(2);
    for (const id of ['a', 'b', 'c']) await cache.read(id, async () => id);
    expect(cache.size()).to.equal(2);
    let loads = 0;
    await cache.read('a', async () => {
      loads += 1;
      return 'a';
    });
    expect(loads).to.equal(1);
  });

  it('noDocCache reads every time', async () => {
    const cache = noDocCache<string>();
    let loads = 0;
    const load = async () => {
      loads += 1;
      return 'v';
    };
    await cache.read('a', load);
    await cache.read('a', load);
    expect(loads).to.equal(2);
    expect(cache.size()).to.equal(0);
  });

  describe('bounded by weight (aspects of one event or hundreds)', () => {
    const counted = () => {
      const loads: string[] = [];
      const load = (id: string, value: string) => async () => {
        loads.push(id);
        return value;
      };
      return { loads, load };
    };
    // A value weighs its length.
    const weighed = (max: number) => weighedCache(docCache<string>(), (v) => v.length, max);

    it('holds at most the budget, dropping the oldest first', async () => {
      const cache = weighed(7);
      cache.remember('a', 'aaa');
      cache.remember('b', 'bbb');
      const { loads, load } = counted();
      await cache.read('c', load('c', 'ccc'));
      expect(cache.has('a')).to.equal(false);
      for (const id of ['b', 'c']) await cache.read(id, load(id, id));
      expect(loads).to.deep.equal(['c']);
    });

    it('does not keep a value heavier than the whole budget', async () => {
      const cache = weighed(4);
      cache.remember('small', 'ss');
      cache.remember('big', 'bbbbb');
      expect(cache.has('big')).to.equal(false);
      expect(cache.has('small')).to.equal(true);
    });

    it('a value written again weighs what it weighs now, and a forgotten one nothing', async () => {
      const cache = weighed(6);
      cache.remember('a', 'a');
      cache.remember('b', 'bbbbb');
      cache.remember('b', 'b');
      cache.remember('c', 'cccc');
      expect(['a', 'b', 'c'].map((id) => cache.has(id))).to.deep.equal([true, true, true]);
      cache.forget('c');
      cache.remember('d', 'dddd');
      expect(['a', 'b', 'd'].map((id) => cache.has(id))).to.deep.equal([true, true, true]);
    });

    it('counts the fills of readMany, not a fill that raced a write, nor an absent document', async () => {
      const cache = weighed(6);
      const slow = deferred<Map<string, string>>();
      const reading = cache.readMany(['a', 'b', 'none'], () => slow.promise);
      cache.forget('b');
      slow.resolve(
        new Map([
          ['a', 'aaa'],
          ['b', 'bbbbbb'],
        ]),
      );
      await reading;
      expect(cache.has('a')).to.equal(true);
      expect(cache.has('b')).to.equal(false);
      // `none` is held as absent and weighs nothing; `a` (3) and `c` (3) fit the budget of 6.
      expect(cache.has('none')).to.equal(true);
      cache.remember('c', 'ccc');
      expect(['a', 'c', 'none'].map((id) => cache.has(id))).to.deep.equal([true, true, true]);
    });

    it('never keeps a stale value nor more than its budget, however reads and writes interleave (property)', async () => {
      const ids = ['a', 'b', 'c', 'd'] as const;
      const op = fc.oneof(
        fc.record({ kind: fc.constant('read' as const), id: fc.constantFrom(...ids) }),
        fc.record({
          kind: fc.constant('write' as const),
          id: fc.constantFrom(...ids),
          value: fc.string({ minLength: 1, maxLength: 6 }),
        }),
      );
      await fc.assert(
        fc.asyncProperty(fc.scheduler(), fc.array(op, { minLength: 1, maxLength: 14 }), async (s, ops) => {
          const cache = weighedCache(docCache<string>(), (v) => v.length, 8);
          const db = scheduledStore<string>(s);
          const write = (id: string, value: string) =>
            writingThrough(cache, id, () => db.write(id, value)).then(() => cache.remember(id, value));
          const heldWeight = () => ids.reduce((sum, id) => sum + (cache.peek(id)?.length ?? 0), 0);
          const running = ops.map((o) =>
            o.kind === 'read' ? cache.read(o.id, () => db.load(o.id)) : write(o.id, o.value),
          );
          await s.waitFor(Promise.all(running));
          expect(heldWeight(), 'weight held').to.be.at.most(8);
          await expectFresh(s, cache, db, ids);
        }),
        { seed: 20261127, numRuns: 300 },
      );
    });
  });

  describe('behind the session store', () => {
    const store = embeddedStore('doc-cache');

    const newSession = (): NewSession => ({
      sessionId: randomUUID(),
      userId: 'user-1',
      refreshTokenHash: 'h',
      csrfToken: 'c',
      createdAt: '2026-03-01T12:00:00.000Z',
      expiresAt: '2026-03-02T12:00:00.000Z',
      refreshExpiresAt: '2026-03-02T12:00:00.000Z',
      deviceId: null,
      revokedAt: null,
      revokeReason: null,
      replacedBy: null,
      suspectedCompromiseAt: null,
    });

    it('answers a revocation on the very next read, from the cache after that', async () => {
      const cache = docCache<SessionDoc>();
      const sessions = sessionStore(store().db.private, cache);
      const created = await sessions.create(newSession());
      const first = await sessions.get(created.sessionId);
      expect(first?.revokedAt).to.equal(null);
      expect(cache.size()).to.equal(1);
      await sessions.revoke(created, 'LOGOUT', '2026-03-01T13:00:00.000Z');
      const after = await sessions.get(created.sessionId);
      expect(after?.revokedAt).to.equal('2026-03-01T13:00:00.000Z');
      expect(after?.revokeReason).to.equal('LOGOUT');
      // Served from the cache now: the store's copy going away unannounced is not seen.
      const doc = await store().db.private.get(created._id);
      await store().db.private.remove(doc);
      expect((await sessions.get(created.sessionId))?.revokeReason).to.equal('LOGOUT');
    });
  });
});

describe('a listing held until a change of its kinds is told', () => {
  it('reads once, again after a change of one of its kinds, and not after a change of another kind', async () => {
    let loads = 0;
    const listing = listingCache(['classSession:'], async () => {
      loads += 1;
      return loads;
    });
    expect(await listing.read()).to.equal(1);
    expect(await listing.read()).to.equal(1);
    listing.changed('class:c1');
    listing.changed('student:s1');
    expect(await listing.read(), 'other kinds leave it').to.equal(1);
    listing.changed('classSession:x');
    expect(await listing.read()).to.equal(2);
    listing.clear();
    expect(await listing.read()).to.equal(3);
  });

  it('keeps a load that a change raced to itself: the next read loads again', async () => {
    let loads = 0;
    let release: () => void = () => undefined;
    const listing = listingCache(['pickupEntry:'], async () => {
      loads += 1;
      if (loads === 1) await new Promise<void>((r) => (release = r));
      return loads;
    });
    const first = listing.read();
    await Promise.resolve();
    listing.changed('pickupEntry:p1');
    release();
    expect(await first).to.equal(1);
    expect(await listing.read(), 'the raced load was not kept').to.equal(2);
    expect(await listing.read()).to.equal(2);
  });
});
