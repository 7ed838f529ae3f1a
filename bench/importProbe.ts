/**
 * One 10,000-row file through `POST /api/v1/imports/students` on a real CouchDB, and what it cost:
 * the answer and its time, the CPU of the service, of CouchDB's Erlang VM and of its `couchjs`
 * processes (live and reaped) during the file, read from `/proc`; what a kiosk's check-ins saw
 * meanwhile (one after the other, a pause between, as a desk does); the first search after the file
 * and until CouchDB's indexing ended; and, with `PROBE_PROXY=1`, every request the service made to
 * CouchDB timed by kind (the slow ones listed), through a proxy in this process. Decision 0064.
 *
 *   PROBE_COUCHDB_URL=<CouchDB with credentials> PROBE_COUCH_PID=<its beam.smp pid> \
 *     npx tsx bench/importProbe.ts [rows=10000] [runs=1]
 *   PROBE_EMBEDDED=1 npx tsx bench/importProbe.ts [rows] [runs]   (the embedded store)
 *   PROBE_PRELOAD=<rows>: that many other rows imported first (files of 10,000), the file joining them
 *   PROBE_COUCHDB_CONFIG=keep: the node's own compaction schedule, not the deployment's (0066)
 *   PROBE_SIZES=1: at the end, each database's and index's file against its live data
 *
 * The service runs from the bundle (`dist/server/main.js`, rebuilt when a source is newer), each run
 * on databases of its own prefix (`PROBE_ENTRY=<another bundle>`: that one, for a pair in one session).
 * Linux only (it reads `/proc`).
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { collect, listeningUrl, startMain, waitHealthy } from '../test/support/mainProcess.js';
import { serviceEntry } from '../test/support/serviceBundle.js';
import { applyDeployedCompaction, basicAuth, couchCpu } from './couchServer.js';
import { kindOf } from './countingProxy.js';
import { cpuMs, quiet, signedInAdmin } from './scenarios/serviceLoad.js';

interface Timed {
  readonly kind: string;
  readonly ms: number;
  readonly status: number | 'aborted';
}

/** A proxy that times every request by kind; bodies stream through untouched. */
const timingProxy = async (target: URL, prefix: string) => {
  const timed: Timed[] = [];
  const auth = basicAuth(target.href).authorization;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const t0 = performance.now();
    const kind = kindOf(req.method ?? 'GET', req.url ?? '/', prefix);
    let ended = false;
    const upstream = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: target.host, authorization: auth },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
        answer.on('end', () => {
          ended = true;
          timed.push({ kind, ms: performance.now() - t0, status: answer.statusCode ?? 0 });
        });
      },
    );
    upstream.on('error', () => res.destroy());
    res.on('close', () => {
      if (ended) return;
      timed.push({ kind, ms: performance.now() - t0, status: 'aborted' });
      upstream.destroy();
    });
    req.pipe(upstream);
  });
  server.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const address: AddressInfo | string | null = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  const url = new URL(target.href);
  url.host = `127.0.0.1:${port}`;
  return { url: url.href.replace(/\/$/, ''), timed, close: () => new Promise((r) => server.close(r)) };
};

const csvOf = (rows: number, from = 0): string =>
  [
    'Código;Nome;Data de Nascimento;Responsável;Telefone;Turma',
    ...Array.from({ length: rows }, (_, k) => from + k).map(
      (i) =>
        `M-${i};${['Maria', 'Ana', 'João', 'Pedro', 'Sofia'][i % 5]} Costa ${String(i).padStart(6, '0')};` +
        `${String((i % 28) + 1).padStart(2, '0')}/0${(i % 9) + 1}/2019;Responsável ${i};` +
        `(11) 9${String(10_000_000 + i).slice(-8)};Maternal`,
    ),
  ].join('\r\n');

const post = async (url: string, auth: Record<string, string>, path: string, body: unknown) => {
  const r = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
    body: JSON.stringify(body),
  });
  const json: unknown = await r.json().catch(() => undefined);
  return { status: r.status, json };
};

const idOf = (json: unknown, key: string): string => {
  const v: unknown = typeof json === 'object' && json !== null ? Reflect.get(json, key) : undefined;
  if (typeof v !== 'string') throw new Error(`no ${key} in ${JSON.stringify(json)}`);
  return v;
};

const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? Number.NaN;
};

/** CouchDB's JSON answer to a request, sent with the URL's credentials. */
const couchJson = async (couch: URL, path: string, method = 'GET'): Promise<unknown> => {
  const { base, authorization } = basicAuth(couch.href);
  return fetch(`${base}${path}`, { method, headers: { authorization } }).then((r) => r.json());
};

/** Removes the run's databases: CouchDB indexes what a run left, which the next run's CPU would count. */
const dropDatabases = async (couch: URL, prefix: string): Promise<void> => {
  const names = await couchJson(couch, '/_all_dbs');
  for (const name of Array.isArray(names) ? names : [])
    if (typeof name === 'string' && name.startsWith(prefix)) await couchJson(couch, `/${name}`, 'DELETE');
};

const sizesOf = (body: unknown): { file: number; active: number } => {
  const sizes: unknown = typeof body === 'object' && body !== null ? Reflect.get(body, 'sizes') : undefined;
  const n = (k: string): number => {
    const v: unknown = typeof sizes === 'object' && sizes !== null ? Reflect.get(sizes, k) : undefined;
    return typeof v === 'number' ? v : 0;
  };
  return { file: n('file'), active: n('active') };
};

/**
 * What the run's databases and their indexes hold on disk (`sizes.file`) against their live data
 * (`sizes.active`), in MB: what compaction would give back (`PROBE_SIZES=1`, decision 0066).
 */
const diskOf = async (couch: URL, prefix: string): Promise<string> => {
  const get = (path: string): Promise<unknown> => couchJson(couch, path);
  const names: unknown = await get('/_all_dbs');
  const mb = (b: number) => (b / 1e6).toFixed(1);
  const lines: string[] = [];
  for (const name of Array.isArray(names) ? names : []) {
    if (typeof name !== 'string' || !name.startsWith(prefix)) continue;
    const db = sizesOf(await get(`/${name}`));
    const parts = [`${name.slice(prefix.length)} ${mb(db.file)}/${mb(db.active)}`];
    const ddocs: unknown = await get(`/${name}/_design_docs`);
    const rows: unknown = typeof ddocs === 'object' && ddocs !== null ? Reflect.get(ddocs, 'rows') : [];
    for (const row of Array.isArray(rows) ? rows : []) {
      const id: unknown = typeof row === 'object' && row !== null ? Reflect.get(row, 'id') : undefined;
      if (typeof id !== 'string') continue;
      const info: unknown = await get(`/${name}/${id}/_info`);
      const index: unknown =
        typeof info === 'object' && info !== null ? Reflect.get(info, 'view_index') : undefined;
      const ix = sizesOf(index);
      parts.push(`${id.slice('_design/'.length)} ${mb(ix.file)}/${mb(ix.active)}`);
    }
    lines.push(`  disk (file/live MB): ${parts.join(', ')}`);
  }
  return lines.join('\n');
};

const taskList = async (couch: URL): Promise<unknown[]> => {
  const tasks = await couchJson(couch, '/_active_tasks');
  return Array.isArray(tasks) ? tasks : [];
};

/**
 * Waits until CouchDB's tasks of databases named with `prefix` ('' for every database) have been none,
 * or have not moved, for `forS` seconds on end (at most `maxS`): smoosh suspends a compaction outside
 * its window (0066) and `_active_tasks` still lists it, unchanged, until the window opens.
 */
const untilTasksSettle = async (couch: URL, prefix: string, forS: number, maxS: number): Promise<void> => {
  let before = '';
  for (let i = 0, still = 0; i < maxS && still < forS; i += 1) {
    const now = JSON.stringify((await taskList(couch)).filter((t) => JSON.stringify(t).includes(prefix)));
    still = now === '[]' || now === before ? still + 1 : 0;
    before = now;
    await new Promise((r) => setTimeout(r, 1000));
  }
};

/** A task as `kind database design-document` (the shard's range and the prefix left out). */
const taskName = (task: unknown, prefix: string): string => {
  if (typeof task !== 'object' || task === null) return 'unknown';
  const field = (k: string): string => {
    const v: unknown = Reflect.get(task, k);
    return typeof v === 'string' ? v : '';
  };
  const db = field('database')
    .replace(/^shards\/[^/]+\//, '')
    .replace(prefix, '')
    .replace(/\.\d+$/, '');
  return `${field('type')} ${db} ${field('design_document')}`.trim();
};

const probe = async (
  couch: URL | undefined,
  beam: number,
  rows: number,
  withProxy: boolean,
): Promise<void> => {
  const prefix = `probe${randomUUID().slice(0, 8)}_`;
  const proxy = withProxy && couch !== undefined ? await timingProxy(couch, prefix) : undefined;
  const dataDir = await mkdtemp(join(tmpdir(), prefix));
  const child = startMain(
    {
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'info',
      AUTH_MODE: 'jwt',
      NODE_ENV: 'development',
      ...(couch === undefined
        ? {}
        : { COUCHDB_URL: proxy?.url ?? couch.href.replace(/\/$/, ''), DB_PREFIX: prefix }),
      RATE_LIMIT_REQUESTS: '1000000',
      JWT_SECRET: randomUUID() + randomUUID(),
      METRICS_ALLOW: '127.0.0.1/32',
    },
    process.env.PROBE_ENTRY === undefined
      ? await serviceEntry()
      : { kind: 'built', path: process.env.PROBE_ENTRY },
  );
  const stdout = collect(child.stdout);
  try {
    const url = await listeningUrl(stdout, 60_000);
    await waitHealthy(url);
    const auth = await signedInAdmin(url);
    idOf((await post(url, auth, '/api/v1/classes', { name: 'Maternal' })).json, 'classId');
    // The kiosk's children: a class of their own, sessions, students made one by one.
    const kioskClass = idOf((await post(url, auth, '/api/v1/classes', { name: 'Kiosk' })).json, 'classId');
    const sessions: string[] = [];
    for (const date of ['2026-11-23', '2026-11-24', '2026-11-25', '2026-11-26', '2026-11-27', '2026-11-28'])
      sessions.push(
        idOf((await post(url, auth, '/api/v1/sessions', { classId: kioskClass, date })).json, 'sessionId'),
      );
    const kids: string[] = [];
    for (let i = 0; i < 50; i += 1)
      kids.push(
        idOf(
          (
            await post(url, auth, '/api/v1/students', {
              displayName: `Kiosk Child ${i}`,
              guardianName: 'G',
              phones: [],
              classId: kioskClass,
            })
          ).json,
          'studentId',
        ),
      );
    const pairs = sessions.flatMap((sessionId) => kids.map((studentId) => ({ sessionId, studentId })));
    // A roll already there (`PROBE_PRELOAD` rows, in files of 10,000): the file then joins it.
    for (let from = 0; from < preload; from += 10_000) {
      const a = performance.now();
      const r = await fetch(`${url}/api/v1/imports/students?dryRun=false`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'text/csv', 'idempotency-key': randomUUID() },
        body: csvOf(Math.min(10_000, preload - from), rows + from),
      });
      await r.text();
      process.stderr.write(
        `preload ${from}: ${r.status} in ${((performance.now() - a) / 1000).toFixed(1)} s\n`,
      );
    }
    await quiet(child.pid, 60_000);
    // CouchDB idle (every database's indexing and compaction, not only this run's) before the file,
    // for five seconds on end: the views' refresh of the roll before can start a moment after one
    // idle sample, and its indexing then ran into the file (a third of the runs, decision 0066).
    if (couch !== undefined) await untilTasksSettle(couch, '', 5, 240);
    // The door before the file: the same check-ins on the idle service, the baseline of those during it.
    const idle: number[] = [];
    for (let k = pairs.length - 1; k >= pairs.length - 8; k -= 1) {
      const a = performance.now();
      const r = await post(url, auth, '/api/v1/check-in', pairs[k]);
      if (r.status === 201) idle.push(performance.now() - a);
    }
    const load0 = loadavg()[0] ?? 0;
    const svc0 = (await cpuMs(child.pid)) ?? 0;
    const couch0 = await couchCpu(beam);
    if (proxy !== undefined) proxy.timed.length = 0;
    const logFrom = stdout().length;
    let importing = true;
    const checkIns: Array<{ ms: number; status: number }> = [];
    const kiosk = (async () => {
      for (let k = 0; importing && k < pairs.length; k += 1) {
        const t0 = performance.now();
        const r = await post(url, auth, '/api/v1/check-in', pairs[k]);
        checkIns.push({ ms: performance.now() - t0, status: r.status });
        await new Promise((ok) => setTimeout(ok, 250));
      }
    })();
    // What CouchDB is busy with through the file: each task seen, and in how many samples (one a second).
    const tasksSeen = new Map<string, number>();
    const watchingTasks = (async () => {
      while (importing && couch !== undefined) {
        for (const task of new Set((await taskList(couch).catch(() => [])).map((t) => taskName(t, prefix))))
          tasksSeen.set(task, (tasksSeen.get(task) ?? 0) + 1);
        await new Promise((ok) => setTimeout(ok, 1000));
      }
    })();
    // The pipeline's backlog (its gauge, read at each scrape) through the file: what a check-in waits behind.
    const backlog: number[] = [];
    const sampling = (async () => {
      while (importing) {
        const text = await fetch(`${url}/metrics`).then(
          (r) => r.text(),
          () => '',
        );
        const m = /^chamada_pipeline_pending_events (\d+)/m.exec(text);
        if (m?.[1] !== undefined) backlog.push(Number(m[1]));
        await new Promise((ok) => setTimeout(ok, 1000));
      }
    })();
    const t0 = performance.now();
    const answer = await fetch(`${url}/api/v1/imports/students?dryRun=false`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'text/csv', 'idempotency-key': randomUUID() },
      body: csvOf(rows),
    });
    const body = await answer.text();
    const seconds = (performance.now() - t0) / 1000;
    importing = false;
    const svc1 = (await cpuMs(child.pid)) ?? 0;
    const couch1 = await couchCpu(beam);
    const load1 = loadavg()[0] ?? 0;
    await kiosk;
    await sampling;
    await watchingTasks;
    for (const [task, n] of [...tasksSeen].sort((a, b) => b[1] - a[1]))
      process.stderr.write(`  task during the file: ${task} in ${n} samples\n`);
    // The office searches right after the file: one child of it, by name and number.
    const wanted = 'Pedro Costa 004323';
    const s0 = performance.now();
    const search = await fetch(`${url}/api/v1/students?limit=50&q=${encodeURIComponent(wanted)}`, {
      headers: auth,
    });
    const searchText = await search.text();
    const firstSearchMs = performance.now() - s0;
    // Until the search finds the child (the index holds the file), asked every half second.
    let foundAfterMs = search.status === 200 && searchText.includes(wanted) ? firstSearchMs : Number.NaN;
    for (let i = 0; Number.isNaN(foundAfterMs) && i < 120; i += 1) {
      await new Promise((ok) => setTimeout(ok, 500));
      const again = await fetch(`${url}/api/v1/students?limit=50&q=${encodeURIComponent(wanted)}`, {
        headers: auth,
      });
      if (again.status === 200 && (await again.text()).includes(wanted))
        foundAfterMs = performance.now() - s0;
    }
    const searches: number[] = [];
    for (let i = 0; i < 5; i += 1) {
      const a = performance.now();
      await fetch(
        `${url}/api/v1/students?limit=50&q=${encodeURIComponent(`sofia costa 00${4000 + i * 5 + 4}`)}`,
        {
          headers: auth,
        },
      ).then((r) => r.text());
      searches.push(performance.now() - a);
    }
    const i0 = performance.now();
    if (couch !== undefined) await untilTasksSettle(couch, prefix, 1, 300);
    const indexedS = (performance.now() - i0) / 1000;
    const couch2 = await couchCpu(beam);
    const svcMs = svc1 - svc0;
    const erl = couch1.erlang - couch0.erlang;
    const js = couch1.couchjs - couch0.couchjs;
    const ok = checkIns.filter((c) => c.status === 201).map((c) => c.ms);
    const out = {
      answer: answer.status,
      code: answer.status === 200 ? undefined : body.slice(0, 300),
      seconds: Number(seconds.toFixed(1)),
      rowsPerS: answer.status === 200 ? Math.round(rows / seconds) : undefined,
      cpuS: { service: svcMs / 1000, erlang: erl / 1000, couchjs: js / 1000 },
      cpuMsARow: Number(((svcMs + erl + js) / rows).toFixed(2)),
      load: `${load0.toFixed(1)} -> ${load1.toFixed(1)}`,
      idleCheckIns: { p50: Math.round(pct(idle, 50)), max: Math.round(Math.max(...idle)) },
      backlogMax: Math.max(0, ...backlog),
      checkIns: {
        n: checkIns.length,
        statuses: [...new Set(checkIns.map((c) => c.status))].join(','),
        p50: Math.round(pct(ok, 50)),
        p95: Math.round(pct(ok, 95)),
        max: Math.round(Math.max(...checkIns.map((c) => c.ms))),
      },
      firstSearch: {
        status: search.status,
        found: searchText.includes(wanted),
        ms: Math.round(firstSearchMs),
        foundAfterMs: Math.round(foundAfterMs),
      },
      nextSearchesMs: searches.map(Math.round),
      indexingAfterS: Number(indexedS.toFixed(1)),
      afterCpuS: {
        erlang: (couch2.erlang - couch1.erlang) / 1000,
        couchjs: (couch2.couchjs - couch1.couchjs) / 1000,
      },
    };
    process.stdout.write(`${JSON.stringify(out)}\n`);
    const warnings = stdout()
      .slice(logFrom)
      .split('\n')
      .filter((l) => /"level":(4|5|6)\d/.test(l));
    for (const w of warnings.slice(0, 12)) process.stdout.write(`  log: ${w.slice(0, 3000)}\n`);
    if (proxy !== undefined) {
      const byKind = new Map<string, number[]>();
      for (const t of proxy.timed) byKind.set(t.kind, [...(byKind.get(t.kind) ?? []), t.ms]);
      for (const [kind, ms] of [...byKind].sort((a, b) => b[1].length - a[1].length))
        process.stdout.write(
          `  ${kind}: ${ms.length}, p50 ${Math.round(pct(ms, 50))} ms, max ${Math.round(Math.max(...ms))} ms\n`,
        );
      for (const t of proxy.timed.filter((x) => x.ms > 2_500 || x.status === 'aborted'))
        process.stdout.write(`  slow: ${t.kind} ${Math.round(t.ms)} ms ${t.status}\n`);
    }
  } finally {
    child.kill('SIGKILL');
    await proxy?.close();
    if (couch !== undefined && process.env.PROBE_SIZES === '1')
      process.stdout.write(`${await diskOf(couch, prefix).catch((e: unknown) => `  disk: ${String(e)}`)}\n`);
    if (couch !== undefined) await dropDatabases(couch, prefix).catch(() => undefined);
    await rm(dataDir, { recursive: true, force: true });
  }
};

// `PROBE_EMBEDDED=1`: the same file and kiosk on the embedded store (no CouchDB, its CPU read as 0).
const embedded = process.env.PROBE_EMBEDDED === '1';
const couchUrl = process.env.PROBE_COUCHDB_URL;
const beamPid = embedded ? 0 : Number(process.env.PROBE_COUCH_PID);
if (!embedded && (couchUrl === undefined || !Number.isInteger(beamPid))) {
  process.stderr.write('PROBE_COUCHDB_URL and PROBE_COUCH_PID are needed (or PROBE_EMBEDDED=1)\n');
  process.exit(2);
}
// The deployment's compaction schedule (decision 0066), unless `PROBE_COUCHDB_CONFIG=keep`.
if (!embedded && couchUrl !== undefined && process.env.PROBE_COUCHDB_CONFIG !== 'keep')
  process.stdout.write(
    `compaction: ${await applyDeployedCompaction(couchUrl)} (UTC now ${new Date().toISOString().slice(11, 16)})\n`,
  );
const rows = Number(process.argv[2] ?? 10_000);
const runs = Number(process.argv[3] ?? 1);
const preload = Number(process.env.PROBE_PRELOAD ?? 0);
for (let i = 0; i < runs; i += 1)
  await probe(
    embedded || couchUrl === undefined ? undefined : new URL(couchUrl),
    beamPid,
    rows,
    process.env.PROBE_PROXY === '1',
  );
