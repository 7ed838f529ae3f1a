/**
 * The service on a real CouchDB (issue #23's CouchDB rows): how many CouchDB requests one check-in
 * and one student creation cost, counted by a proxy (`bench/countingProxy.ts`) with the idle rate of
 * the same process taken off; check-in throughput at 50 connections beside CouchDB's own single-
 * document write rate at 50 connections, measured in the same run; and two instances on that one
 * CouchDB beside one. Left out when there is no CouchDB (`bench/couchServer.ts`).
 */
import { randomUUID } from 'node:crypto';
import autocannon from 'autocannon';
import * as t from 'io-ts';
import { serviceProcess, waitHealthy } from '../../test/support/mainProcess.js';
import { parseExposition, sampleSum } from '../../test/support/prometheus.js';
import { basicAuth, benchCouch } from '../couchServer.js';
import { countingProxy } from '../countingProxy.js';
import type { BenchOptions } from '../options.js';
import { median, spread } from '../stats.js';
import { cpuMs, drive, type Load, medianOf, signedInAdmin, successesPerSecond } from './serviceLoad.js';
import type { ScenarioResult } from './types.js';

const Created = (key: string) => t.type({ [key]: t.string });

/** The six most frequent kinds of request, each per counted request: what a row is made of. */
const breakdown = (counts: ReadonlyMap<string, number>, per: number): string =>
  [...counts.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 6)
    .map(([kind, n]) => `${kind} ${(n / per).toFixed(1)}`)
    .join(', ');

export const couchdbScenarios = async (options: BenchOptions): Promise<ScenarioResult[]> => {
  if (!options.wants('couchdb')) return [];
  const couch = await benchCouch();
  if (couch === undefined) {
    process.stderr.write(
      'bench: no CouchDB (BENCH_COUCHDB_URL, or shared/couchdb beside the checkout): its rows are left out\n',
    );
    return [];
  }
  const { quick, smoke } = options;
  const runs = options.runs ?? 3;
  const duration = smoke ? 1 : quick ? 3 : 10;
  /** The CouchDB check-in rows' window, quick run or not (see the two-instance row); a smoke run's counts little. */
  const CHECKIN_SECONDS = smoke ? 3 : 10;
  const prefix = `bench${randomUUID().slice(0, 8)}_`;
  const jwtSecret = randomUUID() + randomUUID();
  const metricsToken = randomUUID();
  const proxy = await countingProxy(couch.url, prefix);
  const env = (couchdbUrl: string) => ({
    AUTH_MODE: 'jwt',
    NODE_ENV: 'development',
    COUCHDB_URL: couchdbUrl,
    DB_PREFIX: prefix,
    // One device drives the whole load: the per-device limit stays on, set above it (as serviceLoad).
    RATE_LIMIT_REQUESTS: '1000000',
    // Both instances are one deployment: they share the secret that names the limit's buckets.
    JWT_SECRET: jwtSecret,
    // The pipeline's pages are read from /metrics around the one-instance runs.
    METRICS_TOKEN: metricsToken,
  });
  const counted = await serviceProcess('bench-couch-counted', env(proxy.url), {
    kind: 'built',
    path: 'dist/server/main.js',
  });
  const a = await serviceProcess('bench-couch-a', env(couch.url), {
    kind: 'built',
    path: 'dist/server/main.js',
  });
  const b = await serviceProcess('bench-couch-b', env(couch.url), {
    kind: 'built',
    path: 'dist/server/main.js',
  });
  const raw = basicAuth(couch.url);
  try {
    // 1. Counted: the set-up and the single requests go through the proxy.
    const url = await counted.start(60_000);
    await waitHealthy(url);
    const auth = await signedInAdmin(url);
    const create = async (base: string, path: string, body: unknown, key: string): Promise<string> => {
      const r = await fetch(`${base}${path}`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
        body: JSON.stringify(body),
      });
      const decoded = Created(key).decode(await r.json());
      const id = decoded._tag === 'Right' ? decoded.right[key] : undefined;
      if (r.status !== 201 || id === undefined) throw new Error(`POST ${path} answered ${r.status}`);
      return id;
    };
    const classId = await create(url, '/api/v1/classes', { name: 'Turma' }, 'classId');
    const today = new Date().toISOString().slice(0, 10);
    const sessions: string[] = [];
    // Every check-in of the scenario takes a pair (child, session) of its own: a pair used twice is a
    // 409 ALREADY_CHECKED_IN, answered in a millisecond. With 40 sessions a quick run's 6,000 pairs ran
    // out in its last row (two instances), and the pairs taken again made 88 to 1,800 of its answers
    // 409s, depending on the run's speed. Enough for 300 check-ins a second through every row.
    // A smoke run's loads of a second or three take a tenth of them; its set-up, one request at a
    // time, was most of its time.
    for (let i = 0; i < (smoke ? 40 : quick ? 160 : 300); i += 1)
      sessions.push(
        await create(url, '/api/v1/sessions', { classId, date: today, title: `Culto ${i}` }, 'sessionId'),
      );
    const newStudent = (i: number) => ({
      displayName: `Criança ${i}`,
      guardianName: 'Responsável',
      phones: [],
      classId,
    });
    const students: string[] = [];
    const studentCount = smoke ? 100 : quick ? 150 : 300;
    const countedStudents = 40;
    for (let i = 0; i < studentCount - countedStudents; i += 1)
      students.push(await create(url, '/api/v1/students', newStudent(i), 'studentId'));

    // What the process asks of CouchDB when nobody asks anything of it (feeds, timers), per second.
    await new Promise((r) => setTimeout(r, 1000));
    proxy.reset();
    const idleStarted = performance.now();
    await new Promise((r) => setTimeout(r, 3000));
    const idlePerSecond = proxy.total() / ((performance.now() - idleStarted) / 1000);
    const countedRun = async (n: number, work: () => Promise<void>) => {
      proxy.reset();
      const started = performance.now();
      await work();
      // The pipeline's and the roster's work after the last answer belongs to these requests too.
      await new Promise((r) => setTimeout(r, 1500));
      const seconds = (performance.now() - started) / 1000;
      return {
        perRequest: Math.max(0, proxy.total() - idlePerSecond * seconds) / n,
        counts: new Map(proxy.counts()),
      };
    };
    const creation = await countedRun(countedStudents, async () => {
      for (let i = studentCount - countedStudents; i < studentCount; i += 1)
        students.push(await create(url, '/api/v1/students', newStudent(i), 'studentId'));
    });
    const pairs = sessions.flatMap((sessionId) => students.map((studentId) => ({ studentId, sessionId })));
    let next = 0;
    const pair = () => {
      const p = pairs[next % pairs.length];
      next += 1;
      return p;
    };
    /** Rows that ran after the pairs ran out are marked: their 409s say nothing of the service. */
    const pairsReused = () =>
      next > pairs.length ? ` — pairs ran out (${next - pairs.length} of ${next} taken again)` : '';
    const countedCheckins = 100;
    const checkin = await countedRun(countedCheckins, async () => {
      // Ten at a time, as a few doors at once would.
      await Promise.all(
        Array.from({ length: 10 }, async () => {
          for (let i = 0; i < countedCheckins / 10; i += 1)
            await create(url, '/api/v1/check-in', pair(), 'checkInId');
        }),
      );
    });
    await counted.stop();
    // Every kind, not only the six of the row: where a change moved the count.
    for (const [name, c, n] of [
      ['check-in', checkin, countedCheckins],
      ['student creation', creation, countedStudents],
    ] as const)
      process.stderr.write(
        `bench: CouchDB requests per ${name}, every kind: ${[...c.counts.entries()]
          .sort((x, y) => y[1] - x[1])
          .map(([kind, k]) => `${kind} ${(k / n).toFixed(2)}`)
          .join(', ')}\n`,
      );

    // 2. Throughput, straight to CouchDB: one instance, CouchDB's own writes, then two instances.
    const checkIns = (base: string, connections: number, pid: number | undefined, seconds = duration) =>
      drive(
        {
          url: base,
          connections,
          duration: seconds,
          requests: [
            {
              method: 'POST',
              path: '/api/v1/check-in',
              setupRequest: (req) => ({
                ...req,
                headers: { ...auth, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
                body: JSON.stringify(pair()),
              }),
            },
          ],
        },
        pid,
      );
    const writesDb = `${prefix}raw_writes`;
    const created = await fetch(`${raw.base}/${writesDb}`, {
      method: 'PUT',
      headers: { authorization: raw.authorization },
    });
    if (created.status !== 201) throw new Error(`creating ${writesDb} answered ${created.status}`);
    const couchWrites = async (): Promise<Load> => {
      const r = await autocannon({
        url: `${raw.base}/${writesDb}`,
        connections: 50,
        duration,
        method: 'POST',
        headers: { authorization: raw.authorization, 'content-type': 'application/json' },
        body: JSON.stringify({ docType: 'bench', note: 'a single-document write, as one check-in event' }),
      });
      return {
        rps: successesPerSecond(r),
        p99: r.latency.p99,
        non2xx: r.non2xx,
        errors: r.errors,
        cpuMsPerRequest: undefined,
        afterMsPerRequest: undefined,
      };
    };
    const urlA = await a.start(60_000);
    await waitHealthy(urlA);
    await checkIns(urlA, 50, a.pid());
    await couchWrites();
    // CouchDB's CPU time per successful answer, for the rows where the service is one of its clients:
    // which side a check-in waits on (the service's own CPU is the row's footnote).
    const baseCpu: number[] = [];
    const oneCpu: number[] = [];
    const withCouchCpu = async (run: () => Promise<Load>, seconds: number, into: number[]) => {
      const before = await cpuMs(couch.pid);
      const load = await run();
      const after = await cpuMs(couch.pid);
      const answers = load.rps * seconds;
      if (before !== undefined && after !== undefined && answers > 0) into.push((after - before) / answers);
      return load;
    };
    /** The pipeline's pages so far, as instance A's /metrics counts them. */
    const pagesOfA = async (): Promise<{ pages: number; changes: number; seconds: number }> => {
      const r = await fetch(`${urlA}/metrics`, { headers: { authorization: `Bearer ${metricsToken}` } });
      const samples = parseExposition(await r.text());
      return {
        pages: sampleSum(samples, 'chamada_pipeline_page_seconds_count'),
        changes: sampleSum(samples, 'chamada_pipeline_page_changes_sum'),
        seconds: sampleSum(samples, 'chamada_pipeline_page_seconds_sum'),
      };
    };
    const one: Load[] = [];
    const base: Load[] = [];
    const pagesBefore = await pagesOfA();
    for (let i = 0; i < runs; i += 1) {
      base.push(await withCouchCpu(couchWrites, duration, baseCpu));
      one.push(
        await withCouchCpu(() => checkIns(urlA, 50, a.pid(), CHECKIN_SECONDS), CHECKIN_SECONDS, oneCpu),
      );
    }
    const pagesAfter = await pagesOfA();
    const pages = pagesAfter.pages - pagesBefore.pages;
    const pagesNote =
      pages === 0
        ? []
        : [
            `the pipeline's pages ${((pagesAfter.changes - pagesBefore.changes) / pages).toFixed(1)} changes and ${(((pagesAfter.seconds - pagesBefore.seconds) / pages) * 1000).toFixed(0)} ms each`,
          ];
    const oneReused = pairsReused();
    const urlB = await b.start(60_000);
    await waitHealthy(urlB);
    // Warmed as A was (B's first seconds catch its pipeline up and fill its caches).
    await Promise.all([checkIns(urlA, 50, a.pid()), checkIns(urlB, 50, b.pid())]);
    const two: number[] = [];
    const twoLoads: Load[] = [];
    for (let i = 0; i < runs; i += 1) {
      // 10 s even in a quick run, here and for one instance above: a check-in on CouchDB takes
      // seconds (p99 2–6 s), and a 3 s window counted almost none of them with two instances (0.3
      // req/s, where 10 s runs gave 16–22).
      const [x, y] = await Promise.all([
        checkIns(urlA, 50, a.pid(), CHECKIN_SECONDS),
        checkIns(urlB, 50, b.pid(), CHECKIN_SECONDS),
      ]);
      two.push(x.rps + y.rps);
      twoLoads.push(x, y);
    }
    const twoReused = pairsReused();
    const notes = [
      ...(oneCpu.length === 0 || baseCpu.length === 0
        ? []
        : [
            `CouchDB's CPU ${median(oneCpu).toFixed(2)} ms per check-in, ${median(baseCpu).toFixed(2)} ms per single-document write`,
          ]),
      ...pagesNote,
    ];
    const couchCpuNote = notes.length === 0 ? '' : ` (${notes.join('; ')})`;
    const errorsOf = (loads: ReadonlyArray<Load>) => loads.reduce((n, l) => n + l.non2xx + l.errors, 0);
    const flagged = (name: string, loads: ReadonlyArray<Load>) =>
      `${name}${errorsOf(loads) > 0 ? ` — ${errorsOf(loads)} non-2xx or errors` : ''}`;
    const count = (
      scenario: string,
      c: { perRequest: number; counts: ReadonlyMap<string, number> },
      n: number,
      target: string,
    ): ScenarioResult => ({
      scenario: `${scenario} (${couch.where}; idle ${idlePerSecond.toFixed(1)}/s taken off; most: ${breakdown(c.counts, n)})`,
      unit: 'requests',
      median: c.perRequest,
      spread: { min: c.perRequest, max: c.perRequest },
      p99Ms: undefined,
      baseline: undefined,
      ratio: undefined,
      target,
      runs: 1,
    });
    const oneRps = one.map((l) => l.rps);
    return [
      count('CouchDB requests per check-in, 10 at a time', checkin, countedCheckins, '≤ 4'),
      count('CouchDB requests per student creation, one at a time', creation, countedStudents, '≤ 3'),
      {
        scenario: `${flagged('POST /api/v1/check-in on CouchDB (50 connections)', one)}${couchCpuNote}${oneReused}`,
        unit: 'req/s',
        median: median(oneRps),
        spread: spread(oneRps),
        p99Ms: median(one.map((l) => l.p99)),
        baseline: {
          name: 'CouchDB single-document POSTs, 50 connections',
          median: median(base.map((l) => l.rps)),
          spread: spread(base.map((l) => l.rps)),
        },
        ratio: median(one.map((l, i) => l.rps / (base[i]?.rps ?? 1))),
        target: '≥ 0.5, p99 ≤ 100 ms',
        runs,
        // The service's side of a check-in; CouchDB's own CPU is not in it.
        cpuMsPerRequest: medianOf(one.map((l) => l.cpuMsPerRequest)),
        cpuMsPerRequestAfterRun: medianOf(one.map((l) => l.afterMsPerRequest)),
      },
      {
        scenario: `${flagged('two instances on that CouchDB, 50 connections each (sum)', twoLoads)}${twoReused}`,
        unit: 'req/s',
        median: median(two),
        spread: spread(two),
        p99Ms: median(twoLoads.map((l) => l.p99)),
        baseline: { name: 'one instance (the row above)', median: median(oneRps), spread: spread(oneRps) },
        ratio: median(two.map((x, i) => x / (oneRps[i] ?? 1))),
        target: '≥ 1.6',
        runs,
      },
    ];
  } finally {
    await Promise.all([counted.dispose(), a.dispose(), b.dispose()]);
    await proxy.close();
    // Only the bench's own databases, on a server someone else may use too.
    const all: unknown = await fetch(`${raw.base}/_all_dbs`, {
      headers: { authorization: raw.authorization },
    })
      .then((r) => r.json())
      .catch(() => []);
    for (const name of Array.isArray(all) ? all : [])
      if (typeof name === 'string' && name.startsWith(prefix))
        await fetch(`${raw.base}/${name}`, {
          method: 'DELETE',
          headers: { authorization: raw.authorization },
        }).catch(() => undefined);
    await couch.dispose();
  }
};
