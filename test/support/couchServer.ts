/**
 * A CouchDB server on loopback for tests. Under `npm test` it is express-pouchdb on its own Express 4
 * app, backed by leveldb in a temp dir (no CouchDB needed on a fresh clone). Under
 * `npm run test:couchdb` (`COUCHDB_TEST_URL` set) it is a real Apache CouchDB, one node or a cluster,
 * and where the two disagree CouchDB is right (decision 0023).
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import expressPouchDB from 'express-pouchdb';
import * as t from 'io-ts';
import { type Database, PouchDB } from '../../src/store/pouch.js';
import { makeTempDir, removeDir } from './tempDir.js';

export interface CouchServer {
  /** The URL of the server (credentials included); on a cluster, node 1's. */
  readonly url: string;
  /** One URL per node: the same server reached through each node of a cluster. */
  readonly nodeUrls: ReadonlyArray<string>;
  /** Stops every node at once, dropping open connections, as a crashed server would. */
  stop(): Promise<void>;
  /** Starts it again with the same data. */
  restart(): Promise<void>;
  dispose(): Promise<void>;
}

/** A real CouchDB started by the launcher, whose nodes a test may kill, start, freeze and thaw. */
export interface RealCouchServer extends CouchServer {
  readonly nodes: number;
  killNode(node: number): Promise<void>;
  startNode(node: number): Promise<void>;
  /** SIGSTOP: the node keeps its sockets open and answers nothing, as in a disk stall or a long pause. */
  freezeNode(node: number): Promise<void>;
  thawNode(node: number): Promise<void>;
}

export const isRealCouch = (s: CouchServer): s is RealCouchServer => 'killNode' in s;

/** What `npm run test:couchdb` (scripts/test-couchdb.sh) hands the tests. */
const realCouch = (): { url: string; nodeUrls: string[]; dir?: string; launcher?: string } | undefined => {
  const url = process.env.COUCHDB_TEST_URL;
  if (url === undefined || url === '') return undefined;
  const nodeUrls = (process.env.COUCHDB_TEST_NODE_URLS ?? url).split(/\s+/).filter((u) => u !== '');
  const dir = process.env.COUCHDB_TEST_DIR;
  const launcher = process.env.COUCHDB_TEST_LAUNCHER;
  return {
    url,
    nodeUrls,
    ...(dir === undefined || dir === '' ? {} : { dir }),
    ...(launcher === undefined || launcher === '' ? {} : { launcher }),
  };
};

/** True under `npm run test:couchdb`: the CouchDB variants of the suites run on a real CouchDB. */
export const onRealCouch = (): boolean => realCouch() !== undefined;

/** The nodes of the real CouchDB of `npm run test:couchdb`: 0 outside it, more than 1 on a cluster. */
export const realCouchNodes = (): number => realCouch()?.nodeUrls.length ?? 0;

/** The name a suite's CouchDB variant carries in its title. */
export const couchServerLabel = (): string => {
  const real = realCouch();
  if (real === undefined) return 'CouchDB protocol (express-pouchdb)';
  return real.nodeUrls.length > 1
    ? `real CouchDB, a cluster of ${real.nodeUrls.length} nodes`
    : 'real CouchDB, one node';
};

const listen = (server: Server, port: number): Promise<number> =>
  new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      const address: AddressInfo | string | null = server.address();
      if (address === null || typeof address === 'string') reject(new Error('no address'));
      else resolve(address.port);
    });
  });

/**
 * `GET /{db}/_changes?feed=continuous` as CouchDB answers it. express-pouchdb's own never stops: when
 * the client goes, its heartbeat interval and live feed stay, and keep the test process alive. Answers
 * `undefined` for any other request (express-pouchdb's).
 */
const continuousFeed = (
  Backend: ReturnType<typeof PouchDB.defaults>,
): ((req: IncomingMessage, res: ServerResponse) => true | undefined) => {
  return (req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const [db, part, ...rest] = url.pathname.split('/').filter((p) => p !== '');
    if (req.method !== 'GET' || part !== '_changes' || rest.length > 0 || db === undefined) return undefined;
    if (url.searchParams.get('feed') !== 'continuous') return undefined;
    const q = url.searchParams;
    const since = q.get('since') ?? '0';
    const feed = new Backend(decodeURIComponent(db)).changes({
      live: true,
      since: since === 'now' ? 'now' : Number(since),
      include_docs: q.get('include_docs') === 'true',
      ...(q.get('style') === 'all_docs' ? { style: 'all_docs' as const } : {}),
    });
    res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
    const heartbeat = setInterval(() => res.write('\n'), Number(q.get('heartbeat') ?? 60_000));
    feed.on('change', (change) => res.write(`${JSON.stringify(change)}\n`));
    const end = () => {
      clearInterval(heartbeat);
      feed.cancel();
    };
    feed.on('error', () => {
      end();
      res.end();
    });
    res.on('close', end);
    return true;
  };
};

export const startExpressPouchDB = async (options: { validation?: boolean } = {}): Promise<CouchServer> => {
  const dir = await makeTempDir('couch');
  const Backend = PouchDB.defaults({ prefix: `${join(dir, 'db')}-` });
  const app = expressPouchDB(Backend, {
    mode: 'minimumForPouchDB',
    overrideMode: { include: ['routes/find', ...(options.validation === true ? ['validation'] : [])] },
    inMemoryConfig: true,
  });
  const continuous = continuousFeed(Backend);
  const handle = (req: IncomingMessage, res: ServerResponse) => continuous(req, res) ?? app(req, res);
  let server = createServer(handle);
  const port = await listen(server, 0);
  let running = true;
  const stop = async () => {
    if (!running) return;
    running = false;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await closed;
  };
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    nodeUrls: [url],
    stop,
    async restart() {
      if (running) return;
      server = createServer(handle);
      await listen(server, port);
      running = true;
    },
    async dispose() {
      await stop();
      await removeDir(dir);
    },
  };
};

const run = promisify(execFile);

/** fetch with the URL's credentials as Basic auth (fetch refuses URLs that carry them). */
export const couchFetch = (url: string, init: RequestInit = {}): Promise<Response> => {
  const u = new URL(url);
  const auth = `Basic ${Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString('base64')}`;
  u.username = '';
  u.password = '';
  const headers = new Headers(init.headers);
  headers.set('Authorization', auth);
  if (init.body !== undefined) headers.set('Content-Type', 'application/json');
  return fetch(u, { ...init, headers, signal: init.signal ?? AbortSignal.timeout(30_000) });
};

const AllDbs = t.array(t.string);

/** Deletes every database but CouchDB's own (`_users`, `_replicator`): a fresh server for the test. */
const deleteUserDatabases = async (url: string): Promise<void> => {
  const listed: unknown = await (await couchFetch(`${url}/_all_dbs`)).json();
  if (!AllDbs.is(listed)) throw new Error('CouchDB answered _all_dbs with something else than a list');
  for (const name of listed.filter((n) => !n.startsWith('_'))) {
    const r = await couchFetch(`${url}/${encodeURIComponent(name)}`, { method: 'DELETE' });
    if (!r.ok && r.status !== 404) throw new Error(`could not delete ${name}: ${r.status}`);
  }
};

/** Waits until every node answers `/_up` (after a restart the cluster takes a moment to form). */
const waitUp = async (nodeUrls: ReadonlyArray<string>): Promise<void> => {
  const deadline = Date.now() + 60_000;
  for (const node of nodeUrls)
    for (;;) {
      const up = await couchFetch(`${node}/_up`, { signal: AbortSignal.timeout(2_000) }).then(
        (r) => r.ok,
        () => false,
      );
      if (up) break;
      if (Date.now() > deadline) throw new Error(`${new URL(node).port} is not up after 60 s`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
};

let liveRealServers = 0;

const startRealCouch = async (real: {
  url: string;
  nodeUrls: string[];
  dir?: string;
  launcher?: string;
}): Promise<RealCouchServer> => {
  // One server for the whole run: a test that wiped it under another would see its data vanish.
  if (liveRealServers > 0) throw new Error('a test asked for a second CouchDB while one is in use');
  liveRealServers += 1;
  await deleteUserDatabases(real.url);
  const nodes = real.nodeUrls.length;
  const control = (what: string) => {
    if (real.dir === undefined || real.launcher === undefined)
      throw new Error(
        `${what} needs the CouchDB that npm run test:couchdb started itself (COUCHDB_TEST_DIR, COUCHDB_TEST_LAUNCHER)`,
      );
    return { dir: real.dir, launcher: real.launcher };
  };
  const launch = async (...args: string[]) => {
    const { dir, launcher } = control(args[0] ?? 'the launcher');
    await run('bash', [launcher, ...args, '--dir', dir], { timeout: 120_000 });
  };
  const signal = async (node: number, sig: NodeJS.Signals) => {
    const { dir } = control(`${sig} to node ${node}`);
    const pid = Number((await readFile(join(dir, `node${node}`, 'pid'), 'utf8')).trim());
    if (!Number.isInteger(pid) || pid <= 1) throw new Error(`no pid for node ${node}`);
    process.kill(pid, sig);
  };
  const all = Array.from({ length: nodes }, (_, i) => i + 1);
  // Nodes a test stopped, killed or froze: dispose brings them back for the next test.
  const down = new Set<number>();
  const frozen = new Set<number>();
  let disposed = false;
  const server: RealCouchServer = {
    url: real.url,
    nodeUrls: real.nodeUrls,
    nodes,
    async killNode(node) {
      frozen.delete(node);
      down.add(node);
      await launch('kill-node', String(node));
    },
    async startNode(node) {
      await launch('start-node', String(node));
      down.delete(node);
    },
    async freezeNode(node) {
      await signal(node, 'SIGSTOP');
      frozen.add(node);
    },
    async thawNode(node) {
      await signal(node, 'SIGCONT');
      frozen.delete(node);
    },
    async stop() {
      for (const node of all) await server.killNode(node);
    },
    async restart() {
      for (const node of all) if (down.has(node)) await server.startNode(node);
      await waitUp(real.nodeUrls);
    },
    async dispose() {
      if (disposed) return;
      disposed = true;
      try {
        for (const node of [...frozen]) await server.thawNode(node);
        await server.restart();
        await deleteUserDatabases(real.url);
      } finally {
        liveRealServers -= 1;
      }
    },
  };
  return server;
};

/**
 * A fresh server for a suite or a test: express-pouchdb, or the real CouchDB of `test:couchdb` with
 * every database but its own deleted. `validation: true` makes express-pouchdb run
 * `validate_doc_update` functions, as CouchDB always does.
 */
export const startCouchServer = async (options: { validation?: boolean } = {}): Promise<CouchServer> => {
  const real = realCouch();
  return real === undefined ? startExpressPouchDB(options) : startRealCouch(real);
};

/**
 * The conflicting revisions of document `id` once the copies have had time to agree (at most
 * `withinMs`). On a cluster a copy that lost a race is withdrawn by a deletion that may reach one copy
 * first, CouchDB's internal replication bringing it to the others a moment later, and a quorum read
 * in between can still show the loser as a conflict. What must not be is a loser left standing.
 */
export const conflictsOnceSettled = async (
  db: Database,
  id: string,
  withinMs = 10_000,
): Promise<string[]> => {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const stored = await db.get(id, { conflicts: true });
    const conflicts = stored._conflicts ?? [];
    if (conflicts.length === 0 || Date.now() > deadline) return conflicts;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
};

const SystemStats = t.type({ internal_replication_jobs: t.number });

/** `untilCopiesAgree` on these nodes (one: nothing to wait for). */
const untilNodesAgree = async (nodeUrls: ReadonlyArray<string>, withinMs: number): Promise<number> => {
  if (nodeUrls.length < 2) return 0;
  const started = Date.now();
  let quiet = 0;
  while (quiet < 2 && Date.now() - started < withinMs) {
    const backlogs = await Promise.all(
      nodeUrls.map(async (node) => {
        const body: unknown = await couchFetch(`${node}/_node/_local/_system`, {
          signal: AbortSignal.timeout(5_000),
        }).then(
          (r) => r.json(),
          () => undefined,
        );
        return SystemStats.is(body) ? body.internal_replication_jobs : Number.POSITIVE_INFINITY;
      }),
    );
    quiet = backlogs.every((n) => n === 0) ? quiet + 1 : 0;
    if (quiet < 2) await new Promise((resolve) => setTimeout(resolve, 500));
  }
  return Date.now() - started;
};

/**
 * Waits until no node of a real cluster has internal replication queued, on two reads 500 ms apart,
 * at most `withinMs`; answers how long it waited. A range read (`_all_docs`, `_changes`) is served by
 * one copy of each shard range, not a quorum: right after a node came back, its copies may still lack
 * what the others stored while it was away, and a read they serve shows a subset. Keyed reads are
 * quorum reads and need no wait. On one node or express-pouchdb there is nothing to wait for.
 */
export const untilCopiesAgree = async (couch: CouchServer, withinMs = 60_000): Promise<number> =>
  isRealCouch(couch) ? untilNodesAgree(couch.nodeUrls, withinMs) : 0;

/**
 * `untilCopiesAgree` on the real CouchDB of `npm run test:couchdb`, for a test that reaches it by its
 * URL alone (a service started on COUCHDB_URL, with no `CouchServer` of its own). Nothing to wait for
 * outside that run or on one node.
 */
export const untilTestCouchCopiesAgree = async (withinMs = 60_000): Promise<number> => {
  const real = realCouch();
  return real === undefined ? 0 : untilNodesAgree(real.nodeUrls, withinMs);
};
