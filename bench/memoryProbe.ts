/**
 * Where a service's resident memory goes after an import and a search load (decision 0062): imports
 * `MEMORY_PROBE_STUDENTS` (default 20,000) students as the growth bench does, runs its one-child
 * search for a few seconds, then prints the process's resident memory by mapping (V8's and malloc's
 * anonymous memory, LevelDB's mapped tables, the node binary) and V8's heap figures from /metrics.
 *
 *   NODE_OPTIONS='--max-semi-space-size=4' tsx bench/memoryProbe.ts dist/server/main.js
 *
 * `MEMORY_PROBE_HEAP_SNAPSHOT=1` (with `--heapsnapshot-signal=SIGUSR2` in NODE_OPTIONS) takes a heap
 * snapshot after the load; `MEMORY_PROBE_RESTART=1` stops the service and times its start again.
 *
 * `NODE_OPTIONS` reaches the service (flags after the service's own ones), so runs with and without a
 * flag can be compared one after the other.
 */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { serviceProcess, waitHealthy } from '../test/support/mainProcess.js';
import { drive, quiet, signedInAdmin } from './scenarios/serviceLoad.js';

const FIRST = ['Maria', 'Ana', 'João', 'Pedro', 'Gabriel', 'Lucas', 'Júlia', 'Sofia', 'Miguel', 'Laura'];
const SUR = ['da Silva', 'Santos', 'Oliveira', 'Souza', 'Pereira', 'Costa', 'Rodrigues'];
const num = (i: number) => String(i).padStart(6, '0');
const csv = (from: number, to: number) =>
  [
    'Código;Nome;Data de Nascimento;Responsável;Telefone;Turma',
    ...Array.from({ length: to - from }, (_, k) => {
      const i = from + k;
      const name = `${FIRST[i % 10]} ${SUR[Math.floor(i / 10) % 7]} ${num(i)}`;
      return `M-${i};${name};${String((i % 28) + 1).padStart(2, '0')}/0${(i % 9) + 1}/2019;Responsável ${i};(11) 9${String(10_000_000 + i).slice(-8)};Maternal`;
    }),
  ].join('\r\n');

/**
 * Resident kB by mapping kind, from /proc/<pid>/smaps, and LevelDB's mapped tables by database (the
 * folder that holds them, its path under the data directory).
 */
const residentByKind = async (
  pid: number,
): Promise<{ kinds: Record<string, number>; tables: Record<string, number> }> => {
  const out: Record<string, number> = {};
  const tables: Record<string, number> = {};
  let kind = 'other';
  let database = '';
  for (const line of (await readFile(`/proc/${pid}/smaps`, 'utf8')).split('\n')) {
    const head = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head !== null) {
      const name = head[1] ?? '';
      database = name.endsWith('.ldb') ? name.split('/').slice(-3, -1).join('/') : '';
      kind =
        name === ''
          ? 'anonymous'
          : name.endsWith('.ldb')
            ? 'leveldb tables'
            : name.endsWith('/node')
              ? 'node binary'
              : name === '[heap]'
                ? 'malloc heap'
                : 'other';
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss === null) continue;
    out[kind] = (out[kind] ?? 0) + Number(rss[1]);
    if (database !== '') tables[database] = (tables[database] ?? 0) + Number(rss[1]);
  }
  return { kinds: out, tables };
};

const main = async () => {
  const entry = process.argv[2] ?? 'dist/server/main.js';
  const students = Number(process.env.MEMORY_PROBE_STUDENTS ?? 20_000);
  const env: Record<string, string> = {
    AUTH_MODE: 'jwt',
    NODE_ENV: 'development',
    RATE_LIMIT_REQUESTS: '1000000',
    METRICS_ALLOW: '127.0.0.1/32',
  };
  // A flag to compare, and `bench/cpuProfile.mjs` (NODE_OPTIONS='--import ./bench/cpuProfile.mjs' with
  // BENCH_CPU_PROF_DIR) to profile the service.
  for (const name of ['NODE_OPTIONS', 'BENCH_CPU_PROF_DIR']) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  const svc = await serviceProcess('memory-probe', env, { kind: 'built', path: entry });
  try {
    const url = await svc.start(60_000);
    await waitHealthy(url);
    const auth = await signedInAdmin(url);
    const h = { ...auth, 'content-type': 'application/json', 'idempotency-key': randomUUID() };
    const maternal: unknown = await fetch(`${url}/api/v1/classes`, {
      method: 'POST',
      headers: h,
      body: JSON.stringify({ name: 'Maternal' }),
    }).then((r) => r.json());
    const classId =
      typeof maternal === 'object' && maternal !== null && 'classId' in maternal
        ? String(maternal.classId)
        : '';
    for (let from = 0; from < students; from += 10_000) {
      const t0 = Date.now();
      const r = await fetch(`${url}/api/v1/imports/students?dryRun=false`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'text/csv', 'idempotency-key': randomUUID() },
        body: csv(from, Math.min(students, from + 10_000)),
      });
      await r.arrayBuffer();
      process.stdout.write(`import ${from}: ${r.status} in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
    }
    await quiet(svc.pid(), 120_000);
    const i = Math.floor((students * 0.4321) / 10) * 10;
    const path = `/api/v1/students?limit=50&q=${encodeURIComponent(`maria ${num(i)}`)}`;
    const load = await drive(
      { url, connections: 10, duration: 3, headers: auth, requests: [{ method: 'GET', path }] },
      svc.pid(),
    );
    process.stdout.write(`search: ${JSON.stringify(load)}\n`);
    // A child registered at the office, until a tablet's pull of the roster lists it (decision 0069):
    // the roster's changes since now, as a tablet's live pull reads them.
    const device = randomUUID();
    const tablet = { ...auth, 'x-device-id': device };
    const info: unknown = await fetch(`${url}/api/v1/replication/roster/`, { headers: tablet }).then((r) =>
      r.json(),
    );
    const since =
      typeof info === 'object' && info !== null && 'update_seq' in info ? String(info.update_seq) : '0';
    const t0 = Date.now();
    const registered: unknown = await fetch(`${url}/api/v1/students`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
      body: JSON.stringify({
        displayName: 'Criança Nova',
        guardianName: 'Responsável Nova',
        phones: [{ number: '(11) 98888-7777', qualifier: 'mãe' }],
        classId,
      }),
    }).then((r) => r.json());
    const answeredMs = Date.now() - t0;
    const studentId =
      typeof registered === 'object' && registered !== null && 'studentId' in registered
        ? String(registered.studentId)
        : '';
    const pulled = `${url}/api/v1/replication/roster/_changes?since=${encodeURIComponent(since)}`;
    for (let tries = 0; tries < 600; tries += 1) {
      const feed = await fetch(pulled, { headers: tablet }).then((r) => r.text());
      if (studentId !== '' && feed.includes(`student:${studentId}`)) {
        process.stdout.write(
          `a child registered: answered in ${(answeredMs / 1000).toFixed(2)} s, on the tablets' roster after ${((Date.now() - t0) / 1000).toFixed(2)} s\n`,
        );
        break;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    const pid = svc.pid();
    if (pid === undefined) throw new Error('the service ended');
    const { kinds, tables } = await residentByKind(pid);
    const total = Object.values(kinds).reduce((a, b) => a + b, 0);
    const mb = (entries: Record<string, number>) =>
      Object.entries(entries)
        .sort((a, b) => b[1] - a[1])
        .map(([k, v]) => `${k} ${(v / 1024).toFixed(1)}`)
        .join(', ');
    process.stdout.write(`resident ${(total / 1024).toFixed(1)} MB: ${mb(kinds)}\n`);
    process.stdout.write(`leveldb tables by database, MB: ${mb(tables)}\n`);
    const metrics = await fetch(`${url}/metrics`).then((r) => r.text());
    for (const line of metrics.split('\n'))
      if (
        /^nodejs_heap_size_(used|total)_bytes |^nodejs_heap_space_size_(used|total)_bytes\{space="(old|new|code|large_object)"/.test(
          line,
        )
      )
        process.stdout.write(`${line.replace(/(\d+)$/, (b) => `${(Number(b) / 2 ** 20).toFixed(1)} MB`)}\n`);
    // With `--heapsnapshot-signal=SIGUSR2` in NODE_OPTIONS, a heap snapshot of this moment in the
    // service's folder, for `bench/heapRetainers.mjs`.
    if (process.env.MEMORY_PROBE_HEAP_SNAPSHOT === '1') {
      process.kill(pid, 'SIGUSR2');
      await new Promise((r) => setTimeout(r, 30_000));
    }
    // A graceful stop, so a profile preloaded into the service is written.
    await svc.stop();
    // Started again on what the stop left (the directory's snapshot, decision 0040), timed to healthy.
    if (process.env.MEMORY_PROBE_RESTART === '1') {
      const t0 = performance.now();
      await waitHealthy(await svc.start(180_000));
      process.stdout.write(`restart to healthy ${((performance.now() - t0) / 1000).toFixed(2)} s\n`);
      await svc.stop();
    }
  } finally {
    await svc.dispose();
  }
};
await main();
