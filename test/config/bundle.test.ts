/**
 * The image runs the bundle (`scripts/buildServer.ts`), not the sources the other tests run through
 * tsx: a dependency that resolves files at run time, or a native addon folded in by mistake, would
 * break only there. So the bundle is built and run here, through its whole stack once.
 */
import { execFile } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { bundleBackupCommand, bundleServer, latin1Comments } from '../../scripts/buildServer.js';
import { call } from '../support/http.js';
import { type ServiceProcess, serviceProcess } from '../support/mainProcess.js';
import { parseExposition, sampleSum } from '../support/prometheus.js';
import { seedSmallRoster } from '../support/seed.js';
import { makeTempDir, removeDir } from '../support/tempDir.js';
import { authHeaders, DEV_TOKENS, mutationHeaders, startTestService } from '../support/testService.js';

// Two folders below the repository, as the real bundle is.
const OUTFILE = 'build/server/main.js';
const METRICS_TOKEN = 'bundle-metrics-token-0123456789abcdef';
const BACKUP_OUTFILE = 'build/server/backup.js';

describe('the bundled service (what the image runs)', function () {
  this.timeout(120_000);
  let svc: ServiceProcess | undefined;
  before(async () => {
    await bundleServer(OUTFILE);
    await bundleBackupCommand(BACKUP_OUTFILE);
  });
  after(async () => {
    await svc?.dispose();
    await rm('build/server', { recursive: true, force: true });
  });

  it('is Latin-1 throughout, so V8 holds its source text in one byte a character', async () => {
    const text = await readFile(OUTFILE, 'utf8');
    expect(text.match(/[\u0100-\uffff].{0,40}/)?.[0]).to.equal(undefined);
  });

  it('only comment lines lose their characters past Latin-1, one for one', () => {
    const cases: ReadonlyArray<readonly [string, string]> = [
      ['  // N’Ko', '  // N?Ko'],
      ['   * The font’s box', '   * The font?s box'],
      ['/* “top” */', '/* ?top? */'],
      ['  // ¥ stays', '  // ¥ stays'],
      ['const s = "’"; // ’', 'const s = "’"; // ’'],
      ['a\n  // 😀\nb', 'a\n  // ??\nb'],
    ];
    for (const [given, want] of cases) {
      expect(latin1Comments(given), given).to.equal(want);
      expect(latin1Comments(given).length).to.equal(given.length);
    }
  });

  it('starts on an empty directory and serves reads and writes through the store', async () => {
    svc = await serviceProcess(
      'bundle',
      { AUTH_MODE: 'dev', ...DEV_TOKENS, METRICS_TOKEN: METRICS_TOKEN },
      { kind: 'built', path: OUTFILE },
    );
    const url = await svc.start(60_000);
    const health = await call(`${url}/api/v1/health`, {});
    expect(health.status, health.text).to.equal(200);
    const { sessionId, studentIds } = await seedSmallRoster(url, ['Ana']);
    const checkin = await call(`${url}/api/v1/check-in`, {
      method: 'POST',
      headers: mutationHeaders(DEV_TOKENS.DEV_CALLER_TOKEN),
      body: JSON.stringify({ sessionId, studentId: studentIds[0] }),
    });
    expect(checkin.status, checkin.text).to.equal(201);
    const list = await call(`${url}/api/v1/students?limit=5`, {
      headers: authHeaders(DEV_TOKENS.DEV_ADMIN_TOKEN),
    });
    expect(list.status, list.text).to.equal(200);
    expect(list.text).to.contain('Ana');
    // prom-client, folded into the bundle, counts that check-in.
    const metrics = await call(`${url}/metrics`, { headers: { Authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(metrics.status, metrics.text).to.equal(200);
    const samples = parseExposition(metrics.text);
    expect(
      sampleSum(samples, 'chamada_http_request_duration_seconds_count', {
        route: '/api/v1/check-in',
        status: '201',
      }),
    ).to.equal(1);
  });

  it('the bundled backup command backs up a store and restores it elsewhere (LevelDB from node_modules)', async () => {
    const source = await startTestService();
    const dir = await makeTempDir('bundle-backup');
    try {
      await seedSmallRoster(source.url, ['Ana']);
      await source.stop();
      const run = (args: string[], dataDir: string) =>
        promisify(execFile)(process.execPath, [BACKUP_OUTFILE, ...args], {
          env: { ...process.env, DATA_DIR: dataDir },
        });
      const file = join(dir, 'b.ndjson');
      const backup = await run(['backup', '--out', file], source.deps.config.dataDir);
      expect(backup.stderr).to.match(/events done, \d+ documents/);
      const restore = await run(['restore', '--in', file], join(dir, 'restored'));
      expect(restore.stderr).to.match(/restore: \d+ documents from a backup of /);
    } finally {
      await removeDir(source.deps.config.dataDir);
      await removeDir(dir);
    }
  });
});
