/**
 * `npm run bench [-- --quick] [-- --only check-in --runs 5 --cpu-prof DIR]`: every scenario beside a
 * baseline measured in the same run, printed as one table and written to bench-results/latest.json.
 * Figures are never asserted by tests. Options: `bench/options.ts`.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { cpus, totalmem } from 'node:os';
import { type BenchOptions, parseBenchOptions, type ScenarioName } from './options.js';
import { couchdbScenarios } from './scenarios/couchdbLoad.js';
import { firstPull } from './scenarios/firstPull.js';
import { growth } from './scenarios/growth.js';
import { idempotencyOverhead } from './scenarios/idempotencyOverhead.js';
import { printLatency, printLatencyThroughAgent } from './scenarios/printLatency.js';
import { retention } from './scenarios/retention.js';
import { serviceScenarios } from './scenarios/serviceLoad.js';
import { studentImport } from './scenarios/studentImport.js';
import { syncThroughput } from './scenarios/syncThroughput.js';
import type { ScenarioResult } from './scenarios/types.js';

const options = parseBenchOptions(process.argv.slice(2));
const { quick } = options;
const single =
  (name: ScenarioName, scenario: (quick: boolean) => Promise<ScenarioResult>) =>
  async (o: BenchOptions): Promise<ScenarioResult[]> =>
    o.wants(name) ? [await scenario(o.quick)] : [];
const scenarios: ReadonlyArray<(options: BenchOptions) => Promise<ScenarioResult[]>> = [
  serviceScenarios,
  single('sync', syncThroughput),
  single('first-pull', firstPull),
  single('idempotency', idempotencyOverhead),
  single('import', studentImport),
  couchdbScenarios,
  growth,
  async (o) => (o.wants('retention') ? retention(o.quick) : []),
  single('print', printLatency),
  single('print-agent', printLatencyThroughAgent),
];

const fmt = (n: number | undefined, digits = 1) => (n === undefined ? '—' : n.toFixed(digits));

const results: ScenarioResult[] = [];
for (const scenario of scenarios) {
  const started = performance.now();
  const rows = await scenario(options);
  if (rows.length === 0) continue;
  results.push(...rows);
  // Progress on stderr, so a slow or stuck scenario shows which one it is.
  process.stderr.write(
    `bench: ${rows.length} row(s) in ${((performance.now() - started) / 1000).toFixed(1)} s\n`,
  );
}

const rows = results.map((r) => [
  r.scenario,
  `${fmt(r.median)} ${r.unit} (${fmt(r.spread.min)}–${fmt(r.spread.max)})`,
  r.p99Ms === undefined ? '—' : `${fmt(r.p99Ms)} ms`,
  r.baseline === undefined ? '—' : `${r.baseline.name}: ${fmt(r.baseline.median)} ${r.unit}`,
  fmt(r.ratio, 2),
  r.target ?? '—',
]);
const header = ['scenario', 'median (spread)', 'p99', 'baseline (same run)', 'ratio', 'target'];
process.stdout.write(`\n| ${header.join(' | ')} |\n|${header.map(() => '---').join('|')}|\n`);
for (const row of rows) process.stdout.write(`| ${row.join(' | ')} |\n`);
for (const r of results) {
  if (r.cpuMsPerRequest === undefined) continue;
  process.stdout.write(
    `\n${r.scenario}: server CPU ${fmt(r.cpuMsPerRequest, 2)} ms per request` +
      (r.cpuMsPerRequestAfterRun === undefined
        ? ''
        : `, ${fmt(r.cpuMsPerRequestAfterRun, 2)} of it after the load stopped`) +
      (r.baselineCpuMsPerRequest === undefined
        ? ''
        : ` (bare endpoint ${fmt(r.baselineCpuMsPerRequest, 2)} ms; ratio ${fmt(r.baselineCpuMsPerRequest / r.cpuMsPerRequest, 2)})`),
  );
}
process.stdout.write(
  `\n${results[0]?.runs ?? 0} measured runs each${options.smoke ? ' (smoke)' : quick ? ' (quick)' : ''}; node ${process.version}, ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB\n`,
);

await mkdir('bench-results', { recursive: true });
await writeFile(
  'bench-results/latest.json',
  `${JSON.stringify({ at: new Date().toISOString(), quick, smoke: options.smoke, node: process.version, argv: process.argv.slice(2), results }, null, 2)}\n`,
);

// A row that could not be measured fails the run: the CI smoke check relies on it.
const unfilled = results.filter((r) => !Number.isFinite(r.median));
if (unfilled.length > 0) {
  process.stderr.write(`unmeasured: ${unfilled.map((r) => r.scenario).join('; ')}\n`);
  process.exitCode = 1;
}
