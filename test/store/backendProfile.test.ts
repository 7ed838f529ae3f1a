import { expect } from 'chai';
import { backendProfile } from '../../src/store/backendProfile.js';
import { type Database, PouchDB } from '../../src/store/pouch.js';
import { makeTempDir, removeDir } from '../support/tempDir.js';

describe('the backend profile', () => {
  let dir: string;
  let db: Database;
  beforeEach(async () => {
    dir = await makeTempDir('profile');
    db = new PouchDB(`${dir}/requests`);
  });
  afterEach(async () => {
    await db.close();
    await removeDir(dir);
  });
  const claim = {
    key: '3f0f6b8e-2c1d-4a5b-9c8d-7e6f5a4b3c2d',
    principalId: 'user-1',
    fingerprint: 'fp',
    now: 1_000_000,
    leaseMs: 60_000,
    retentionMs: 86_400_000,
  };

  it('embedded: this process is the one writer, so caches hold, claims stay in memory, nothing is shared', async () => {
    const p = backendProfile('embedded');
    const cache = p.cacheOf<string>(10);
    cache.remember('a', 'x');
    expect(cache.peek('a')).to.equal('x');
    expect(await p.ledgerOf(db).claim(claim)).not.to.equal(undefined);
    expect((await db.allDocs()).rows, 'no stored claim').to.have.length(0);
    expect(p.rateLimitShareOf(db)).to.equal(undefined);
    expect(p.oneProjectionWriter).to.equal(true);
  });

  it('CouchDB: other instances write too, so nothing is cached, claims are stored, counts are shared', async () => {
    const p = backendProfile('couchdb');
    const cache = p.cacheOf<string>(10);
    cache.remember('a', 'x');
    expect(cache.peek('a')).to.equal(undefined);
    expect(await p.ledgerOf(db).claim(claim)).not.to.equal(undefined);
    expect((await db.allDocs()).rows, 'the claim stored').to.have.length(1);
    expect(p.rateLimitShareOf(db)).to.equal(db);
    expect(p.oneProjectionWriter).to.equal(false);
  });

  it("the shared caches hold on both backends; those of the pipelines' documents are held back on CouchDB", () => {
    for (const backend of ['embedded', 'couchdb'] as const) {
      const shared = backendProfile(backend).sharedCacheOf<string>(10);
      shared.remember('a', 'x');
      expect(shared.peek('a'), backend).to.equal('x');
    }
    const embedded = backendProfile('embedded').heldBackCacheOf<string>(10);
    embedded.remember('a', 'x');
    expect(embedded.peek('a')).to.equal('x');
    const couch = backendProfile('couchdb').heldBackCacheOf<string>(10);
    couch.remember('a', 'x');
    expect(couch.peek('a')).to.equal(undefined);
  });
});
