import { expect } from 'chai';
import type { RateLimitPolicy } from '../../src/rules/rateLimit.js';
import { type CallerRateLimiter, callerRateLimiter } from '../../src/store/callerRateLimiter.js';
import { openStore, type Store } from '../../src/store/store.js';
import { type CouchServer, startCouchServer } from '../support/couchServer.js';

// A minute boundary, so the fixed windows start with the test.
const T0 = Date.parse('2026-11-29T09:00:00Z');
const TEN_A_MINUTE: RateLimitPolicy = { limit: 10, windowMs: 60_000 };
const SECRET = 'shared-by-the-instances';
const CALLER = '6f1c2a8e-9d3b-4c5e-8f7a-1b2c3d4e5f60|user-1';

const allowedOf = (l: CallerRateLimiter, n: number, key = CALLER): number => {
  let allowed = 0;
  for (let i = 0; i < n; i += 1) if (l.check('device', key, TEN_A_MINUTE).allowed) allowed += 1;
  return allowed;
};

describe('per-device rate limiter, counted in memory', () => {
  it('allows the limit, refuses the rest, and keeps callers apart, with no store at all', () => {
    const l = callerRateLimiter(undefined, { clock: () => new Date(T0), clientKeySecret: SECRET });
    expect(allowedOf(l, 15)).to.equal(10);
    expect(allowedOf(l, 3, 'another-device|user-1')).to.equal(3);
  });

  it('holds at most maxBuckets buckets: an evicted caller starts afresh (errs towards allowing)', () => {
    const l = callerRateLimiter(undefined, {
      clock: () => new Date(T0),
      clientKeySecret: SECRET,
      maxBuckets: 2,
    });
    expect(allowedOf(l, 11)).to.equal(10);
    allowedOf(l, 1, 'b');
    allowedOf(l, 1, 'c');
    expect(allowedOf(l, 1)).to.equal(1);
  });
});

describe('per-device rate limiter shared by two instances on one CouchDB-protocol server', function () {
  this.timeout(60_000);
  let server: CouchServer;
  let a: Store;
  let b: Store;
  let now: number;
  const limiters: CallerRateLimiter[] = [];
  const limiter = (store: Store): CallerRateLimiter => {
    const l = callerRateLimiter(store.db.requests, {
      clock: () => new Date(now),
      clientKeySecret: SECRET,
      onExchangeFailure: (e) => {
        throw e;
      },
    });
    limiters.push(l);
    return l;
  };
  before(async () => {
    server = await startCouchServer();
    a = await openStore({ kind: 'couchdb', url: server.url, prefix: 'chamada_' });
    b = await openStore({ kind: 'couchdb', url: server.url, prefix: 'chamada_' });
  });
  beforeEach(() => {
    now = T0;
  });
  afterEach(async () => {
    await Promise.all(limiters.splice(0).map((l) => l.stop()));
  });
  after(async () => {
    await a.close();
    await b.close();
    await server.dispose();
  });

  const shareDocs = async (store: Store) =>
    (await store.db.requests.allDocs({ startkey: 'rl-share:', endkey: 'rl-share:\ufff0' })).rows;

  it('one limit for both once they have exchanged: what one counted, the other refuses', async () => {
    const [onA, onB] = [limiter(a), limiter(b)];
    expect(allowedOf(onA, 7)).to.equal(7);
    await onA.exchange();
    await onB.exchange();
    expect(allowedOf(onB, 5)).to.equal(3);
    await onB.exchange();
    await onA.exchange();
    // Both see 12 now (7 + 5, refusals counted): A refuses too.
    expect(onA.check('device', CALLER, TEN_A_MINUTE).allowed).to.equal(false);
  });

  it('racing between exchanges, two instances let through at most what one period adds', async () => {
    const [onA, onB] = [limiter(a), limiter(b)];
    let allowed = 0;
    // Ten rounds of one exchange period each: every round both count 3 requests, then exchange.
    for (let round = 0; round < 10; round += 1) {
      allowed += allowedOf(onA, 3) + allowedOf(onB, 3);
      await Promise.all([onA.exchange(), onB.exchange()]);
      now += 1000;
    }
    // Without the exchange each would allow 10 (20 in all); with it, the limit plus at most one
    // period's requests of the other instance.
    expect(allowed).to.be.within(10, 13);
  });

  it('the exchange runs in the background, writes only when something was counted, and leaves with stop', async () => {
    const onA = limiter(a);
    const onB = limiter(b);
    onA.startExchange(100);
    onB.startExchange(100);
    await new Promise((r) => setTimeout(r, 400));
    // Nothing counted: nothing written.
    expect(await shareDocs(a)).to.have.length(0);
    expect(allowedOf(onA, 10)).to.equal(10);
    // Waited for, not slept on: on a loaded machine a 100 ms timer runs late (bounded polls).
    for (let i = 0; i < 100 && (await shareDocs(a)).length === 0; i += 1)
      await new Promise((r) => setTimeout(r, 100));
    expect(await shareDocs(a)).to.have.length(1);
    // B refuses once its own exchange has read A's ten. Each look counts one request of B's own, so
    // at most nine looks: a refusal then comes from A's count, never from B's.
    let refused = false;
    for (let look = 0; look < 9 && !refused; look += 1) {
      refused = !onB.check('device', CALLER, TEN_A_MINUTE).allowed;
      if (!refused) await new Promise((r) => setTimeout(r, 300));
    }
    expect(refused, "B refuses on A's count").to.equal(true);
    // Each leaves with its own stop. B first: its looks were counted, so its running exchange may
    // write its document at any tick until it stops (what failed on a loaded machine, when B's tick
    // came between A's stop and the read).
    await onB.stop();
    expect(await shareDocs(a), "A's document, B's gone").to.have.length(1);
    await onA.stop();
    expect(await shareDocs(a)).to.have.length(0);
  });

  it('stores no caller key in the clear', async () => {
    const onA = limiter(a);
    allowedOf(onA, 1);
    await onA.exchange();
    const docs = await a.db.requests.allDocs({
      startkey: 'rl-share:',
      endkey: 'rl-share:\ufff0',
      include_docs: true,
    });
    expect(JSON.stringify(docs.rows)).not.to.include('user-1');
    expect(JSON.stringify(docs.rows)).not.to.include('6f1c2a8e');
  });
});
