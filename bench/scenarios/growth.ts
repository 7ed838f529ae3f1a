/**
 * How cost grows with the roll (issue #23's growth table): for 1,000, 10,000 and 100,000 students on
 * the embedded store, the students list and a search at 10 connections, resident memory, how long a
 * graceful stop (SIGTERM) takes, and a restart to healthy. Full run only (`--only growth` runs it in
 * a quick run too, at 1,000 and 10,000): writing 100,000 students takes most of a minute.
 *
 * The search is for one child by name and number (`q=crianca 04321`), the door's usual query: few
 * matches, so before the name index it read the whole roll.
 */
import { performance } from 'node:perf_hooks';
import { serviceProcess, waitHealthy } from '../../test/support/mainProcess.js';
import { writeDataset } from '../dataset.js';
import type { BenchOptions } from '../options.js';
import { median, spread } from '../stats.js';
import { drive, rssMb, signedInAdmin } from './serviceLoad.js';
import type { ScenarioResult } from './types.js';

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

const atSize = async (students: number, quick: boolean): Promise<ScenarioResult[]> => {
  const svc = await serviceProcess(
    `bench-growth-${students}`,
    { AUTH_MODE: 'jwt', NODE_ENV: 'development', RATE_LIMIT_REQUESTS: '1000000' },
    { kind: 'built', path: 'dist/server/main.js' },
  );
  try {
    await svc.start(60_000);
    await svc.stop();
    await writeDataset(svc.dataDir, { students, sessions: 1, events: 0 });
    let url = await svc.start(180_000);
    await waitHealthy(url);
    const auth = await signedInAdmin(url);
    const duration = quick ? 2 : 5;
    const load = (path: string) =>
      drive(
        { url, connections: 10, duration, headers: auth, requests: [{ method: 'GET', path }] },
        svc.pid(),
      );
    const label = `${students.toLocaleString('en')} students`;
    const list = '/api/v1/students?limit=50';
    const search = `/api/v1/students?limit=50&q=crianca%20${String(Math.floor(students * 0.4321)).padStart(5, '0')}`;
    await load(list);
    const lists = [await load(list), await load(list)];
    await load(search);
    const searches = [await load(search), await load(search)];
    const memory = await rssMb(svc.pid());
    const stopS = await seconds(() => svc.stop());
    const restartS = await seconds(async () => {
      url = await svc.start(180_000);
      await waitHealthy(url);
    });
    const http = (what: string, runs: typeof lists, target: string | undefined): ScenarioResult => ({
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
    const at100k = students >= 100_000;
    return [
      http('GET /students?limit=50', lists, undefined),
      http('GET /students?limit=50&q=<one child>', searches, at100k ? 'p99 ≤ 30 ms' : undefined),
      single(
        `growth, ${label}: resident memory after the loads`,
        'MB',
        memory ?? Number.NaN,
        at100k ? '≤ 256 MB' : undefined,
      ),
      single(`growth, ${label}: graceful stop (SIGTERM to exit)`, 's', stopS, at100k ? '≤ 5 s' : undefined),
      single(`growth, ${label}: restart to healthy`, 's', restartS, at100k ? '≤ 2 s' : undefined),
    ];
  } finally {
    await svc.dispose();
  }
};

export const growth = async (options: BenchOptions): Promise<ScenarioResult[]> => {
  // Asked for by name, or part of the full run.
  const named = options.wants('growth') && !options.wants('students');
  if (!options.wants('growth') || (options.quick && !named)) return [];
  const sizes = options.quick ? [1_000, 10_000] : [1_000, 10_000, 100_000];
  const rows: ScenarioResult[] = [];
  for (const students of sizes) {
    // A size the service cannot serve (a start past its heap limit) is a row of the table, not the end
    // of the run.
    const measured = await atSize(students, options.quick).catch((e: unknown) => [
      single(
        `growth, ${students.toLocaleString('en')} students: not served (${String(e).slice(0, 120)})`,
        '',
        Number.NaN,
        undefined,
      ),
    ]);
    rows.push(...measured);
  }
  return rows;
};
