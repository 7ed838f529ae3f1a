/**
 * Whether the embedded service runs within a memory limit, as a container runtime sets one (`docker
 * run -m 256m`, compose's `mem_limit`): a cgroup's limit counts the process's heap and the file pages
 * it maps (LevelDB's tables, the node binary), and when the sum reaches the limit the kernel reclaims
 * the file pages before it kills anything. Resident memory unconstrained counts those pages as long as
 * nothing else wants them, so it says little about the limit a service needs (decision 0076).
 *
 * The growth bench's embedded run (`bench/scenarios/growth.ts`) inside the cgroup, the service started
 * by the container image's command (`scripts/container-start.sh`, after `npm run build`), which sizes
 * its heap to the limit (`PROBE_HEAP_MB` sets the heap limit instead, through NODE_OPTIONS): the roll imported in
 * 10,000-row files, the list and the one-child search at 10 connections, a burst of creations, a
 * graceful stop and a restart. Prints each step's outcome and the cgroup's figures: its most use, how
 * often it reached the limit, the kills of its out-of-memory killer, the anonymous and file pages it
 * held at the end.
 *
 *   PROBE_CGROUP=<a memory cgroup made with its limit, cgroup v1 or v2> \
 *     npx tsx bench/memoryLimitProbe.ts [students=100000]
 *
 * Making one takes root: v1 `mkdir /sys/fs/cgroup/memory/chamada-probe` and the limit written to its
 * `memory.limit_in_bytes`; v2 a directory under `/sys/fs/cgroup` and `memory.max`. The service starts
 * in it (the probe steps in for the moment it spawns the process, then back to its own cgroup): the
 * probe, the load generator, stays out.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { serviceProcess, waitHealthy } from '../test/support/mainProcess.js';
import { burstOfCreations, hasSnapshot, importRoll, measureLoads } from './scenarios/growth.js';
import { rssMb, signedInAdmin } from './scenarios/serviceLoad.js';

const cgroup = process.env.PROBE_CGROUP;
if (cgroup === undefined || !existsSync(`${cgroup}/cgroup.procs`))
  throw new Error('PROBE_CGROUP names a memory cgroup directory (see the comment above)');
const students = Number(process.argv[2] ?? 100_000);
const v1 = existsSync(`${cgroup}/memory.limit_in_bytes`);
const MB = 2 ** 20;

const read = (file: string): Promise<string> => readFile(`${cgroup}/${file}`, 'utf8');
/** A `key value` line of one of the cgroup's files (memory.stat, memory.events, memory.oom_control). */
const field = async (file: string, key: string): Promise<number> =>
  Number(new RegExp(`^${key} (\\d+)$`, 'm').exec(await read(file))?.[1] ?? Number.NaN);
const bytes = async (file: string): Promise<number> => Number((await read(file)).trim());

const limitMb = v1 ? (await bytes('memory.limit_in_bytes')) / MB : (await bytes('memory.max')) / MB;
if (!Number.isFinite(limitMb)) throw new Error(`the cgroup ${cgroup} has no memory limit`);
/** The probe's own memory cgroup, to step back into once the service is spawned. */
const own = ((): string => {
  const lines = readFileSync('/proc/self/cgroup', 'utf8').split('\n');
  const mine = v1
    ? lines.find((l) => /^\d+:([^:]*,)?memory(,[^:]*)?:/.test(l))
    : lines.find((l) => l.startsWith('0::'));
  const path = mine?.slice(mine.lastIndexOf(':') + 1);
  if (path === undefined) throw new Error('the probe finds no memory cgroup of its own');
  return `${cgroup.slice(0, cgroup.indexOf('/cgroup/') + '/cgroup/'.length)}${v1 ? 'memory' : ''}${path}`;
})();
const oomKills = () => (v1 ? field('memory.oom_control', 'oom_kill') : field('memory.events', 'oom_kill'));
const oomKillsBefore = await oomKills();

/** The cgroup's figures now, in MB: its use and most use, anonymous and file pages, mapped files. */
const figures = async (): Promise<string> => {
  const usage = v1 ? await bytes('memory.usage_in_bytes') : await bytes('memory.current');
  const peak = v1
    ? await bytes('memory.max_usage_in_bytes')
    : await bytes('memory.peak').catch(() => Number.NaN);
  const anon = await field('memory.stat', v1 ? 'total_rss' : 'anon');
  const file = await field('memory.stat', v1 ? 'total_cache' : 'file');
  const mapped = await field('memory.stat', v1 ? 'total_mapped_file' : 'file_mapped');
  const reached = v1 ? await bytes('memory.failcnt') : await field('memory.events', 'max');
  return (
    `cgroup use ${(usage / MB).toFixed(0)} MB (most ${(peak / MB).toFixed(0)}), anonymous ${(anon / MB).toFixed(0)}, ` +
    `file ${(file / MB).toFixed(0)} of which mapped ${(mapped / MB).toFixed(0)}; the limit reached ${reached} times, ` +
    `${(await oomKills()) - oomKillsBefore} killed`
  );
};

const svc = await serviceProcess(
  `memory-limit-probe-${students}`,
  {
    AUTH_MODE: 'jwt',
    NODE_ENV: 'development',
    RATE_LIMIT_REQUESTS: '1000000',
    ACCESS_TOKEN_TTL_SECONDS: '86400',
    ...(process.env.PROBE_HEAP_MB === undefined
      ? {}
      : { NODE_OPTIONS: `--max-semi-space-size=4 --max-old-space-size=${process.env.PROBE_HEAP_MB}` }),
  },
  // Started as the image starts it: its command sizes the heap to the limit (decision 0077).
  { kind: 'image' },
);
const say = (line: string) => process.stdout.write(`${line}\n`);
/** Starts the service inside the cgroup: a child is born in its parent's, and `start` spawns at once. */
const startInside = async (timeoutMs: number): Promise<string> => {
  writeFileSync(`${cgroup}/cgroup.procs`, String(process.pid));
  const started = svc.start(timeoutMs);
  writeFileSync(`${own}/cgroup.procs`, String(process.pid));
  const url = await started;
  const pid = svc.pid();
  const inside = pid === undefined ? '' : await readFile(`${cgroup}/cgroup.procs`, 'utf8');
  if (!inside.split('\n').includes(String(pid))) throw new Error('the service did not start in the cgroup');
  const argv = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0').join(' ').trim();
  const warned = svc.output().includes('the memory limit leaves too little beside the heap limit');
  say(
    `started: ${argv} (NODE_OPTIONS ${process.env.PROBE_HEAP_MB === undefined ? 'without' : 'with'} a heap limit); ${warned ? 'it warned that the limit is too small' : 'no memory warning'}`,
  );
  return url;
};
try {
  say(
    `a ${limitMb.toFixed(0)} MB limit (cgroup ${v1 ? 'v1' : 'v2'}), ${students.toLocaleString('en')} students`,
  );
  let url = await startInside(60_000);
  await waitHealthy(url);
  const auth = await signedInAdmin(url);
  const t0 = performance.now();
  const { firstFile } = await importRoll(url, auth, students, () => svc.output());
  say(
    `imported in ${((performance.now() - t0) / 1000).toFixed(0)} s (the first file ${firstFile.status} at ` +
      `${(firstFile.rows / firstFile.seconds).toFixed(0)} rows/s); ${await figures()}`,
  );
  const { lists, searches } = await measureLoads(url, auth, svc.pid(), students, true);
  const rounds = (xs: ReadonlyArray<{ rps: number; p99: number }>) =>
    xs.map((x) => `${x.rps.toFixed(0)} req/s p99 ${x.p99} ms`).join(', ');
  say(`list ${rounds(lists)}; search ${rounds(searches)}`);
  say(`after the loads: resident ${(await rssMb(svc.pid()))?.toFixed(0)} MB; ${await figures()}`);
  await burstOfCreations(url, auth, 200);
  const s0 = performance.now();
  await svc.stop();
  say(
    `graceful stop after a burst of creations ${((performance.now() - s0) / 1000).toFixed(1)} s, ` +
      `${(await hasSnapshot(svc)) ? 'snapshot written' : 'NO snapshot'}`,
  );
  const r0 = performance.now();
  url = await startInside(180_000);
  await waitHealthy(url);
  say(`restart to healthy ${((performance.now() - r0) / 1000).toFixed(1)} s; ${await figures()}`);
} finally {
  await svc.dispose();
}
