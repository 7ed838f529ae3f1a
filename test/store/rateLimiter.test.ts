import { expect } from 'chai';
import type { RateLimitDecision, RateLimitPolicy } from '../../src/rules/rateLimit.js';
import { type RateLimiter, type RateLimiterOptions, rateLimiter } from '../../src/store/rateLimiter.js';
import { openStore, type Store } from '../../src/store/store.js';
import { twoStoresOnOneCouch } from '../support/storeBackends.js';
import { makeTempDir, removeDir } from '../support/tempDir.js';

const T0 = 1_700_000_000_000;
const FIVE_A_MINUTE: RateLimitPolicy = { limit: 5, windowMs: 60_000 };
const IP = '203.0.113.7';
const SECRET = 'shared-by-the-instances';
const OTHER_IP = '2001:db8::42';
const ALLOWED = true;
/** Fail open: let through, nothing counted, so no quota to tell. */
const UNCOUNTED: RateLimitDecision = { allowed: true, quota: null };

const hitIds = async (store: Store): Promise<string[]> => {
  const all = await store.db.requests.allDocs({ startkey: 'rl:', endkey: 'rl:\uffff' });
  return all.rows.map((r) => r.id);
};

describe('rate limiter on the embedded store', () => {
  let dir: string;
  let store: Store;
  let now: number;
  let failures: unknown[];
  const limiter = (options: Partial<RateLimiterOptions> = {}): RateLimiter =>
    rateLimiter(store.db.requests, {
      clock: () => new Date(now),
      clientKeySecret: SECRET,
      onStoreFailure: (e) => failures.push(e),
      ...options,
    });
  const checks = async (l: RateLimiter, n: number, key = IP): Promise<RateLimitDecision[]> => {
    const out: RateLimitDecision[] = [];
    for (let i = 0; i < n; i += 1) out.push(await l.check('login', key, FIVE_A_MINUTE));
    return out;
  };

  beforeEach(async () => {
    dir = await makeTempDir('ratelimit');
    store = await openStore({ kind: 'embedded', dataDir: dir, prefix: 'chamada_' });
    now = T0;
    failures = [];
  });
  afterEach(async () => {
    await store.close();
    await removeDir(dir);
  });

  it('allows five requests a minute and refuses the sixth until the oldest leaves the window', async () => {
    const l = limiter();
    expect((await l.check('login', IP, FIVE_A_MINUTE)).allowed).to.equal(ALLOWED);
    now = T0 + 10_000;
    expect((await checks(l, 4)).map((d) => d.allowed)).to.deep.equal([ALLOWED, ALLOWED, ALLOWED, ALLOWED]);
    now = T0 + 15_000;
    // Not 45 s (when the first leaves): this refusal counts too, so the four of T0 + 10 s must leave.
    expect(await l.check('login', IP, FIVE_A_MINUTE)).to.deep.equal({
      allowed: false,
      retryAfterSeconds: 55,
    });
    expect(failures).to.deep.equal([]);
  });

  it('a client that waits exactly Retry-After is let in', async () => {
    const l = limiter();
    await checks(l, 1);
    now = T0 + 10_000;
    await checks(l, 4);
    now = T0 + 15_000;
    const refused = await l.check('login', IP, FIVE_A_MINUTE);
    if (refused.allowed) throw new Error('the sixth request should be refused');
    now += refused.retryAfterSeconds * 1000;
    expect((await l.check('login', IP, FIVE_A_MINUTE)).allowed).to.equal(true);
  });

  it('tells what is left of the quota and when the oldest counted request frees a place', async () => {
    const l = limiter();
    expect(await l.check('login', IP, FIVE_A_MINUTE)).to.deep.equal({
      allowed: true,
      quota: { remaining: 4, resetSeconds: 60 },
    });
    now = T0 + 20_000;
    expect(await l.check('login', IP, FIVE_A_MINUTE)).to.deep.equal({
      allowed: true,
      quota: { remaining: 3, resetSeconds: 40 },
    });
  });

  it('counts its own hit when the copy serving the range read lacks it (a cluster shard a quorum write skipped)', async () => {
    const db = store.db.requests;
    // Every count is read from the hit just written, and this copy never has that one yet.
    const behind = new Proxy(db, {
      get(target, prop, receiver) {
        if (prop !== 'allDocs') return Reflect.get(target, prop, receiver);
        return async (options: PouchDB.Core.AllDocsWithKeyOptions & { startkey?: string }) => {
          const read = await target.allDocs(options);
          return { ...read, rows: read.rows.filter((row) => row.id !== options.startkey) };
        };
      },
    });
    const l = rateLimiter(behind, { clock: () => new Date(now), clientKeySecret: SECRET });
    expect((await checks(l, 5)).map((d) => d.allowed)).to.deep.equal([true, true, true, true, true]);
    now = T0 + 5_000;
    expect(await l.check('login', IP, FIVE_A_MINUTE)).to.deep.equal({
      allowed: false,
      retryAfterSeconds: 55,
    });
  });

  it('counts each client on its own', async () => {
    const l = limiter();
    await checks(l, 6);
    expect((await l.check('login', OTHER_IP, FIVE_A_MINUTE)).allowed).to.equal(ALLOWED);
  });

  it('counts each scope on its own', async () => {
    const l = limiter();
    await checks(l, 6);
    expect((await l.check('refresh', IP, FIVE_A_MINUTE)).allowed).to.equal(ALLOWED);
  });

  it('allows requests again once the window has passed', async () => {
    const l = limiter();
    expect((await checks(l, 6)).at(-1)).to.deep.equal({ allowed: false, retryAfterSeconds: 60 });
    now = T0 + 59_999;
    expect((await l.check('login', IP, FIVE_A_MINUTE)).allowed).to.equal(false);
    now = T0 + 60_000 + 59_999;
    expect((await l.check('login', IP, FIVE_A_MINUTE)).allowed).to.equal(ALLOWED);
  });

  it('lets exactly five of 20 concurrent requests through', async () => {
    const l = limiter();
    const decisions = await Promise.all(
      Array.from({ length: 20 }, () => l.check('login', IP, FIVE_A_MINUTE)),
    );
    expect(decisions.filter((d) => d.allowed)).to.have.length(5);
  });

  it('lets exactly five through when 20 requests arrive one after another within one millisecond', async () => {
    // Their writes and reads interleave, so a later request's hit lands after an earlier one has counted.
    const l = limiter();
    const pending: Array<Promise<RateLimitDecision>> = [];
    for (let i = 0; i < 20; i += 1) {
      pending.push(l.check('login', IP, FIVE_A_MINUTE));
      await new Promise((r) => setTimeout(r, 1));
    }
    expect((await Promise.all(pending)).filter((d) => d.allowed)).to.have.length(5);
  });

  it('counts refused requests too, so a client that keeps trying never sees the window reopen', async () => {
    const l = limiter();
    await checks(l, 5);
    for (let s = 10; s <= 120; s += 10) {
      now = T0 + s * 1000;
      const d = await l.check('login', IP, FIVE_A_MINUTE);
      expect(d.allowed, `after ${s} s`).to.equal(false);
    }
    // A minute of quiet after the last attempt is what reopens it.
    now = T0 + 180_001;
    expect((await l.check('login', IP, FIVE_A_MINUTE)).allowed).to.equal(ALLOWED);
  });

  it('lets requests through and reports the failure when the store is down (fail open)', async () => {
    const l = limiter();
    await store.close();
    expect(await checks(l, 7)).to.deep.equal(Array.from({ length: 7 }, () => UNCOUNTED));
    expect(failures).to.have.length(7);
  });

  it('still lets requests through when the failure reporter itself throws', async () => {
    const l = limiter({
      onStoreFailure: () => {
        throw new Error('reporter down');
      },
    });
    await store.close();
    expect(await l.check('login', IP, FIVE_A_MINUTE)).to.deep.equal(UNCOUNTED);
  });

  it('refuses a scope that could fall into another scope’s ids, as a programming error', async () => {
    const l = limiter();
    let thrown: unknown;
    await l.check('login:x', IP, FIVE_A_MINUTE).catch((e: unknown) => {
      thrown = e;
    });
    expect(thrown).to.be.instanceOf(TypeError);
  });

  it('deletes hits older than every window in the background', async () => {
    const l = limiter({ cleanupEvery: 1 });
    await checks(l, 3);
    await checks(l, 2, OTHER_IP);
    now = T0 + 30_000;
    await checks(l, 1);
    expect(await hitIds(store)).to.have.length(6);
    now = T0 + 60_000 + 30_000;
    await checks(l, 1, OTHER_IP);
    // Left: the hit at +30 s (still inside a window) and the one just made.
    const deadline = Date.now() + 5000;
    let left = await hitIds(store);
    while (left.length > 2 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
      left = await hitIds(store);
    }
    expect(left).to.have.length(2);
    expect(failures).to.deep.equal([]);
  });

  it('never stores the client address, in an id or in a field', async () => {
    const l = limiter();
    await checks(l, 6, IP);
    await checks(l, 2, OTHER_IP);
    const all = await store.db.requests.allDocs({ include_docs: true });
    const stored = JSON.stringify(all.rows);
    expect(stored).to.include('rateHit');
    for (const address of [IP, OTHER_IP]) expect(stored).not.to.include(address);
    const hit = all.rows.find((r) => r.id.startsWith('rl:'))?.doc;
    expect(hit).to.include({ docType: 'rateHit', scope: 'login', at: T0 });
    expect(Object.keys(hit ?? {}).sort()).to.deep.equal(['_id', '_rev', 'at', 'docType', 'scope']);
  });
});

describe('rate limiter shared by two app instances on one CouchDB-protocol server', () => {
  const two = twoStoresOnOneCouch();

  it('counts the requests of both instances against one limit', async () => {
    let now = T0;
    const clock = () => new Date(now);
    const [onA, onB] = [
      rateLimiter(two().a.db.requests, { clock, clientKeySecret: SECRET }),
      rateLimiter(two().b.db.requests, { clock, clientKeySecret: SECRET }),
    ];
    const decisions: RateLimitDecision[] = [];
    // Requests of one client are seconds apart; on a cluster a hit written to two copies of three may
    // be missed for some milliseconds by a range read that the third serves (the limiter's rule: never
    // fewer than the limit, perhaps one more for racing requests). The next check comes once both
    // instances can read every hit so far, as it would in seconds of real time.
    const everyHitSeen = async (count: number) => {
      // Each range read may be served by another copy: three reads in a row that see them all.
      const deadline = Date.now() + 10_000;
      let agreeing = 0;
      while (agreeing < 3 && Date.now() < deadline) {
        const seen = await Promise.all([two().a, two().b].map(async (s) => (await hitIds(s)).length));
        agreeing = seen.every((n) => n >= count) ? agreeing + 1 : 0;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    for (const l of [onA, onB, onA, onB, onA]) {
      decisions.push(await l.check('login', IP, FIVE_A_MINUTE));
      await everyHitSeen(decisions.length);
      now += 1000;
    }
    expect(decisions.every((d) => d.allowed)).to.equal(true);
    // The refusal (at +5 s) counts: a place frees when the hit of +1 s leaves, at +61 s.
    expect(await onB.check('login', IP, FIVE_A_MINUTE)).to.deep.equal({
      allowed: false,
      retryAfterSeconds: 56,
    });
  });
});
