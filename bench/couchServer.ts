/**
 * The real CouchDB of the bench's CouchDB rows: the one BENCH_COUCHDB_URL names, or else a single node
 * started from the launcher in shared/couchdb beside the checkout (COUCHDB_LAUNCHER overrides where),
 * on a free loopback port, and stopped when the scenario ends. Neither: the rows are left out, so the
 * bench still runs on a fresh clone that has no CouchDB.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface BenchCouch {
  /** With credentials. */
  readonly url: string;
  readonly where: string;
  /** The CouchDB process, when the bench started it: its CPU time is read around a row. */
  readonly pid: number | undefined;
  dispose(): Promise<void>;
}

const launcher = (): string | undefined => {
  const named = process.env.COUCHDB_LAUNCHER;
  if (named !== undefined && named !== '') return named;
  for (const up of ['..', '../..', '../../..']) {
    const candidate = resolve(up, 'shared', 'couchdb', 'couchdb');
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
};

const freePort = (): Promise<number> =>
  new Promise((ok, fail) => {
    const probe = createServer();
    probe.once('error', fail);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      probe.close(() => ok(port));
    });
  });

export const benchCouch = async (): Promise<BenchCouch | undefined> => {
  const given = process.env.BENCH_COUCHDB_URL;
  if (given !== undefined && given !== '')
    return { url: given, where: 'BENCH_COUCHDB_URL', pid: undefined, dispose: async () => undefined };
  const script = launcher();
  if (script === undefined) return undefined;
  const dir = await mkdtemp(join(tmpdir(), 'chamada-bench-couch-'));
  const stop = async () => {
    await run('bash', [script, 'stop', '--dir', dir], { timeout: 60_000 }).catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const port = await freePort();
    const { stdout } = await run(
      'bash',
      [
        script,
        'start',
        '--port',
        String(port),
        '--dir',
        dir,
        '--user',
        'admin',
        '--password',
        randomBytes(16).toString('hex'),
      ],
      { timeout: 120_000, env: { ...process.env, COUCHDB_LOG_LEVEL: 'warning' } },
    );
    const url = /^COUCHDB_URL=(\S+)$/m.exec(stdout)?.[1];
    if (url === undefined) throw new Error(`the launcher printed no COUCHDB_URL: ${stdout.slice(0, 300)}`);
    // The launcher keeps each node's process id in DIR/nodeK/pid.
    const pid = Number((await readFile(join(dir, 'node1', 'pid'), 'utf8').catch(() => '')).trim());
    return {
      url,
      where: 'a single node started from shared/couchdb',
      pid: Number.isSafeInteger(pid) && pid > 0 ? pid : undefined,
      dispose: stop,
    };
  } catch (e) {
    await stop();
    throw e;
  }
};

/** fetch with the URL's credentials as Basic auth (fetch refuses URLs that carry them). */
export const basicAuth = (url: string): { base: string; authorization: string } => {
  const u = new URL(url);
  const authorization = `Basic ${Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString('base64')}`;
  u.username = '';
  u.password = '';
  return { base: u.toString().replace(/\/$/, ''), authorization };
};
