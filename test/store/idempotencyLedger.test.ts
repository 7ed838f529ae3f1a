import { isDeepStrictEqual } from 'node:util';
import { expect } from 'chai';
import fc from 'fast-check';
import { decideClaim } from '../../src/rules/idempotency.js';
import {
  type ClaimRequest,
  exclusiveIdempotencyLedger,
  type IdempotencyLedger,
  idCounts,
  idempotencyLedger,
  LEDGER_ID_BUCKETS,
  type LedgerEntry,
  ledgerDocId,
  storedIds,
} from '../../src/store/idempotencyLedger.js';
import type { Database } from '../../src/store/pouch.js';
import { openStore, type Store, type StoreLocation } from '../../src/store/store.js';
import { isStoreUnavailable } from '../../src/store/storeErrors.js';
import {
  type CouchServer,
  conflictsOnceSettled,
  couchServerLabel,
  realCouchNodes,
  startCouchServer,
} from '../support/couchServer.js';
import { embeddedStore, twoStoresOnOneCouch } from '../support/storeBackends.js';
import { makeTempDir, removeDir } from '../support/tempDir.js';

const DAY = 86_400_000;
const request = (overrides: Partial<ClaimRequest> = {}): ClaimRequest => ({
  key: '3f0f6b8e-2c1d-4a5b-9c8d-7e6f5a4b3c2d',
  principalId: 'user-1',
  fingerprint: 'fp-A',
  now: 1_000_000,
  leaseMs: 60_000,
  retentionMs: DAY,
  ...overrides,
});
const response = {
  status: 201,
  headers: { Location: '/x/1' },
  contentType: 'application/json; charset=utf-8',
  body: '{"a":1}',
  correlationId: 'c-1',
};

type LedgerOf = (db: Database) => IdempotencyLedger;
/** A claim, then the same request claimed again once its lease ran out: the late owner and the taker. */
const takenOver = async (ledger: IdempotencyLedger) => {
  const late = await ledger.claim(request());
  if (late === undefined) throw new Error('claim lost');
  const held = await ledger.get(request().key, 'user-1');
  if (held === undefined) throw new Error('no entry');
  const taker = await ledger.claim(request({ now: 1_000_000 + 60_001 }), held);
  if (taker === undefined) throw new Error('takeover refused');
  return { late, taker };
};
type LedgerHost = () => Promise<{ location: StoreLocation; dispose: () => Promise<void> }>;
/** A store in a temp dir of its own, for either ledger on the embedded store. */
const embeddedLedgerHost: LedgerHost = async () => {
  const dir = await makeTempDir('ledger');
  return {
    location: { kind: 'embedded', dataDir: dir, prefix: 'chamada_' },
    dispose: () => removeDir(dir),
  };
};
const backends: ReadonlyArray<[string, LedgerHost, LedgerOf]> = [
  ['embedded leveldb (shared ledger)', embeddedLedgerHost, idempotencyLedger],
  ['embedded leveldb (exclusive ledger: claims in memory)', embeddedLedgerHost, exclusiveIdempotencyLedger],
  [
    couchServerLabel(),
    async () => {
      const server: CouchServer = await startCouchServer();
      return {
        location: { kind: 'couchdb', url: server.url, prefix: 'chamada_' },
        dispose: () => server.dispose(),
      };
    },
    idempotencyLedger,
  ],
];

for (const [name, setUp, ledgerOf] of backends) {
  describe(`idempotency ledger on ${name}`, () => {
    const clustered = name === couchServerLabel() && realCouchNodes() > 1;
    let store: Store;
    let dispose: () => Promise<void>;
    beforeEach(async () => {
      const backend = await setUp();
      dispose = backend.dispose;
      store = await openStore(backend.location);
    });
    afterEach(async () => {
      await store.close();
      await dispose();
    });

    it('keys entries by principal and key, case-insensitively in the key', () => {
      expect(ledgerDocId('ABC', 'u')).to.equal(ledgerDocId('abc', 'u'));
      expect(ledgerDocId('abc', 'u1')).not.to.equal(ledgerDocId('abc', 'u2'));
    });

    it('lets exactly one of 20 concurrent claims of the same key win', async () => {
      const ledger = ledgerOf(store.db.requests);
      const claims = await Promise.allSettled(Array.from({ length: 20 }, () => ledger.claim(request())));
      expect(claims.filter((c) => c.status === 'fulfilled' && c.value !== undefined)).to.have.length(1);
      for (const c of claims)
        if (c.status === 'rejected') expect(isStoreUnavailable(c.reason), String(c.reason)).to.equal(true);
    });

    it('stores a completed response and reads it back', async () => {
      const ledger = ledgerOf(store.db.requests);
      const claim = await ledger.claim(request());
      if (claim === undefined) throw new Error('claim lost');
      expect(await ledger.complete(claim, request(), response, 1_000_500)).to.equal(true);
      const entry = await ledger.get(request().key, 'user-1');
      expect(entry).to.deep.include({
        state: 'complete',
        fingerprint: 'fp-A',
        expiresAt: 1_000_500 + DAY,
        response,
      });
    });

    it('reclaims an entry only with its current revision (compare-and-swap)', async () => {
      const ledger = ledgerOf(store.db.requests);
      await ledger.claim(request());
      const stale = await ledger.get(request().key, 'user-1');
      if (stale === undefined) throw new Error('no entry');
      const both = await Promise.all([
        ledger.claim(request({ now: 2_000_000 }), stale),
        ledger.claim(request({ now: 2_000_000 }), stale),
      ]);
      expect(both.filter((c) => c !== undefined)).to.have.length(1);
    });

    it('a renewed claim keeps the key past its first lease, and completes with what the renewal gave', async () => {
      const ledger = ledgerOf(store.db.requests);
      const claim = await ledger.claim(request());
      if (claim === undefined) throw new Error('claim lost');
      const renewed = await ledger.renew(claim, request(), 1_050_000);
      if (renewed === undefined) throw new Error('renewal refused');
      const entry = await ledger.get(request().key, 'user-1');
      expect(entry).to.deep.include({ state: 'pending', claimId: claim.claimId, leaseUntil: 1_110_000 });
      if (entry === undefined) throw new Error('no entry');
      // Past the first lease, inside the renewed one: still held, so a duplicate would wait.
      expect(decideClaim(entry, 'fp-A', 1_070_000)).to.equal('wait');
      expect(await ledger.complete(renewed, request(), response, 1_080_000)).to.equal(true);
      expect(await ledger.get(request().key, 'user-1')).to.deep.include({ state: 'complete' });
    });

    it('a claim taken over cannot be renewed', async () => {
      const ledger = ledgerOf(store.db.requests);
      const { late, taker } = await takenOver(ledger);
      expect(await ledger.renew(late, request(), 1_070_000)).to.equal(undefined);
      expect(await ledger.get(request().key, 'user-1')).to.deep.include({ claimId: taker.claimId });
    });

    it('releases a claim so the key is free again', async () => {
      const ledger = ledgerOf(store.db.requests);
      const claim = await ledger.claim(request());
      if (claim === undefined) throw new Error('claim lost');
      await ledger.release(claim);
      expect(await ledger.get(request().key, 'user-1')).to.equal(undefined);
      expect(await ledger.claim(request())).to.not.equal(undefined);
    });

    it('purges entries past their retention and keeps the others', async () => {
      const ledger = ledgerOf(store.db.requests);
      for (let i = 0; i < 7; i += 1) {
        const r = request({ key: `00000000-0000-4000-8000-00000000000${i}`, now: i < 4 ? 0 : DAY });
        const claim = await ledger.claim(r);
        if (claim === undefined) throw new Error('claim lost');
        await ledger.complete(claim, r, response, r.now);
      }
      const left = async () =>
        (
          await Promise.all(
            Array.from({ length: 7 }, (_, i) =>
              ledger.get(`00000000-0000-4000-8000-00000000000${i}`, 'user-1'),
            ),
          )
        ).map((e: LedgerEntry | undefined) => e !== undefined);
      const expected = [false, false, false, false, true, true, true];
      if (!clustered) {
        expect(await ledger.purgeExpired(DAY, 3)).to.equal(4);
        expect(await left()).to.deep.equal(expected);
        return;
      }
      // On a cluster the index a purge queries is read from one copy of each shard, which may not
      // have every write yet: an entry it misses goes at the next purge (the job runs every minute).
      // Each entry is counted by the purge that removed it; an entry whose deletion reached one copy
      // only may be counted again by a later purge, which finds it on a copy the deletion has not
      // reached and deletes it there too (the same revision: CouchDB answers ok), so the runs' sum
      // may pass four (five in one CI run on three nodes).
      let purged = 0;
      for (let round = 0; round < 50 && !isDeepStrictEqual(await left(), expected); round += 1) {
        purged += await ledger.purgeExpired(DAY, 3);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(await left()).to.deep.equal(expected);
      expect(purged).to.be.at.least(4);
    });
  });
}

describe('idempotency ledger shared by two app instances on one CouchDB server', () => {
  // On a cluster, the second through another node: the race that leaves conflicting revisions behind.
  const two = twoStoresOnOneCouch(true);

  it('lets exactly one claim win when both instances race on the same key', async () => {
    for (let round = 0; round < 10; round += 1) {
      const r = request({ key: `10000000-0000-4000-8000-0000000000${String(round).padStart(2, '0')}` });
      const [ledgerA, ledgerB] = [
        idempotencyLedger(two().a.db.requests),
        idempotencyLedger(two().b.db.requests),
      ];
      const claims = await Promise.allSettled([
        ledgerA.claim(r),
        ledgerB.claim(r),
        ledgerA.claim(r),
        ledgerB.claim(r),
      ]);
      expect(
        claims.filter((c) => c.status === 'fulfilled' && c.value !== undefined),
        `round ${round}`,
      ).to.have.length(1);
      // A cluster may hear of the loss as a write short of its quorum: 503, never a second winner.
      for (const c of claims)
        if (c.status === 'rejected') expect(isStoreUnavailable(c.reason), String(c.reason)).to.equal(true);
      expect(
        await conflictsOnceSettled(two().a.db.requests, ledgerDocId(r.key, r.principalId)),
        'conflicting revisions left behind',
      ).to.deep.equal([]);
    }
  });
});

describe('exclusive idempotency ledger (embedded store: claims held in memory)', () => {
  const store = embeddedStore('ledger-x');
  const seq = async () => Number((await store().db.requests.info()).update_seq);

  it('writes one document per mutation: the response, not the claim', async () => {
    const ledger = exclusiveIdempotencyLedger(store().db.requests);
    const before = await seq();
    const claim = await ledger.claim(request());
    if (claim === undefined) throw new Error('claim lost');
    expect(await seq()).to.equal(before);
    expect(await ledger.get(request().key, 'user-1')).to.deep.include({
      state: 'pending',
      fingerprint: 'fp-A',
    });
    expect(await ledger.complete(claim, request(), response, 1_000_500)).to.equal(true);
    expect(await seq()).to.equal(before + 1);
    const stored: unknown = await store().db.requests.get(ledgerDocId(request().key, 'user-1'));
    expect(stored).to.deep.include({ state: 'complete', response });
  });

  it('a claim decided on a stale read stands down: the key was completed in between', async () => {
    const ledger = exclusiveIdempotencyLedger(store().db.requests);
    const seen = await ledger.get(request().key, 'user-1');
    expect(seen).to.equal(undefined);
    const first = await ledger.claim(request());
    if (first === undefined) throw new Error('claim lost');
    await ledger.complete(first, request(), response, 1_000_500);
    // A request that read "nothing" before the completion must not run the handler a second time.
    expect(await ledger.claim(request(), seen)).to.equal(undefined);
    // Nor one that read the pending claim.
    const pending: LedgerEntry = {
      _id: first.id,
      _rev: undefined,
      docType: 'idempotency',
      key: request().key,
      principalId: 'user-1',
      fingerprint: 'fp-A',
      claimId: first.claimId,
      createdAt: 1_000_000,
      expiresAt: 1_000_000 + DAY,
      state: 'pending',
      leaseUntil: 1_060_000,
    };
    expect(await ledger.claim(request({ now: 2_000_000 }), pending)).to.equal(undefined);
  });

  it('a claim taken over after its lease: the late owner cannot store its response over the new one', async () => {
    const ledger = exclusiveIdempotencyLedger(store().db.requests);
    const { late, taker } = await takenOver(ledger);
    expect(await ledger.complete(late, request(), response, 1_070_000)).to.equal(false);
    expect(await ledger.complete(taker, request(), { ...response, body: '{"a":2}' }, 1_070_000)).to.equal(
      true,
    );
    expect(await ledger.get(request().key, 'user-1')).to.deep.include({ state: 'complete' });
    const entry = await ledger.get(request().key, 'user-1');
    expect(entry?.state === 'complete' ? entry.response.body : undefined).to.equal('{"a":2}');
  });

  it('wakes a waiting duplicate as soon as the claim ends, not on its next poll', async () => {
    const ledger = exclusiveIdempotencyLedger(store().db.requests);
    const claim = await ledger.claim(request());
    if (claim === undefined) throw new Error('claim lost');
    const started = Date.now();
    const waited = ledger.changed(request().key, 'user-1', 10_000);
    await ledger.complete(claim, request(), response, 1_000_500);
    await waited;
    expect(Date.now() - started).to.be.lessThan(5_000);
  });

  it('takes over a pending entry stored by an earlier process (the shared ledger) once its lease ended', async () => {
    const r = request();
    const left = await idempotencyLedger(store().db.requests).claim(r);
    if (left === undefined) throw new Error('claim lost');
    const ledger = exclusiveIdempotencyLedger(store().db.requests);
    const stored = await ledger.get(r.key, 'user-1');
    expect(stored).to.deep.include({ state: 'pending', _rev: left.rev });
    const claim = await ledger.claim(request({ now: r.now + r.leaseMs + 1 }), stored);
    if (claim === undefined) throw new Error('takeover refused');
    expect(await ledger.complete(claim, r, response, r.now + r.leaseMs + 2)).to.equal(true);
    expect(await ledger.get(r.key, 'user-1')).to.deep.include({ state: 'complete' });
  });
});

describe('the exclusive ledger index of stored ids', function () {
  this.timeout(120_000);
  const store = embeddedStore('ledger-ids', 'file');

  // Ids that share their first 52 bits come in fours (a colliding id may then sort between two others
  // of its key), so counts of colliding keys are exercised.
  const idOf = (n: number, run: string) =>
    // 8 + 5 characters: the key's 13 hex digits, shared by the four.
    `idem:${run}${String(Math.floor(n / 4)).padStart(5, '0')}${'abcd'[n % 4] ?? 'a'}${'0'.repeat(50)}`;

  it('never says "absent" of a stored id, however creates, purges and the load interleave (property)', async () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('create' as const), n: fc.nat(7) }),
      fc.record({ kind: fc.constant('purge' as const), n: fc.nat(7) }),
      // Lets the load read its next page (of one id).
      fc.record({ kind: fc.constant('page' as const) }),
    );
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.nat(7), { maxLength: 8 }),
        fc.array(op, { maxLength: 40 }),
        fc.nat(20),
        async (before, ops, loadFrom) => {
          run += 1;
          const prefix = String(run).padStart(8, '0');
          const db = store().db.requests;
          const doc = (n: number) => ({ _id: idOf(n, prefix), docType: 'bench' });
          // Entries an earlier process left.
          for (const n of new Set(before)) await db.put(doc(n));
          // The load reads one id a page, and each page waits for a `page` step.
          let release: (() => void) | undefined;
          let arrived: () => void = () => undefined;
          let nextArrival = new Promise<void>((r) => {
            arrived = r;
          });
          let free = false;
          const ids = storedIds(db, {
            pageSize: 1,
            beforePage: () => {
              if (free) return Promise.resolve();
              arrived();
              return new Promise<void>((resolve) => {
                release = resolve;
              });
            },
          });
          let loaded: Promise<void> | undefined;
          for (const [i, o] of ops.entries()) {
            if (i === loadFrom) {
              loaded = ids.load();
              await Promise.race([nextArrival, loaded]);
            }
            if (o.kind === 'page') {
              if (release === undefined || loaded === undefined) continue;
              nextArrival = new Promise<void>((r) => {
                arrived = r;
              });
              const go = release;
              release = undefined;
              go();
              // The page is read (the load asks for the next one, or ends) before the next step.
              await Promise.race([nextArrival, loaded]);
              continue;
            }
            const id = idOf(o.n, prefix);
            const existing = await db.get(id).catch(() => undefined);
            if (o.kind === 'create') {
              if (existing !== undefined) continue;
              ids.created(id);
              await db.put(doc(o.n));
            } else {
              if (existing === undefined) continue;
              await db.remove(existing);
              ids.removed(id);
            }
          }
          free = true;
          release?.();
          await loaded;
          await ids.load();
          const stored = await db.allDocs({ startkey: 'idem:', endkey: 'idem:\ufff0' });
          try {
            for (const row of stored.rows) expect(ids.mayHold(row.id), `${row.id} is stored`).to.equal(true);
          } finally {
            // The next run's load starts from an empty ledger again.
            await db.bulkDocs(stored.rows.map((r) => ({ _id: r.id, _rev: r.value.rev, _deleted: true })));
          }
        },
      ),
      {
        seed: 20261126,
        numRuns: 200,
        examples: [
          // The load has read b when a is created and c is purged: a take-away while the load runs
          // would leave a and b, which share a key, counted once; purging a would then hide b.
          [
            [1, 2],
            [
              { kind: 'page' },
              { kind: 'create', n: 0 },
              { kind: 'purge', n: 2 },
              { kind: 'page' },
              { kind: 'purge', n: 0 },
            ],
            0,
          ],
        ],
      },
    );
  });

  it('claims a fresh key without reading once the ids are loaded; a purged key is fresh again', async () => {
    const db = store().db.requests;
    const ids = storedIds(db);
    const ledger = exclusiveIdempotencyLedger(db, ids);
    const r = request({ key: '20000000-0000-4000-8000-000000000001', now: 0 });
    await ids.load();
    const claim = await ledger.claim(r);
    if (claim === undefined) throw new Error('claim lost');
    expect(ids.mayHold(claim.id)).to.equal(false);
    await ledger.complete(claim, r, response, 0);
    expect(ids.mayHold(claim.id)).to.equal(true);
    expect(await ledger.claim(r)).to.equal(undefined);
    expect(await ledger.purgeExpired(DAY)).to.be.greaterThan(0);
    expect(ids.mayHold(claim.id)).to.equal(false);
    expect(await ledger.claim(request({ key: r.key, now: DAY }))).to.not.equal(undefined);
  });

  it('keeps a fixed table however many ids are stored; every stored key still replays its own response', async () => {
    const db = store().db.requests;
    // 64 buckets for 600 keys: every bucket is shared by about nine of them.
    const ids = storedIds(db, { buckets: 64 });
    const ledger = exclusiveIdempotencyLedger(db, ids);
    await ids.load();
    const keyOf = (i: number) => `30000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
    const r = (i: number) => request({ key: keyOf(i), now: 0 });
    for (let i = 0; i < 600; i += 1) {
      const claim = await ledger.claim(r(i));
      if (claim === undefined) throw new Error(`claim ${i} lost`);
      expect(await ledger.complete(claim, r(i), { ...response, body: `{"i":${i}}` }, 0)).to.equal(true);
    }
    expect(ids.capacity).to.equal(64);
    expect(ids.size()).to.be.within(1, 64);
    for (let i = 0; i < 600; i += 1) {
      // A retry never runs the handler again, and reads the response of its own key.
      expect(await ledger.claim(r(i)), keyOf(i)).to.equal(undefined);
      const entry = await ledger.get(keyOf(i), 'user-1');
      expect(entry?.state === 'complete' ? entry.response.body : undefined, keyOf(i)).to.equal(`{"i":${i}}`);
    }
    // A fresh key whose bucket is taken is read, found absent, and claimed.
    expect(await ledger.claim(request({ key: keyOf(600), now: 0 }))).to.not.equal(undefined);
  });

  it("the service's table has 2^20 one-byte buckets (1 MiB)", () => {
    expect(storedIds(store().db.requests).capacity).to.equal(2 ** 20);
  });
});

describe('ledger id counts (fixed table)', () => {
  const ids = Array.from({ length: 400 }, (_, n) =>
    ledgerDocId(`40000000-0000-4000-8000-${String(n).padStart(12, '0')}`, 'user-1'),
  );
  const id = (n: number) => ids[n] ?? '';

  it('never says "absent" of an id added and not taken, whatever the collisions (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        // Runs of adds or takes of consecutive ids, so that a bucket of a small table passes 255 ids
        // and is then emptied.
        fc.array(
          fc.record({ add: fc.boolean(), from: fc.nat(399), count: fc.integer({ min: 1, max: 300 }) }),
          {
            maxLength: 12,
          },
        ),
        (buckets, runs) => {
          const counts = idCounts(buckets);
          const held = new Set<number>();
          for (const run of runs) {
            for (let k = 0; k < run.count; k += 1) {
              const n = (run.from + k) % ids.length;
              // As in the ledger: an id is added once per stored document, taken only when one is gone.
              if (run.add && !held.has(n)) {
                counts.add(id(n));
                held.add(n);
              } else if (!run.add && held.has(n)) {
                counts.take(id(n));
                held.delete(n);
              }
            }
            const hidden = [...held].filter((n) => !counts.mayHold(id(n)));
            expect(hidden, 'ids said absent while held').to.deep.equal([]);
            expect(counts.size()).to.be.at.most(buckets);
          }
        },
      ),
      { seed: 20261126, numRuns: 300 },
    );
  });

  it('a bucket past 255 ids is never taken down again (it no longer knows its count)', () => {
    const counts = idCounts(1);
    for (let n = 0; n < 300; n += 1) counts.add(id(n));
    for (let n = 0; n < 300; n += 1) counts.take(id(n));
    expect(counts.mayHold(id(0))).to.equal(true);
    expect(counts.size()).to.equal(1);
  });

  it('an emptied bucket says "absent" again', () => {
    const counts = idCounts(LEDGER_ID_BUCKETS);
    counts.add(id(1));
    counts.add(id(2));
    counts.take(id(1));
    expect(counts.mayHold(id(2))).to.equal(true);
    counts.take(id(2));
    expect(counts.mayHold(id(1))).to.equal(false);
    expect(counts.mayHold(id(2))).to.equal(false);
    expect(counts.size()).to.equal(0);
  });
});
