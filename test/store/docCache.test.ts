/**
 * The session/user read cache: a cached read saves a store read, a write through the store is seen
 * by the next read ("at once", decision 0013), and a read that raced a write never fills the cache.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { SessionDoc } from '../../src/domain/session.js';
import { docCache, noDocCache } from '../../src/store/docCache.js';
import { type NewSession, sessionStore } from '../../src/store/sessions.js';
import { openStore, type Store } from '../../src/store/store.js';
import { makeTempDir, removeDir } from '../support/tempDir.js';

const deferred = <T>() => {
  let resolve: (v: T) => void = () => undefined;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
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

  describe('behind the session store', () => {
    let dir: string;
    let store: Store;
    beforeEach(async () => {
      dir = await makeTempDir('doc-cache');
      store = await openStore({ kind: 'embedded', dataDir: dir, prefix: 'chamada_' });
    });
    afterEach(async () => {
      await store.close();
      await removeDir(dir);
    });

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
      const sessions = sessionStore(store.db.private, cache);
      const created = await sessions.create(newSession());
      const first = await sessions.get(created.sessionId);
      expect(first?.revokedAt).to.equal(null);
      expect(cache.size()).to.equal(1);
      await sessions.revoke(created, 'LOGOUT', '2026-03-01T13:00:00.000Z');
      const after = await sessions.get(created.sessionId);
      expect(after?.revokedAt).to.equal('2026-03-01T13:00:00.000Z');
      expect(after?.revokeReason).to.equal('LOGOUT');
      // Served from the cache now: the store's copy going away unannounced is not seen.
      const doc = await store.db.private.get(created._id);
      await store.db.private.remove(doc);
      expect((await sessions.get(created.sessionId))?.revokeReason).to.equal('LOGOUT');
    });
  });
});
