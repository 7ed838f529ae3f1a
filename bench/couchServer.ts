/**
 * The real CouchDB of the bench's CouchDB rows: the one BENCH_COUCHDB_URL names, or else a single node
 * started from the launcher in shared/couchdb beside the checkout (COUCHDB_LAUNCHER overrides where),
 * on a free loopback port, and stopped when the scenario ends. Neither: the rows are left out, so the
 * bench still runs on a fresh clone that has no CouchDB.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { parse as parseIni } from 'ini';

const run = promisify(execFile);

export interface BenchCouch {
  /** With credentials. */
  readonly url: string;
  readonly where: string;
  /** The CouchDB process, when the bench started it: its CPU time is read around a row. */
  readonly pid: number | undefined;
  /** The deployment's compaction schedule as set on it, or why not (decision 0066). */
  readonly compaction: string;
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
  const couch = await reachCouch();
  if (couch !== undefined)
    process.stderr.write(
      `bench: CouchDB (${couch.where}), compaction: ${couch.compaction} (UTC now ${new Date().toISOString().slice(11, 16)})\n`,
    );
  return couch;
};

const reachCouch = async (): Promise<BenchCouch | undefined> => {
  const given = process.env.BENCH_COUCHDB_URL;
  if (given !== undefined && given !== '')
    return {
      url: given,
      where: 'BENCH_COUCHDB_URL',
      pid: undefined,
      compaction: await compactionFor(given),
      dispose: async () => undefined,
    };
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
      compaction: await compactionFor(url),
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

/** The deployment's CouchDB settings, mounted into every node by docker-compose.yml. */
const DEPLOYED_INI = fileURLToPath(new URL('../deploy/couchdb/chamada.ini', import.meta.url));

/** What the bench gives its CouchDB: the deployment's schedule, unless `BENCH_COUCHDB_CONFIG=keep`. */
const compactionFor = (url: string): Promise<string> =>
  process.env.BENCH_COUCHDB_CONFIG === 'keep'
    ? Promise.resolve("the node's own (BENCH_COUCHDB_CONFIG=keep)")
    : applyDeployedCompaction(url);

export interface Setting {
  readonly section: string;
  readonly key: string;
  readonly value: string;
}

/**
 * The compaction schedule the deployment gives CouchDB (`[smoosh.*]` of `deploy/couchdb/chamada.ini`,
 * decision 0066). Only these: the file's other settings are a container's (a single node, required
 * sign-in), which a running node of the launcher's must not take.
 */
export const deployedCompaction = async (file = DEPLOYED_INI): Promise<ReadonlyArray<Setting>> => {
  const parsed: unknown = parseIni(await readFile(file, 'utf8'));
  const smoosh = typeof parsed === 'object' && parsed !== null ? Reflect.get(parsed, 'smoosh') : undefined;
  if (typeof smoosh !== 'object' || smoosh === null) return [];
  const settings: Setting[] = [];
  for (const [channel, values] of Object.entries(smoosh)) {
    if (typeof values !== 'object' || values === null) continue;
    for (const [key, value] of Object.entries(values))
      if (typeof value === 'string' || typeof value === 'boolean' || typeof value === 'number')
        settings.push({ section: `smoosh.${channel}`, key, value: String(value) });
  }
  return settings;
};

/**
 * Gives a running CouchDB node the deployment's compaction schedule through its configuration API
 * (`_node/_local`: the node `url` reaches; each node of a cluster is its own), and says what it set,
 * or why not (a user who is not an admin: the bench then runs on the node's own settings). The bench
 * measures Chamada as deployed, and a node the launcher starts has CouchDB's defaults. Not persisted
 * (`X-Couch-Persist: false`): a node someone else runs has its own settings back at its next start.
 */
export const applyDeployedCompaction = async (url: string): Promise<string> => {
  const { base, authorization } = basicAuth(url);
  const settings = await deployedCompaction();
  for (const s of settings) {
    const res = await fetch(`${base}/_node/_local/_config/${s.section}/${s.key}`, {
      method: 'PUT',
      headers: { authorization, 'content-type': 'application/json', 'x-couch-persist': 'false' },
      body: JSON.stringify(s.value),
    });
    await res.arrayBuffer();
    if (!res.ok) return `the node's own (CouchDB refused [${s.section}] ${s.key}: ${res.status})`;
  }
  return settings.map((s) => `[${s.section}] ${s.key} = ${s.value}`).join('; ');
};

const TICKS_PER_SECOND = 100;

const statOf = async (pid: number): Promise<{ ppid: number; name: string; own: number; reaped: number }> => {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const n = (i: number) => Number(f[i] ?? 0);
  return {
    ppid: n(1),
    name,
    own: ((n(11) + n(12)) * 1000) / TICKS_PER_SECOND,
    reaped: ((n(13) + n(14)) * 1000) / TICKS_PER_SECOND,
  };
};

/** The Erlang VM's own CPU, and its JavaScript processes' (children of its `erl_child_setup`). */
export const couchCpu = async (beam: number): Promise<{ erlang: number; couchjs: number }> => {
  if (beam === 0) return { erlang: 0, couchjs: 0 };
  const pids = (await readdir('/proc')).filter((p) => /^\d+$/.test(p)).map(Number);
  const stats = await Promise.all(pids.map(async (pid) => ({ pid, ...(await statOf(pid)) })));
  const setups = stats.filter((s) => s.ppid === beam && s.name === 'erl_child_setup');
  const js = stats.filter((s) => setups.some((p) => p.pid === s.ppid));
  return {
    erlang: (await statOf(beam)).own,
    couchjs: setups.reduce((n, s) => n + s.reaped, 0) + js.reduce((n, s) => n + s.own, 0),
  };
};
