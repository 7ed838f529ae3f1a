/** The active-ADMIN guard's repair at start (`rebuildActiveAdmins`), on the embedded store. */
import { expect } from 'chai';
import { userStore } from '../../src/store/users.js';
import { embeddedStorePerTest } from '../support/storeBackends.js';

describe('the active-ADMIN guard rebuilt at start', () => {
  const current = embeddedStorePerTest('users');
  const guardRev = async () => (await current().db.private.get('admin-guard'))._rev;

  it('writes the guard when there is none, and not again while it holds the same admins', async () => {
    const users = userStore(current().db.private);
    expect(await users.rebuildActiveAdmins()).to.deep.equal([]);
    const written = await guardRev();
    const seq = (await current().db.private.info()).update_seq;
    expect(await users.rebuildActiveAdmins()).to.deep.equal([]);
    expect(await guardRev(), 'no second write').to.equal(written);
    expect((await current().db.private.info()).update_seq, 'the database unchanged').to.equal(seq);
  });

  it('repairs a guard left wrong by an interrupted change', async () => {
    const db = current().db.private;
    const users = userStore(db);
    await users.rebuildActiveAdmins();
    const stale = await db.get('admin-guard');
    await db.put({ ...stale, activeAdmins: ['5d0c1b2a-0000-4000-8000-000000000001'] });
    expect(await users.rebuildActiveAdmins()).to.deep.equal([]);
    expect(Reflect.get(await db.get('admin-guard'), 'activeAdmins')).to.deep.equal([]);
  });
});
