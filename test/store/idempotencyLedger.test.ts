import { expect } from 'chai';
import type { IdempotencyRecord } from '../../src/domain/idempotencyRecord.js';
import { type ClaimRequest, idempotencyLedger, ledgerDocId } from '../../src/store/idempotencyLedger.js';
import { openStore, type Store, type StoreLocation } from '../../src/store/store.js';
import { type CouchServer, startCouchServer } from '../support/couchServer.js';
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

const backends: ReadonlyArray<
  [string, () => Promise<{ location: StoreLocation; dispose: () => Promise<void> }>]
> = [
  [
    'embedded leveldb',
    async () => {
      const dir = await makeTempDir('ledger');
      return {
        location: { kind: 'embedded', dataDir: dir, prefix: 'chamada_' },
        dispose: () => removeDir(dir),
      };
    },
  ],
  [
    'CouchDB protocol (express-pouchdb)',
    async () => {
      const server: CouchServer = await startCouchServer();
      return {
        location: { kind: 'couchdb', url: server.url, prefix: 'chamada_' },
        dispose: () => server.dispose(),
      };
    },
  ],
];

for (const [name, setUp] of backends) {
  describe(`idempotency ledger on ${name}`, () => {
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
      const ledger = idempotencyLedger(store.db.requests);
      const claims = await Promise.all(Array.from({ length: 20 }, () => ledger.claim(request())));
      expect(claims.filter((c) => c !== undefined)).to.have.length(1);
    });

    it('stores a completed response and reads it back', async () => {
      const ledger = idempotencyLedger(store.db.requests);
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
      const ledger = idempotencyLedger(store.db.requests);
      await ledger.claim(request());
      const stale = await ledger.get(request().key, 'user-1');
      if (stale === undefined) throw new Error('no entry');
      const both = await Promise.all([
        ledger.claim(request({ now: 2_000_000 }), stale),
        ledger.claim(request({ now: 2_000_000 }), stale),
      ]);
      expect(both.filter((c) => c !== undefined)).to.have.length(1);
    });

    it('releases a claim so the key is free again', async () => {
      const ledger = idempotencyLedger(store.db.requests);
      const claim = await ledger.claim(request());
      if (claim === undefined) throw new Error('claim lost');
      await ledger.release(claim);
      expect(await ledger.get(request().key, 'user-1')).to.equal(undefined);
      expect(await ledger.claim(request())).to.not.equal(undefined);
    });

    it('purges entries past their retention and keeps the others', async () => {
      const ledger = idempotencyLedger(store.db.requests);
      for (let i = 0; i < 7; i += 1) {
        const r = request({ key: `00000000-0000-4000-8000-00000000000${i}`, now: i < 4 ? 0 : DAY });
        const claim = await ledger.claim(r);
        if (claim === undefined) throw new Error('claim lost');
        await ledger.complete(claim, r, response, r.now);
      }
      expect(await ledger.purgeExpired(DAY, 3)).to.equal(4);
      const left: Array<IdempotencyRecord | undefined> = await Promise.all(
        Array.from({ length: 7 }, (_, i) => ledger.get(`00000000-0000-4000-8000-00000000000${i}`, 'user-1')),
      );
      expect(left.map((e) => e !== undefined)).to.deep.equal([false, false, false, false, true, true, true]);
    });
  });
}

describe('idempotency ledger shared by two app instances on one CouchDB-protocol server', () => {
  let server: CouchServer;
  let a: Store;
  let b: Store;
  before(async () => {
    server = await startCouchServer();
    a = await openStore({ kind: 'couchdb', url: server.url, prefix: 'chamada_' });
    b = await openStore({ kind: 'couchdb', url: server.url, prefix: 'chamada_' });
  });
  after(async () => {
    await a.close();
    await b.close();
    await server.dispose();
  });

  it('lets exactly one claim win when both instances race on the same key', async () => {
    for (let round = 0; round < 10; round += 1) {
      const r = request({ key: `10000000-0000-4000-8000-0000000000${String(round).padStart(2, '0')}` });
      const [ledgerA, ledgerB] = [idempotencyLedger(a.db.requests), idempotencyLedger(b.db.requests)];
      const claims = await Promise.all([
        ledgerA.claim(r),
        ledgerB.claim(r),
        ledgerA.claim(r),
        ledgerB.claim(r),
      ]);
      expect(
        claims.filter((c) => c !== undefined),
        `round ${round}`,
      ).to.have.length(1);
    }
  });
});
