/**
 * Backups of a running service (decision 0044): asked over HTTP while check-ins and syncs go on,
 * then restored into a fresh DATA_DIR, where the service answers what was acknowledged before the
 * backup and its records agree with the events the file holds.
 */
import { spawn } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { expect } from 'chai';
import { EXIT } from '../../src/backup/cli.js';
import { cli } from '../support/backupRoundTrip.js';
import { call } from '../support/http.js';
import { expectLiveBackupRestores, get } from '../support/liveBackupRoundTrip.js';
import { collect, type ServiceProcess, serviceProcess } from '../support/mainProcess.js';
import { seedSmallRoster } from '../support/seed.js';
import { tempDirs } from '../support/tempDir.js';
import { authHeaders, DEV_TOKENS, startTestService, type TestService } from '../support/testService.js';

const DAY = '2026-11-26';
const { DEV_ADMIN_TOKEN: ADMIN, DEV_CALLER_TOKEN: CALLER } = DEV_TOKENS;

/** A port nothing listens on: one just released. */
const closedPort = async (): Promise<number> => {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
};

describe('live backup (embedded store, the service running)', function () {
  this.timeout(180_000);
  const { fresh, removeAll } = tempDirs();
  let svc: TestService | undefined;

  after(async () => {
    await svc?.dispose();
    await removeAll();
  });

  it('a backup asked over HTTP while check-ins and syncs go on restores what was acknowledged before it, with records that agree with its events', async () => {
    svc = await startTestService();
    await expectLiveBackupRestores(
      svc,
      { DATA_DIR: await fresh('live-restored') },
      await fresh('live-backup'),
    );
  });

  it('is for an ADMIN only, and each backup handed out is audited as an EXPORT', async () => {
    if (svc === undefined) throw new Error('no service');
    const { url } = svc;
    const noToken = await fetch(`${url}/api/v1/backup`);
    expect(noToken.status).to.equal(401);
    const caller = await call(`${url}/api/v1/backup`, { headers: authHeaders(CALLER) });
    expect(caller.status).to.equal(403);
    const refused = await cli(
      ['backup', '--out', join(await fresh('refused'), 'x.ndjson'), '--server', url],
      {
        CHAMADA_TOKEN: CALLER,
      },
    );
    expect(refused.status).to.equal(EXIT.failed);
    expect(refused.stderr).to.contain('the service refused the backup: FORBIDDEN_ROLE');
    await svc.deps.audit.flush();
    const log = JSON.stringify(await get(url, '/api/v1/audit-logs?endpoint=GET%20/api/v1/backup'));
    expect(log).to.contain('"action":"EXPORT"');
    expect(log).to.contain('"outcome":"SUCCESS"');
  });

  it('usage: --server needs an http URL and CHAMADA_TOKEN, and restore takes no --server', async () => {
    const out = join(await fresh('usage'), 'x.ndjson');
    expect((await cli(['backup', '--out', out, '--server', 'http://127.0.0.1:1'], {})).stderr).to.contain(
      'CHAMADA_TOKEN is not set',
    );
    expect(
      (await cli(['backup', '--out', out, '--server', 'ftp://x'], { CHAMADA_TOKEN: ADMIN })).status,
    ).to.equal(EXIT.usage);
    expect((await cli(['restore', '--in', out, '--server', 'http://x'], {})).status).to.equal(EXIT.usage);
    const down = await cli(['backup', '--out', out, '--server', `http://127.0.0.1:${await closedPort()}`], {
      CHAMADA_TOKEN: ADMIN,
    });
    expect(down.status).to.equal(EXIT.failed);
    expect(down.stderr).to.match(/backup failed: .*ECONNREFUSED/);
  });

  it('a backup whose connection is cut half-way leaves no file', async () => {
    // A service that sends the first lines of a backup and drops the connection.
    const cutting = createHttpServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/x-ndjson' });
      res.write('{"kind":"header","format":"chamada-backup","version":1}\n{"kind":"begin"');
      setTimeout(() => res.socket?.destroy(), 50);
    });
    await new Promise<void>((resolve) => cutting.listen(0, '127.0.0.1', resolve));
    try {
      const address = cutting.address();
      if (address === null || typeof address === 'string') throw new Error('no port');
      const dir = await fresh('cut');
      const run = await cli(
        ['backup', '--out', join(dir, 'cut.ndjson'), '--server', `http://127.0.0.1:${address.port}`],
        {
          CHAMADA_TOKEN: ADMIN,
        },
      );
      expect(run.status).to.equal(EXIT.failed);
      expect(run.stderr).to.contain('backup failed');
      expect(await readdir(dir)).to.deep.equal([]);
    } finally {
      cutting.closeAllConnections();
      await new Promise((resolve) => cutting.close(resolve));
    }
  });
});

describe('the backup command against a running service (separate processes)', function () {
  this.timeout(180_000);
  let service: ServiceProcess | undefined;
  const { fresh, removeAll } = tempDirs();

  after(async () => {
    await service?.dispose();
    await removeAll();
  });

  const command = async (args: ReadonlyArray<string>, env: Record<string, string>) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/backup/cli.ts', ...args], {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const stderr = collect(child.stderr);
    const status = await new Promise<number | null>((resolve) => child.on('close', resolve));
    return { status, stderr: stderr() };
  };

  it('backs up through --server where the embedded store is locked, and the file restores', async () => {
    service = await serviceProcess('live-cli', { AUTH_MODE: 'dev', ...DEV_TOKENS });
    const url = await service.start();
    await seedSmallRoster(url, ['Ana', 'Bruno'], DAY);
    const dir = await fresh('live-cli-out');
    const direct = await command(['backup', '--out', join(dir, 'direct.ndjson')], {
      DATA_DIR: service.dataDir,
    });
    expect(direct.status, direct.stderr).to.equal(EXIT.inUse);
    expect(direct.stderr).to.contain('--server URL');
    const file = join(dir, 'live.ndjson.gz');
    const run = await command(['backup', '--out', file, '--server', url], { CHAMADA_TOKEN: ADMIN });
    expect(run.status, run.stderr).to.equal(EXIT.ok);
    expect(run.stderr).to.match(/backup: events done, \d+ documents/);
    expect(run.stderr).not.to.contain(ADMIN);
    const target = await fresh('live-cli-restored');
    const restore = await cli(['restore', '--in', file], { DATA_DIR: target });
    expect(restore.status, restore.stderr).to.equal(EXIT.ok);
    const restored = await startTestService({ env: { DATA_DIR: target } });
    try {
      const names = (await restored.stores.students.listAll()).map((s) => s.displayName).sort();
      expect(names).to.deep.equal(['Ana', 'Bruno']);
    } finally {
      await restored.dispose();
    }
  });
});
