/**
 * Backup and restore on a real CouchDB (run by `npm run test:couchdb`, which sets COUCHDB_TEST_URL; not
 * by `npm test`). Every database it makes carries a prefix of its own and is deleted afterwards, so
 * it may share the server with other suites.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { expect } from 'chai';
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import { EXIT } from '../../src/backup/cli.js';
import { cli, expectRestored, populateAndRecord, type Source } from '../support/backupRoundTrip.js';
import { couchFetch, untilTestCouchCopiesAgree } from '../support/couchServer.js';
import { expectLiveBackupRestores } from '../support/liveBackupRoundTrip.js';
import { seedSmallRoster } from '../support/seed.js';
import { makeTempDir, removeDir } from '../support/tempDir.js';
import { startTestService } from '../support/testService.js';

const serverUrl = (): string => {
  const url = process.env.COUCHDB_TEST_URL;
  if (url === undefined || url === '')
    throw new Error('COUCHDB_TEST_URL is not set: run this file under npm run test:couchdb');
  return url;
};

const deleteDatabases = async (url: string, prefix: string): Promise<void> => {
  const listed = t.array(t.string).decode(await (await couchFetch(`${url}/_all_dbs`)).json());
  if (E.isLeft(listed)) throw new Error('CouchDB answered _all_dbs with something else than a list');
  for (const name of listed.right.filter((n) => n.startsWith(prefix))) {
    const r = await couchFetch(`${url}/${encodeURIComponent(name)}`, { method: 'DELETE' });
    if (!r.ok && r.status !== 404) throw new Error(`could not delete ${name}: ${r.status}`);
  }
};

describe('backup and restore on a real CouchDB', function () {
  this.timeout(180_000);
  const run = `bk${randomBytes(4).toString('hex')}`;
  const prefixes = {
    source: `${run}_src_`,
    target: `${run}_dst_`,
    occupied: `${run}_occ_`,
    live: `${run}_live_`,
    liveTarget: `${run}_lvd_`,
  };
  const env = (prefix: string) => ({ COUCHDB_URL: serverUrl(), DB_PREFIX: prefix });
  const dirs: string[] = [];
  let file: string;
  let source: Source;

  before(async () => {
    const service = await startTestService({ env: env(prefixes.source) });
    dirs.push(service.deps.config.dataDir);
    try {
      source = await populateAndRecord(service);
    } finally {
      await service.stop();
    }
    const dir = await makeTempDir('couch-backup');
    dirs.push(dir);
    file = join(dir, 'chamada.ndjson.gz');
    // The backup reads every database by range, one copy of each shard on a cluster: once all agree.
    await untilTestCouchCopiesAgree();
    const backup = await cli(['backup', '--out', file], env(prefixes.source));
    expect(backup.status, backup.stderr).to.equal(EXIT.ok);
    // The URL's password is never printed.
    const password = decodeURIComponent(new URL(serverUrl()).password);
    expect(backup.stderr).not.to.contain(password);
    expect(backup.stderr).to.contain('CouchDB at http://***@');
  });

  after(async () => {
    for (const prefix of Object.values(prefixes)) await deleteDatabases(serverUrl(), prefix);
    for (const dir of dirs) await removeDir(dir);
  });

  it('a backup restored under a new prefix answers the same: students, check-ins, reports, audit log', async () => {
    const restore = await cli(['restore', '--in', file], env(prefixes.target));
    expect(restore.status, restore.stderr).to.equal(EXIT.ok);
    await expectRestored(env(prefixes.target), source);
  });

  it('refuses a target that holds documents; --force replaces them', async () => {
    const other = await startTestService({ env: env(prefixes.occupied) });
    dirs.push(other.deps.config.dataDir);
    try {
      await seedSmallRoster(other.url, ['Zeca']);
    } finally {
      await other.stop();
    }
    const refused = await cli(['restore', '--in', file], env(prefixes.occupied));
    expect(refused.status).to.equal(EXIT.notEmpty);
    expect(refused.stderr).to.match(/restore refused: the target store is not empty/);
    const forced = await cli(['restore', '--in', file, '--force'], env(prefixes.occupied));
    expect(forced.status, forced.stderr).to.equal(EXIT.ok);
    await expectRestored(env(prefixes.occupied), source);
  });

  it('a backup asked of the running service while writes go on restores what was acknowledged before it (0044)', async () => {
    const live = await startTestService({ env: env(prefixes.live) });
    dirs.push(live.deps.config.dataDir);
    const dir = await makeTempDir('couch-live-backup');
    dirs.push(dir);
    try {
      await expectLiveBackupRestores(live, env(prefixes.liveTarget), dir);
    } finally {
      await live.stop();
    }
  });
});
