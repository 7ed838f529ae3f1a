/**
 * The permissions of roles, cached for a few seconds: one listing serves every request in flight when
 * the cache has expired, and a change of a role is seen by the next request even while a listing
 * begun before it is still running. Real PouchDB in a temporary directory.
 */
import { expect } from 'chai';
import { type Database, PouchDB } from '../../src/store/pouch.js';
import { CACHE_TTL_MS, type RoleStore, roleStore } from '../../src/store/roles.js';
import { makeTempDir, removeDir } from '../support/tempDir.js';

describe('role store: permissions cache', () => {
  let dir: string;
  let db: Database;
  let now = Date.parse('2026-11-26T12:00:00.000Z');
  let roles: RoleStore;
  let listings = 0;

  beforeEach(async () => {
    dir = await makeTempDir('roles');
    db = new PouchDB(`${dir}/private`);
    roles = roleStore(db, () => new Date(now));
    await roles.ensureSystemRoles(new Date(now).toISOString());
    await roles.create({
      name: 'PORTARIA',
      display_name: 'Portaria',
      permissions: ['attendance'],
      is_system: 0,
      created_at: new Date(now).toISOString(),
      updated_at: new Date(now).toISOString(),
    });
    listings = 0;
    const list = roles.list.bind(roles);
    roles.list = () => {
      listings += 1;
      return list();
    };
  });
  afterEach(async () => {
    await db.close();
    await removeDir(dir);
  });

  it('lists the roles once for fifty requests in flight, and again only after the cache expires', async () => {
    const answers = await Promise.all(Array.from({ length: 50 }, () => roles.permissionsOf(['PORTARIA'])));
    expect(answers.every((a) => a.length === 1 && a[0] === 'attendance')).to.equal(true);
    expect(listings).to.equal(1);
    await roles.permissionsOf(['ADMIN']);
    expect(listings, 'within the cache time').to.equal(1);
    now += CACHE_TTL_MS + 1;
    await Promise.all(Array.from({ length: 10 }, () => roles.permissionsOf(['PORTARIA'])));
    expect(listings).to.equal(2);
  });

  it('a role changed while a listing runs is seen by the next request, not the listing begun before', async () => {
    const before = roles.permissionsOf(['PORTARIA']);
    const current = await roles.get('PORTARIA');
    if (current === undefined) throw new Error('no role');
    const { _id, _rev, docType, ...fields } = current;
    expect(await roles.update(current, { ...fields, permissions: ['attendance', 'reports'] })).to.not.equal(
      'CONFLICT',
    );
    expect(await roles.permissionsOf(['PORTARIA'])).to.have.members(['attendance', 'reports']);
    await before;
    // The listing begun before the change did not fill the cache with what it read.
    expect(await roles.permissionsOf(['PORTARIA'])).to.have.members(['attendance', 'reports']);
  });
});
