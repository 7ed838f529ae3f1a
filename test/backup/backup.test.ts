/** Backup and restore of the embedded store through the command, black-box on both sides. */
import { spawn } from 'node:child_process';
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { EXIT } from '../../src/backup/cli.js';
import { cli, expectRestored, populateAndRecord, type Source } from '../support/backupRoundTrip.js';
import { seedSmallRoster } from '../support/seed.js';
import { tempDirs } from '../support/tempDir.js';
import { startTestService, type TestService } from '../support/testService.js';

const rosterDocs = async (svc: TestService) =>
  (await svc.store.db.roster.allDocs({ include_docs: true })).rows.map((r) => r.doc);

describe('backup and restore (embedded store)', function () {
  this.timeout(120_000);
  const { fresh, keep, removeAll } = tempDirs();
  let sourceDir: string;
  let file: string;
  let source: Source;
  let sourceRoster: unknown;

  before(async () => {
    const service = await startTestService();
    sourceDir = service.deps.config.dataDir;
    keep(sourceDir);
    try {
      source = await populateAndRecord(service);
      await service.deps.replication.reconciler.refresh();
      sourceRoster = await rosterDocs(service);
    } finally {
      await service.stop();
    }
    file = join(await fresh('backup-file'), 'chamada.ndjson.gz');
    const run = await cli(['backup', '--out', file], { DATA_DIR: sourceDir });
    expect(run.status, run.stderr).to.equal(EXIT.ok);
    expect(run.stdout).to.equal('');
  });

  after(removeAll);

  it('a backup restored into a fresh DATA_DIR answers the same: students, check-ins, reports, audit log, roster', async () => {
    const target = await fresh('restored');
    const run = await cli(['restore', '--in', file], { DATA_DIR: target });
    expect(run.status, run.stderr).to.equal(EXIT.ok);
    await expectRestored({ DATA_DIR: target }, source, async (restored) => {
      await restored.deps.replication.reconciler.refresh();
      // Same documents under the same revisions: a tablet's copy stays in line with it.
      expect(await rosterDocs(restored)).to.deep.equal(sourceRoster);
    });
  });

  it('reports progress per database on standard error, and writes a gzipped file', async () => {
    const other = join(await fresh('backup-again'), 'again.ndjson.gz');
    const run = await cli(['backup', '--out', other], { DATA_DIR: sourceDir });
    expect(run.status, run.stderr).to.equal(EXIT.ok);
    const done = run.stderr.split('\n').filter((l) => / done, \d+ documents$/.test(l));
    expect(done.map((l) => l.split(' ')[1])).to.deep.equal([
      'audit',
      'private',
      'roster',
      'projections',
      'events',
    ]);
    const bytes = await readFile(other);
    expect([bytes[0], bytes[1]]).to.deep.equal([0x1f, 0x8b]);
    expect((await stat(other)).size).to.equal(bytes.length);
  });

  it('refuses to restore into a store that holds documents, and writes nothing', async () => {
    const target = await fresh('occupied');
    const other = await startTestService({ env: { DATA_DIR: target } });
    await seedSmallRoster(other.url, ['Zeca']);
    const events = (await other.store.db.events.info()).doc_count;
    await other.stop();
    const run = await cli(['restore', '--in', file], { DATA_DIR: target });
    expect(run.status).to.equal(EXIT.notEmpty);
    expect(run.stderr).to.match(/restore refused: the target store is not empty \(.*private: \d+ documents/);
    expect(run.stderr).to.contain('--force');
    const again = await startTestService({ env: { DATA_DIR: target } });
    try {
      const names = await again.stores.students.listAll();
      expect(names.map((s) => s.displayName)).to.deep.equal(['Zeca']);
      expect((await again.store.db.events.info()).doc_count).to.equal(events);
    } finally {
      await again.stop();
    }
  });

  it('with --force replaces what the store holds by the backup', async () => {
    const target = await fresh('replaced');
    const other = await startTestService({ env: { DATA_DIR: target } });
    await seedSmallRoster(other.url, ['Zeca']);
    await other.stop();
    const run = await cli(['restore', '--in', file, '--force'], { DATA_DIR: target });
    expect(run.status, run.stderr).to.equal(EXIT.ok);
    await expectRestored({ DATA_DIR: target }, source);
  });

  it('refuses a truncated backup before writing anything', async () => {
    const plain = join(await fresh('plain'), 'plain.ndjson');
    expect((await cli(['backup', '--out', plain], { DATA_DIR: sourceDir })).status).to.equal(EXIT.ok);
    const lines = (await readFile(plain, 'utf8')).trimEnd().split('\n');
    await writeFile(plain, `${lines.slice(0, -2).join('\n')}\n`);
    const target = await fresh('truncated');
    const run = await cli(['restore', '--in', plain], { DATA_DIR: target });
    expect(run.status).to.equal(EXIT.failed);
    expect(run.stderr).to.contain('restore refused, nothing was written: the file ends early');
    const missing = await cli(['restore', '--in', join(target, 'no-such-file')], { DATA_DIR: target });
    expect(missing.status).to.equal(EXIT.failed);
    expect(missing.stderr).to.match(/nothing was written: cannot open .*no-such-file \(ENOENT\)/);
    // The target was only opened: a later restore of a whole backup is not refused as "not empty".
    expect((await cli(['restore', '--in', file], { DATA_DIR: target })).status).to.equal(EXIT.ok);
  });

  it('a backup that cannot write its file fails with the reason, leaves nothing, and closes the store', async () => {
    const dir = await fresh('unwritable');
    const run = await cli(['backup', '--out', join(dir, 'no-folder', 'x.ndjson')], { DATA_DIR: sourceDir });
    expect(run.status).to.equal(EXIT.failed);
    expect(run.stderr).to.match(/backup failed: .*ENOENT/);
    expect(await readdir(dir)).to.deep.equal([]);
    const again = await cli(['backup', '--out', '-'], { DATA_DIR: sourceDir });
    expect(again.status, again.stderr).to.equal(EXIT.ok);
    expect(again.stdout.trimEnd().split('\n').at(-1)).to.match(/^\{"kind":"complete"/);
  });

  it('a DATA_DIR without the databases is an error, not an empty backup', async () => {
    const run = await cli(['backup', '--out', join(await fresh('nothing'), 'x.ndjson')], {
      DATA_DIR: await fresh('empty-data'),
    });
    expect(run.status).to.equal(EXIT.failed);
    expect(run.stderr).to.match(/the database chamada_audit does not exist .*check DATA_DIR/);
  });

  it('usage errors exit 2 and name the commands', async () => {
    for (const args of [
      [],
      ['backup'],
      ['restore', '--out', 'x'],
      ['backup', '--out', 'x', '--force'],
      ['dump'],
    ]) {
      const run = await cli(args, { DATA_DIR: sourceDir });
      expect(run.status, args.join(' ')).to.equal(EXIT.usage);
      expect(run.stderr).to.contain('backup --out FILE');
    }
    expect((await cli(['backup', '--out', 'x'], { DB_PREFIX: 'Bad Prefix' })).stderr).to.contain('DB_PREFIX');
  });

  it('never prints CouchDB credentials, even in a connection error', async () => {
    const run = await cli(['backup', '--out', join(await fresh('refused'), 'x.ndjson')], {
      COUCHDB_URL: 'http://operator:pa55word-not-printed@127.0.0.1:1',
    });
    expect(run.status).to.equal(EXIT.failed);
    expect(run.stderr).to.contain('CouchDB at http://***@127.0.0.1:1');
    expect(run.stderr).not.to.contain('pa55word');
    expect(run.stderr).not.to.contain('operator');
  });

  it("tells the operator to stop the service that holds the embedded store's lock", async () => {
    const running = await startTestService();
    try {
      // Another process, as an operator's shell would be: LevelDB's lock is per process.
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', 'src/backup/cli.ts', 'backup', '--out', join(await fresh('locked'), 'x.ndjson')],
        { env: { ...process.env, DATA_DIR: running.deps.config.dataDir }, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let stderr = '';
      child.stderr.on('data', (b: Buffer) => {
        stderr += b.toString('utf8');
      });
      const status = await new Promise<number | null>((resolve) => child.on('close', resolve));
      expect(status, stderr).to.equal(EXIT.inUse);
      expect(stderr).to.match(
        /is open in another process: the embedded store can be read by one process at a time/,
      );
      expect(stderr).to.contain('--server URL');
    } finally {
      await running.dispose();
    }
  });
});
