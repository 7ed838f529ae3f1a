/**
 * The growth bench's container rows (`bench/scenarios/memoryLimit.ts`, decision 0077) in a memory
 * cgroup the caller made, with its own limit and a heap limit of its choosing: the embedded service
 * started by the container image's command (after `npm run build`), the roll imported in 10,000-row
 * files, the loads, a burst of creations, a graceful stop and a restart, and what the cgroup held
 * after each (its most, anonymous and file pages, how often the limit was met, kills).
 *
 *   PROBE_CGROUP=<a memory cgroup with its limit, v1 or v2> [PROBE_HEAP_MB=<a heap limit in NODE_OPTIONS>] \
 *     npx tsx bench/memoryLimitProbe.ts [students=100000]
 *
 * Making one takes root: v1 `mkdir /sys/fs/cgroup/memory/chamada-probe` and the limit written to its
 * `memory.limit_in_bytes`; v2 a directory under `/sys/fs/cgroup` and `memory.max`.
 */
import { IMAGE_NODE_OPTIONS_FLAGS } from '../src/config/runtime.js';
import { describeFigures, openCgroup, runInLimit } from './scenarios/memoryLimit.js';

const dir = process.env.PROBE_CGROUP;
if (dir === undefined)
  throw new Error('PROBE_CGROUP names a memory cgroup directory (see the comment above)');
const students = Number(process.argv[2] ?? 100_000);
const heapMb = process.env.PROBE_HEAP_MB;
const cgroup = await openCgroup(dir);
const say = (line: string) => process.stdout.write(`${line}\n`);
say(`a ${cgroup.limitMb.toFixed(0)} MB limit, ${students.toLocaleString('en')} students`);
try {
  const run = await runInLimit(
    cgroup,
    students,
    heapMb === undefined
      ? undefined
      : [...IMAGE_NODE_OPTIONS_FLAGS, `--max-old-space-size=${heapMb}`].join(' '),
    say,
  );
  const rounds = (xs: ReadonlyArray<{ rps: number; p99: number }>) =>
    xs.map((x) => `${x.rps.toFixed(0)} req/s p99 ${x.p99} ms`).join(', ');
  say(`imported in ${run.importS.toFixed(0)} s; ${describeFigures(run.afterImport)}`);
  say(`list ${rounds(run.lists)}; search ${rounds(run.searches)}`);
  say(
    `after the loads: resident ${run.afterLoads.residentMb?.toFixed(0)} MB; ${describeFigures(run.afterLoads)}`,
  );
  say(
    `graceful stop after a burst of creations ${run.stopS.toFixed(1)} s, ${run.snapshot ? 'snapshot written' : 'NO snapshot'}; ` +
      `restart to healthy ${run.restartS.toFixed(1)} s; ${describeFigures(run.afterRestart)}`,
  );
} catch (e) {
  say(`failed: ${String(e)}; ${describeFigures(await cgroup.figures())}`);
  process.exitCode = 1;
}
