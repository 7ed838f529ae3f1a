/**
 * How cost grows with the roll (issues #23 and #41's growth table). The roll reaches the service as a
 * real one does, through the student import (`POST /api/v1/imports/students`, 10,000 rows a file at
 * most), never written straight into the store.
 *
 * Embedded store, at 1,000, 10,000 and 100,000 students: the students list and a one-child search at
 * 10 connections, resident memory, a graceful stop (SIGTERM) right after a burst of one-by-one
 * creations and whether it left the directory snapshot (decision 0040), and a restart to healthy.
 * On a real CouchDB (`bench/couchServer.ts`; left out without one), at 10,000 and 250,000: the import
 * of the first 10,000-row file, the list and the search, the first instance's resident memory, a
 * second instance's start to healthy and its resident memory, and (from four files on) the start to
 * healthy of an instance started while the first imports.
 *
 * A quick run (`--only growth` runs it in a quick run too) measures 1,000 and 10,000 embedded and
 * 10,000 on CouchDB; the full run's large sizes take minutes, most of them the import.
 * `BENCH_GROWTH_SIZES` and `BENCH_GROWTH_COUCHDB_SIZES` (comma-separated, empty for none) measure
 * other sizes, such as 100,000 embedded alone in a quick run.
 *
 * In a container: the embedded sizes from 100,000 (`BENCH_GROWTH_CONTAINER_SIZES` for others) are
 * measured again inside a 256 MB memory limit (`BENCH_GROWTH_CONTAINER_MB`), started as the image
 * starts the service (`memoryLimit.ts`, decision 0077); where no cgroup can be made (it takes root),
 * those rows are left out and the run says why.
 *
 * Names: each of ten common first names is a tenth of the roll, and a surname and the row number make
 * each child one. The search is for one child by first name and number (`q=maria 043210`), the door's
 * usual query: its first name alone matches a tenth of the roll.
 */
import { randomUUID } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import * as t from 'io-ts';
import { type ServiceProcess, serviceProcess, waitHealthy } from '../../test/support/mainProcess.js';
import { benchCouch } from '../couchServer.js';
import type { BenchOptions } from '../options.js';
import { median, spread } from '../stats.js';
import { makeCgroup, runInLimit } from './memoryLimit.js';
import { drive, quiet, rssMb, signedInAdmin } from './serviceLoad.js';
import type { ScenarioResult } from './types.js';

const FIRST_NAMES = [
  'Maria',
  'Ana',
  'João',
  'Pedro',
  'Gabriel',
  'Lucas',
  'Júlia',
  'Sofia',
  'Miguel',
  'Laura',
];
const SURNAMES = ['da Silva', 'Santos', 'Oliveira', 'Souza', 'Pereira', 'Costa', 'Rodrigues'];
/** Rows per import file: the most a file may hold (README, `MAX_IMPORT_ROWS`). */
const FILE_ROWS = 10_000;
/** Rows per file when a 10,000-row file was refused: the size the issue's operator fell back to. */
const FALLBACK_ROWS = 2_000;

const numberOf = (i: number): string => String(i).padStart(6, '0');
/** The `i`th child's name (`bench/searchProbe.ts` writes the same roll). */
export const nameOf = (i: number): string =>
  `${FIRST_NAMES[i % FIRST_NAMES.length]} ${SURNAMES[Math.floor(i / 10) % SURNAMES.length]} ${numberOf(i)}`;

const csvOf = (from: number, to: number): string =>
  [
    'Código;Nome;Data de Nascimento;Responsável;Telefone;Turma',
    ...Array.from({ length: to - from }, (_, k) => {
      const i = from + k;
      return (
        `M-${i};${nameOf(i)};${String((i % 28) + 1).padStart(2, '0')}/0${(i % 9) + 1}/2019;` +
        `Responsável ${i};(11) 9${String(10_000_000 + i).slice(-8)};Maternal`
      );
    }),
  ].join('\r\n');

const single = (
  scenario: string,
  unit: string,
  value: number,
  target: string | undefined,
): ScenarioResult => ({
  scenario,
  unit,
  median: value,
  spread: { min: value, max: value },
  p99Ms: undefined,
  baseline: undefined,
  ratio: undefined,
  target,
  runs: 1,
});

const seconds = async (work: () => Promise<unknown>): Promise<number> => {
  const t0 = performance.now();
  await work();
  return (performance.now() - t0) / 1000;
};

const Created = t.type({ classId: t.string });
/** What the wait for CouchDB's indexing reads of a task: its kind and its shard's database. */
const IndexerTask = t.type({ type: t.string, database: t.string });
const Report = t.type({ created: t.number, unchanged: t.number });

const postJson = (url: string, auth: Record<string, string>, path: string, body: unknown) =>
  fetch(`${url}${path}`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
    body: JSON.stringify(body),
  });

/** Imports rows [from, to) as one file; the answer's status and, on a 200, how many rows it stored. */
const importFile = async (
  url: string,
  auth: Record<string, string>,
  from: number,
  to: number,
): Promise<{ status: number; seconds: number; said: string }> => {
  const t0 = performance.now();
  const r = await fetch(`${url}/api/v1/imports/students?dryRun=false`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'text/csv', 'idempotency-key': randomUUID() },
    body: csvOf(from, to),
  });
  const body: unknown = await r.json().catch(() => undefined);
  const s = (performance.now() - t0) / 1000;
  if (r.status === 200) {
    const report = Report.decode(body);
    if (report._tag === 'Left' || report.right.created + report.right.unchanged !== to - from)
      throw new Error(`import of rows ${from}-${to} stored only part of them`);
  }
  // What a refusal said (its error code and message), for the line that reports it.
  const said = r.status === 200 ? '' : JSON.stringify(body ?? null).slice(0, 300);
  return { status: r.status, seconds: s, said };
};

/**
 * Imports `students` rows in files of 10,000; answers the first file's time and status (a row of the
 * table). A file refused (a 503 past the import's deadline) is sent again in files of 2,000: rows
 * stored by the refused attempt answer `unchanged` (the import matches on `Código`).
 */
/** The service's log lines at warn and above (pino's levels 40+), the last `n`, to say why a file failed. */
const warnings = (output: string, n = 12): string =>
  output
    .split('\n')
    .filter((line) => /"level":(4|5|6)0\b/.test(line))
    .slice(-n)
    .map((line) => `  log: ${line.slice(0, 400)}\n`)
    .join('');

export const importRoll = async (
  url: string,
  auth: Record<string, string>,
  students: number,
  /** The service's output so far (its log lines), printed in part when a file fails. */
  output: () => string = () => '',
  /** Run while the file after the first `afterFiles` is sent (awaited with it). */
  beside?: { readonly afterFiles: number; readonly run: () => Promise<void> },
): Promise<{ firstFile: { status: number; seconds: number; rows: number } }> => {
  const made = Created.decode(
    await (await postJson(url, auth, '/api/v1/classes', { name: 'Maternal' })).json(),
  );
  if (made._tag === 'Left') throw new Error('the class was not created');
  let firstFile: { status: number; seconds: number; rows: number } | undefined;
  for (let from = 0; from < students; from += FILE_ROWS) {
    const to = Math.min(students, from + FILE_ROWS);
    const alongside =
      beside !== undefined && from === beside.afterFiles * FILE_ROWS ? beside.run() : undefined;
    const done = await importFile(url, auth, from, to);
    await alongside;
    firstFile ??= { status: done.status, seconds: done.seconds, rows: to - from };
    // Each file's time on the roll it joins: how the import's cost grows with the roll.
    if (students > FILE_ROWS)
      process.stderr.write(
        `bench: rows ${from}-${to} of ${students}: ${done.status} in ${done.seconds.toFixed(1)} s\n`,
      );
    if (done.status === 200) continue;
    process.stderr.write(
      `bench: an import of ${to - from} rows answered ${done.status} after ${done.seconds.toFixed(1)} s (${done.said}); again in parts\n${warnings(output())}`,
    );
    for (let part = from; part < to; part += FALLBACK_ROWS) {
      const partTo = Math.min(to, part + FALLBACK_ROWS);
      const again = await importFile(url, auth, part, partTo);
      if (again.status !== 200)
        throw new Error(`an import of ${partTo - part} rows answered ${again.status} (${again.said})`);
    }
  }
  if (firstFile === undefined) throw new Error('no rows to import');
  return { firstFile };
};

/** The door's one-child query: a child whose first name a tenth of the roll shares, and its number. */
export const oneChildQuery = (students: number): string => {
  const i = Math.floor((students * 0.4321) / FIRST_NAMES.length) * FIRST_NAMES.length;
  return `maria ${numberOf(i)}`;
};

const searchPath = (students: number): string =>
  `/api/v1/students?limit=50&q=${encodeURIComponent(oneChildQuery(students))}`;

interface Loads {
  readonly lists: Array<{ rps: number; p99: number }>;
  readonly searches: Array<{ rps: number; p99: number }>;
}

export const measureLoads = async (
  url: string,
  auth: Record<string, string>,
  pid: number | undefined,
  students: number,
  quick: boolean,
): Promise<Loads> => {
  // What an import leaves behind (the pipeline's events, the roster's passes) is not the loads' cost:
  // they start once the process has been idle for a moment, as a service's steady state is.
  await quiet(pid, 180_000);
  const duration = quick ? 2 : 5;
  const load = (path: string) =>
    drive({ url, connections: 10, duration, headers: auth, requests: [{ method: 'GET', path }] }, pid);
  const list = '/api/v1/students?limit=50';
  const search = searchPath(students);
  // The search must find its child, else its rate says nothing.
  const answer = await fetch(`${url}${search}`, { headers: auth });
  const found = await answer.text();
  // What it answered (an empty page, or an error's code and message) says why.
  if (!found.includes(`"studentId"`))
    throw new Error(`the search ${search} found nobody: ${answer.status} ${found.slice(0, 300)}`);
  await load(list);
  const lists = [await load(list), await load(list)];
  await load(search);
  const searches = [await load(search), await load(search)];
  return { lists, searches };
};

const httpRow = (
  label: string,
  what: string,
  runs: ReadonlyArray<{ rps: number; p99: number }>,
  target: string | undefined,
): ScenarioResult => ({
  scenario: `growth, ${label}: ${what} (10 connections)`,
  unit: 'req/s',
  median: median(runs.map((r) => r.rps)),
  spread: spread(runs.map((r) => r.rps)),
  p99Ms: median(runs.map((r) => r.p99)),
  baseline: undefined,
  ratio: undefined,
  target,
  runs: runs.length,
});

const importRow = (
  label: string,
  firstFile: { status: number; seconds: number; rows: number },
  target?: string,
) =>
  single(
    `growth, ${label}: import of a ${firstFile.rows.toLocaleString('en')}-row file` +
      (firstFile.status === 200 ? '' : ` (answered ${firstFile.status})`),
    'rows/s',
    firstFile.status === 200 ? firstFile.rows / firstFile.seconds : 0,
    target,
  );

/** `count` one-by-one creations at 10 at a time: the burst a stop may come right after. */
export const burstOfCreations = async (
  url: string,
  auth: Record<string, string>,
  count: number,
): Promise<void> => {
  const classes = await fetch(`${url}/api/v1/classes`, { headers: auth }).then((r) => r.json());
  const classId = t.type({ items: t.array(t.type({ classId: t.string })) }).decode(classes);
  const id = classId._tag === 'Right' ? classId.right.items[0]?.classId : undefined;
  if (id === undefined) throw new Error('no class to create students in');
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < count; i = next++) {
      const r = await postJson(url, auth, '/api/v1/students', {
        displayName: `Visita ${i}`,
        guardianName: 'Responsável',
        phones: [],
        classId: id,
      });
      await r.arrayBuffer();
      if (r.status !== 201) throw new Error(`a creation answered ${r.status}`);
    }
  };
  await Promise.all(Array.from({ length: 10 }, worker));
};

export const hasSnapshot = async (svc: ServiceProcess): Promise<boolean> =>
  (await readdir(svc.dataDir, { recursive: true })).some((f) => String(f).endsWith('.directory.json'));

/**
 * The bench signs in once per service, and a large roll's import outlasts the default access token
 * (15 minutes: the 250,000 run on CouchDB was refused 401 at its twelfth file): tokens last a day.
 */
const BENCH_SESSION = { RATE_LIMIT_REQUESTS: '1000000', ACCESS_TOKEN_TTL_SECONDS: '86400' } as const;

const embeddedAtSize = async (students: number, quick: boolean): Promise<ScenarioResult[]> => {
  const svc = await serviceProcess(
    `bench-growth-${students}`,
    { AUTH_MODE: 'jwt', NODE_ENV: 'development', ...BENCH_SESSION },
    { kind: 'built', path: 'dist/server/main.js' },
  );
  try {
    let url = await svc.start(60_000);
    await waitHealthy(url);
    const auth = await signedInAdmin(url);
    const label = `${students.toLocaleString('en')} students`;
    const { firstFile } = await importRoll(url, auth, students);
    const { lists, searches } = await measureLoads(url, auth, svc.pid(), students, quick);
    const memory = await rssMb(svc.pid());
    await burstOfCreations(url, auth, quick ? 200 : 1_000);
    const stopS = await seconds(() => svc.stop());
    const snapshot = await hasSnapshot(svc);
    const restartS = await seconds(async () => {
      url = await svc.start(180_000);
      await waitHealthy(url);
    });
    const at100k = students >= 100_000;
    return [
      importRow(label, firstFile),
      httpRow(label, 'GET /students?limit=50', lists, undefined),
      httpRow(label, 'GET /students?limit=50&q=<one child>', searches, at100k ? 'p99 ≤ 30 ms' : undefined),
      single(
        `growth, ${label}: resident memory after the loads`,
        'MB',
        memory ?? Number.NaN,
        at100k ? '≤ 256 MB' : undefined,
      ),
      single(
        `growth, ${label}: graceful stop right after a burst of creations (${snapshot ? 'snapshot written' : 'NO snapshot'})`,
        's',
        stopS,
        at100k ? '≤ 5 s, snapshot written' : undefined,
      ),
      single(`growth, ${label}: restart to healthy`, 's', restartS, at100k ? '≤ 2 s' : undefined),
    ];
  } finally {
    await svc.dispose();
  }
};

/**
 * Until CouchDB indexes none of the databases named with `prefix` (its `_active_tasks` of type
 * `indexer`), at most `atMostMs`: on CouchDB the list and the search read views that the import's
 * writes leave CouchDB indexing for a while after the service is idle (decision 0056); the loads are
 * about the steady state. A compaction is not waited for: outside the night's window smoosh suspends
 * the one under way (decision 0066) and it stays listed, at the same progress, until the next night.
 */
const indexed = async (couchUrl: string, prefix: string, atMostMs: number): Promise<void> => {
  const deadline = Date.now() + atMostMs;
  const url = new URL('/_active_tasks', couchUrl);
  const auth = `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}`;
  url.username = '';
  url.password = '';
  while (Date.now() < deadline) {
    const tasks: unknown = await fetch(url, { headers: { Authorization: auth } }).then((r) => r.json());
    const busy =
      Array.isArray(tasks) &&
      tasks.some((task) => IndexerTask.is(task) && task.type === 'indexer' && task.database.includes(prefix));
    if (!busy) return;
    await new Promise((r) => setTimeout(r, 500));
  }
};

/**
 * Files A has imported when C starts beside the next (decision 0074: before it, an instance started
 * there waited for an index minutes behind and failed). A roll of fewer files has no such row.
 */
const BESIDE_AFTER_FILES = 3;

const couchAtSize = async (couchUrl: string, students: number, quick: boolean): Promise<ScenarioResult[]> => {
  const env = {
    AUTH_MODE: 'jwt',
    NODE_ENV: 'development',
    COUCHDB_URL: couchUrl,
    DB_PREFIX: `growth${randomUUID().slice(0, 8)}_`,
    ...BENCH_SESSION,
    JWT_SECRET: randomUUID() + randomUUID(),
  };
  const built = { kind: 'built', path: 'dist/server/main.js' } as const;
  const a = await serviceProcess(`bench-growth-couch-a-${students}`, env, built);
  const b = await serviceProcess(`bench-growth-couch-b-${students}`, env, built);
  // Started while A imports (decision 0074), stopped once healthy: the rows after are A's and B's.
  const c = await serviceProcess(`bench-growth-couch-c-${students}`, env, built);
  try {
    const url = await a.start(60_000);
    await waitHealthy(url);
    const auth = await signedInAdmin(url);
    const label = `CouchDB, ${students.toLocaleString('en')} students`;
    let besideS: number | undefined;
    const { firstFile } = await importRoll(url, auth, students, () => a.output(), {
      afterFiles: BESIDE_AFTER_FILES,
      run: async () => {
        // A start that fails is this row's figure, not the end of A's import.
        besideS = await seconds(async () => waitHealthy(await c.start(180_000))).catch((e: unknown) => {
          process.stderr.write(`bench: ${label}, an instance started during the import: ${String(e)}\n`);
          return Number.NaN;
        });
        await c.dispose();
      },
    });
    await quiet(a.pid(), 180_000);
    // At 250,000 CouchDB indexes the last files' students for minutes after the answers (on this
    // machine; a search meanwhile reads the index as it stands and may not find them yet): the loads
    // wait for it, and how long it took is printed.
    const indexedS = await seconds(() =>
      indexed(couchUrl, env.DB_PREFIX, students >= 100_000 ? 1_800_000 : 180_000),
    );
    process.stderr.write(
      `bench: CouchDB indexed the roll ${indexedS.toFixed(0)} s after the service was quiet\n`,
    );
    const { lists, searches } = await measureLoads(url, auth, a.pid(), students, quick);
    const memory = await rssMb(a.pid());
    const large = students >= 250_000;
    const addedS = await seconds(async () => waitHealthy(await b.start(180_000)));
    const addedMemory = await rssMb(b.pid());
    return [
      importRow(label, firstFile, '200, ≥ 1,000 rows/s'),
      httpRow(label, 'GET /students?limit=50', lists, undefined),
      httpRow(label, 'GET /students?limit=50&q=<one child>', searches, large ? 'p99 ≤ 50 ms' : undefined),
      single(
        `growth, ${label}: resident memory after the loads`,
        'MB',
        memory ?? Number.NaN,
        '≤ 200 MB, flat',
      ),
      single(`growth, ${label}: an added instance, start to healthy`, 's', addedS, '≤ 2 s, flat'),
      ...(besideS === undefined
        ? []
        : [
            single(
              `growth, ${label}: an instance started during the import (file ${BESIDE_AFTER_FILES + 1}), start to healthy`,
              's',
              besideS,
              undefined,
            ),
          ]),
      single(
        `growth, ${label}: an added instance's resident memory when healthy`,
        'MB',
        addedMemory ?? Number.NaN,
        '≤ 200 MB, flat',
      ),
    ];
  } finally {
    await c.dispose();
    await b.dispose();
    await a.dispose();
  }
};

/**
 * The embedded steps again inside a memory limit of `limitMb`, the service started by the image's
 * command (decision 0077, `memoryLimit.ts`): whether it runs in a container of that size, and how.
 * Left out, with the reason, where no cgroup can be made (not root, no writable cgroup file system).
 */
const inContainer = async (students: number, limitMb: number): Promise<ScenarioResult[]> => {
  const made = await makeCgroup(`chamada-bench-${process.pid}`, limitMb);
  if ('why' in made) {
    process.stderr.write(`bench: growth in a ${limitMb} MB container left out: ${made.why}\n`);
    return [];
  }
  const label = `${students.toLocaleString('en')} students in a ${limitMb} MB container`;
  try {
    const run = await runInLimit(made.cgroup, students, undefined).catch(async (e: unknown) => {
      const { killed } = await made.cgroup.figures();
      if (!(killed > 0)) throw e;
      return killed;
    });
    if (typeof run === 'number')
      return [single(`growth, ${label}: killed by the out-of-memory killer`, 'kills', run, '0')];
    const heap = /--max-old-space-size=(\d+)/.exec(run.argv)?.[1] ?? '?';
    const what = `${label} (a ${heap} MB heap${run.warned ? ', warned at start' : ''})`;
    const after = run.afterLoads;
    return [
      single(`growth, ${what}: the roll's import`, 'rows/s', students / run.importS, undefined),
      httpRow(what, 'GET /students?limit=50&q=<one child>', run.searches, undefined),
      single(
        `growth, ${what}: memory the container held after the loads (anonymous ${after.anonMb.toFixed(0)} MB, ` +
          `resident ${after.residentMb?.toFixed(0) ?? '?'} MB)`,
        'MB',
        after.usageMb,
        `runs in ${limitMb} MB`,
      ),
      single(`growth, ${what}: killed by the out-of-memory killer`, 'kills', run.afterRestart.killed, '0'),
      single(
        `growth, ${what}: graceful stop right after a burst of creations (${run.snapshot ? 'snapshot written' : 'NO snapshot'})`,
        's',
        run.stopS,
        undefined,
      ),
      single(`growth, ${what}: restart to healthy`, 's', run.restartS, undefined),
    ];
  } finally {
    await made.dispose();
  }
};

/** A size that could not be measured is a row of the table, not the end of the run. */
const orUnserved =
  (label: string) =>
  (e: unknown): ScenarioResult[] => {
    // The row holds the start of it; the whole of it is for the run's log.
    process.stderr.write(`bench: growth, ${label}: ${String(e)}\n`);
    return [single(`growth, ${label}: not served (${String(e).slice(0, 160)})`, '', Number.NaN, undefined)];
  };

/**
 * Sizes from the environment (`BENCH_GROWTH_SIZES`, `BENCH_GROWTH_COUCHDB_SIZES`: comma-separated
 * counts, empty for none), for one size of the table without the run's others.
 */
const sizesFrom = (name: string, otherwise: ReadonlyArray<number>): ReadonlyArray<number> => {
  const given = process.env[name];
  if (given === undefined) return otherwise;
  const sizes = given
    .split(',')
    .filter((s) => s.trim() !== '')
    .map(Number);
  if (sizes.some((n) => !(Number.isInteger(n) && n > 0)))
    throw new Error(`${name} wants positive whole numbers, got ${given}`);
  return sizes;
};

export const growth = async (options: BenchOptions): Promise<ScenarioResult[]> => {
  // Asked for by name, or part of the full run.
  const named = options.wants('growth') && !options.wants('students');
  if (!options.wants('growth') || (options.quick && !named)) return [];
  const rows: ScenarioResult[] = [];
  const embeddedSizes = sizesFrom(
    'BENCH_GROWTH_SIZES',
    options.quick ? [1_000, 10_000] : [1_000, 10_000, 100_000],
  );
  const couchSizes = sizesFrom('BENCH_GROWTH_COUCHDB_SIZES', options.quick ? [10_000] : [10_000, 250_000]);
  for (const students of embeddedSizes)
    rows.push(
      ...(await embeddedAtSize(students, options.quick).catch(
        orUnserved(`${students.toLocaleString('en')} students`),
      )),
    );
  const containerMb = Number(process.env.BENCH_GROWTH_CONTAINER_MB ?? 256);
  for (const students of sizesFrom(
    'BENCH_GROWTH_CONTAINER_SIZES',
    embeddedSizes.filter((n) => n >= 100_000),
  ))
    rows.push(
      ...(await inContainer(students, containerMb).catch(
        orUnserved(`${students.toLocaleString('en')} students in a ${containerMb} MB container`),
      )),
    );
  if (couchSizes.length === 0) return rows;
  const couch = await benchCouch();
  if (couch === undefined) {
    process.stderr.write('bench: no CouchDB for the growth rows on CouchDB: left out\n');
    return rows;
  }
  try {
    for (const students of couchSizes)
      rows.push(
        ...(await couchAtSize(couch.url, students, options.quick).catch(
          orUnserved(`CouchDB, ${students.toLocaleString('en')} students`),
        )),
      );
  } finally {
    await couch.dispose();
  }
  return rows;
};
