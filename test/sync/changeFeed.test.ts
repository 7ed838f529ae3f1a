import { expect } from 'chai';
import { firstValueFrom, take, toArray } from 'rxjs';
import { type Database, PouchDB } from '../../src/store/pouch.js';
import { changes$ } from '../../src/sync/changeFeed.js';
import { makeTempDir, removeDir } from '../support/tempDir.js';

describe('change feed observable (real PouchDB)', () => {
  let dir: string;
  let db: Database;
  beforeEach(async () => {
    dir = await makeTempDir('feed');
    db = new PouchDB(`${dir}/db`);
  });
  afterEach(async () => {
    await db.close();
    await removeDir(dir);
  });

  it('replays existing documents and then follows new ones, with their sequence', async () => {
    await db.put({ _id: 'a' });
    const two = firstValueFrom(changes$(db, { includeDocs: true }).pipe(take(2), toArray()));
    await db.put({ _id: 'b', n: 1 });
    const seen = await two;
    expect(seen.map((c) => c.id)).to.deep.equal(['a', 'b']);
    expect(seen[1]?.doc).to.deep.include({ _id: 'b', n: 1 });
    expect(seen.every((c) => c.seq !== undefined)).to.equal(true);
  });

  it('resumes after a given sequence without replaying earlier documents', async () => {
    const first = await db.put({ _id: 'a' });
    const info = await db.info();
    await db.put({ _id: 'b' });
    const next = await firstValueFrom(changes$(db, { since: info.update_seq }).pipe(take(1)));
    expect(first.id).to.equal('a');
    expect(next.id).to.equal('b');
  });

  it('reports deletions as deleted changes', async () => {
    const put = await db.put({ _id: 'gone' });
    await db.remove('gone', put.rev);
    const change = await firstValueFrom(changes$(db).pipe(take(1)));
    expect(change).to.deep.include({ id: 'gone', deleted: true });
  });

  it('stops the live feed when unsubscribed, so nothing arrives after teardown', async () => {
    const seen: string[] = [];
    const subscription = changes$(db, { since: 'now' }).subscribe((c) => seen.push(c.id));
    await db.put({ _id: 'during' });
    await new Promise((r) => setTimeout(r, 100));
    subscription.unsubscribe();
    await db.put({ _id: 'after' });
    await new Promise((r) => setTimeout(r, 100));
    expect(seen).to.deep.equal(['during']);
  });
});
