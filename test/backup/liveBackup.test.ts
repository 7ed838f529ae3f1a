/**
 * Backups of a running service (decision 0044): asked over HTTP while check-ins and syncs go on,
 * then restored into a fresh DATA_DIR, where the service answers what was acknowledged before the
 * backup and its records agree with the events the file holds.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { expect } from 'chai';
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import { EXIT } from '../../src/backup/cli.js';
import type { Database } from '../../src/store/pouch.js';
import { cli, populateAndRecord, syncFromTablet } from '../support/backupRoundTrip.js';
import { call, decodeAs } from '../support/http.js';
import { collect, type ServiceProcess, serviceProcess } from '../support/mainProcess.js';
import { seedSmallRoster } from '../support/seed.js';
import { tempDirs } from '../support/tempDir.js';
import {
  authHeaders,
  DEV_TOKENS,
  mutate,
  startTestService,
  type TestService,
} from '../support/testService.js';

const DAY = '2026-11-26';
const TABLET = '0b7f1a34-2c1d-4e5f-9a0b-1c2d3e4f5a63';
const { DEV_ADMIN_TOKEN: ADMIN, DEV_CALLER_TOKEN: CALLER } = DEV_TOKENS;

const idsOf = async (db: Database): Promise<ReadonlyArray<string>> =>
  (await db.allDocs()).rows.map((r) => r.id).filter((id) => !id.startsWith('_design/'));

const get = async (url: string, path: string, token = ADMIN): Promise<unknown> => {
  const r = await call(`${url}${path}`, { headers: authHeaders(token) });
  expect(r.status, `${path}: ${r.text}`).to.equal(200);
  return r.json;
};

const Checked = t.type({ checkInId: t.string, code: t.string });
const CheckOutEvent = t.type({ type: t.literal('CHECK_OUT'), payload: t.type({ checkInId: t.string }) });
const ActiveStatus = t.type({ checkIn: t.type({ status: t.string }) });

/** The check-ins whose check-out event a store holds. */
const checkedOutIn = async (db: Database): Promise<ReadonlySet<string>> => {
  const rows = (await db.allDocs({ include_docs: true })).rows;
  return new Set(
    rows.flatMap((r) => {
      const e = CheckOutEvent.decode(r.doc);
      return E.isRight(e) ? [e.right.payload.checkInId] : [];
    }),
  );
};

interface Writes {
  /** Check-ins acknowledged (201), and whether their check-out was acknowledged too. */
  readonly checkIns: Map<string, boolean>;
  readonly marks: number;
}

/**
 * Check-ins and check-outs (REST) and marks from a tablet (sync), one after another until `stopped`
 * or `limit` rounds; resolves once the first round is acknowledged, with the whole loop's end.
 */
const writeWhile = async (
  url: string,
  ids: { readonly student: string; readonly marked: string; readonly sessionId: string },
  stopped: () => boolean,
  limit: number,
): Promise<{ readonly done: Promise<Writes> }> => {
  const writes = { checkIns: new Map<string, boolean>(), marks: 0 };
  const round = async (i: number) => {
    const r = await mutate(
      `${url}/api/v1/check-in`,
      'POST',
      { studentId: ids.student, sessionId: ids.sessionId },
      CALLER,
    );
    expect(r.status, r.text).to.equal(201);
    const checked = decodeAs(Checked, r.json);
    writes.checkIns.set(checked.checkInId, false);
    await syncFromTablet(url, TABLET, CALLER, {
      eventId: randomUUID(),
      type: i % 2 === 0 ? 'MARK_PRESENT' : 'MARK_ABSENT',
      studentId: ids.marked,
      sessionId: ids.sessionId,
      clientTimestamp: new Date(Date.parse(`${DAY}T11:00:00.000Z`) + i * 1000).toISOString(),
    });
    writes.marks += 1;
    const out = await mutate(
      `${url}/api/v1/check-out`,
      'POST',
      { checkInId: checked.checkInId, code: checked.code, pickupPerson: 'G' },
      CALLER,
    );
    expect(out.status, out.text).to.equal(200);
    writes.checkIns.set(checked.checkInId, true);
  };
  await round(0);
  const done = (async () => {
    for (let i = 1; i < limit && !stopped(); i += 1) await round(i);
    return writes;
  })();
  return { done };
};

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
    const { url } = svc;
    await populateAndRecord(svc);
    const roster = await seedSmallRoster(url, ['Dora', 'Edu'], DAY);
    const [dora, edu] = roster.studentIds;
    if (dora === undefined || edu === undefined) throw new Error('no students');
    const students = await get(url, '/api/v1/students?limit=200');

    let backedUp = false;
    const writing = await writeWhile(
      url,
      { student: dora, marked: edu, sessionId: roster.sessionId },
      () => backedUp,
      200,
    );
    // What the store holds now was acknowledged before the backup was asked for: all of it must be in.
    await svc.deps.audit.flush();
    const before = { events: await idsOf(svc.store.db.events), audit: await idsOf(svc.store.db.audit) };
    const file = join(await fresh('live-backup'), 'live.ndjson');
    const run = await cli(['backup', '--out', file, '--server', url], { CHAMADA_TOKEN: ADMIN });
    backedUp = true;
    const writes = await writing.done;
    expect(run.status, run.stderr).to.equal(EXIT.ok);
    expect(run.stderr.split('\n').filter((l) => / done, \d+ documents$/.test(l))).to.have.length(5);
    // Writes went on during the backup: the service answered them while it read its store.
    const after = await idsOf(svc.store.db.events);
    expect(after.length).to.be.greaterThan(before.events.length);
    expect((await readFile(file, 'utf8')).trimEnd().split('\n').at(-1)).to.match(/^\{"kind":"complete"/);

    const target = await fresh('live-restored');
    const restore = await cli(['restore', '--in', file], { DATA_DIR: target });
    expect(restore.status, restore.stderr).to.equal(EXIT.ok);
    const restored = await startTestService({ env: { DATA_DIR: target } });
    try {
      await restored.deps.sync.pipeline.catchUp();
      const events = await idsOf(restored.store.db.events);
      expect(events).to.include.members([...before.events]);
      expect(await idsOf(restored.store.db.audit)).to.include.members([...before.audit]);
      expect(await get(restored.url, '/api/v1/students?limit=200')).to.deep.equal(students);
      // Each check-in in the file is open or closed as its events say, whatever its record said
      // when the private database was read.
      const closed = await checkedOutIn(restored.store.db.events);
      let inFile = 0;
      for (const checkInId of writes.checkIns.keys()) {
        const r = await call(`${restored.url}/api/v1/check-in/active?checkInId=${checkInId}`, {
          headers: authHeaders(CALLER),
        });
        // Acknowledged after the events were read: not in the file, and not expected.
        if (r.status === 404) continue;
        expect(r.status, r.text).to.equal(200);
        inFile += 1;
        const { status } = decodeAs(ActiveStatus, r.json).checkIn;
        expect(status, checkInId).to.equal(closed.has(checkInId) ? 'CHECKED_OUT' : 'CHECKED_IN');
      }
      expect(inFile).to.be.greaterThan(0);
      expect(writes.marks).to.be.greaterThan(0);
    } finally {
      await restored.dispose();
    }
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
