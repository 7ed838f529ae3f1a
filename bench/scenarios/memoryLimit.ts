/**
 * The embedded service inside a memory limit, as a container runtime sets one (`docker run -m 256m`,
 * compose's `mem_limit`): a memory cgroup counts the process's heap, malloc's arenas and the file pages
 * it maps (LevelDB's tables, the node binary) against one limit, takes the file pages back when the
 * sum reaches it, and kills the process when that is not enough (decision 0077). Resident memory read
 * without a limit counts those pages for as long as nothing else wants them, so it does not say which
 * limit a service runs in; this does.
 *
 * The service is started by the container image's command (`scripts/container-start.sh`, which sizes
 * its heap to the limit) alone in the cgroup, the load generator outside, and goes through the growth
 * bench's embedded steps: the roll imported in 10,000-row files, the list and the one-child search at
 * 10 connections, a burst of creations, a graceful stop, a restart.
 *
 * Making a cgroup takes root and a writable cgroup file system (v1's memory hierarchy, or v2 with the
 * memory controller); `makeCgroup` answers why not otherwise, and the growth bench leaves the rows out.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import { totalmem } from 'node:os';
import { performance } from 'node:perf_hooks';
import { serviceProcess, waitHealthy } from '../../test/support/mainProcess.js';
import { burstOfCreations, hasSnapshot, importRoll, measureLoads } from './growth.js';
import { rssMb, signedInAdmin } from './serviceLoad.js';

const MB = 2 ** 20;
const V1_ROOT = '/sys/fs/cgroup/memory';
const V2_ROOT = '/sys/fs/cgroup';

/** What the cgroup says of its memory, in MB, and of its limit. */
export interface CgroupFigures {
  readonly usageMb: number;
  readonly peakMb: number;
  readonly anonMb: number;
  readonly fileMb: number;
  readonly mappedMb: number;
  /** How often a charge met the limit (and the kernel had to take pages back). */
  readonly reached: number;
  /** The out-of-memory killer's kills in it since it was opened. */
  readonly killed: number;
}

export interface Cgroup {
  readonly dir: string;
  readonly limitMb: number;
  figures(): Promise<CgroupFigures>;
  /** Runs `spawn` (which must start its process at once) with this process inside the cgroup. */
  spawnInside<T>(spawn: () => T): T;
  /** Whether process `pid` is in the cgroup. */
  holds(pid: number): Promise<boolean>;
}

/** The cgroup at `dir` (made by the caller, with its limit). */
export const openCgroup = async (dir: string): Promise<Cgroup> => {
  if (!existsSync(`${dir}/cgroup.procs`)) throw new Error(`${dir} is not a cgroup`);
  const v1 = existsSync(`${dir}/memory.limit_in_bytes`);
  const read = (file: string): Promise<string> => readFile(`${dir}/${file}`, 'utf8');
  /** A `key value` line of one of the cgroup's files (memory.stat, memory.events, memory.oom_control). */
  const field = async (file: string, key: string): Promise<number> =>
    Number(new RegExp(`^${key} (\\d+)$`, 'm').exec(await read(file))?.[1] ?? Number.NaN);
  const bytes = async (file: string): Promise<number> => Number((await read(file)).trim());
  const limitMb = (await bytes(v1 ? 'memory.limit_in_bytes' : 'memory.max')) / MB;
  // v2 says "max"; v1 a number near 2^63.
  if (!Number.isFinite(limitMb) || limitMb * MB >= totalmem())
    throw new Error(`the cgroup ${dir} has no memory limit`);
  const oomKills = () => (v1 ? field('memory.oom_control', 'oom_kill') : field('memory.events', 'oom_kill'));
  const killsBefore = await oomKills();
  // This process's own cgroup of the same hierarchy, to step back into once the child is spawned.
  const lines = readFileSync('/proc/self/cgroup', 'utf8').split('\n');
  const mine = v1
    ? lines.find((l) => /^\d+:([^:]*,)?memory(,[^:]*)?:/.test(l))
    : lines.find((l) => l.startsWith('0::'));
  const path = mine?.slice(mine.lastIndexOf(':') + 1);
  if (path === undefined) throw new Error('this process is in no memory cgroup of its own');
  const own = `${v1 ? V1_ROOT : V2_ROOT}${path}`;
  // Inside a container without a cgroup namespace the path is the host's, not found here: stepping
  // back would fail and leave this process (the load generator) inside the limit.
  if (!existsSync(`${own}/cgroup.procs`))
    throw new Error(`this process's cgroup (${own}) is not under the mount`);
  return {
    dir,
    limitMb,
    async figures() {
      return {
        usageMb: (await bytes(v1 ? 'memory.usage_in_bytes' : 'memory.current')) / MB,
        peakMb:
          (v1
            ? await bytes('memory.max_usage_in_bytes')
            : await bytes('memory.peak').catch(() => Number.NaN)) / MB,
        anonMb: (await field('memory.stat', v1 ? 'total_rss' : 'anon')) / MB,
        fileMb: (await field('memory.stat', v1 ? 'total_cache' : 'file')) / MB,
        mappedMb: (await field('memory.stat', v1 ? 'total_mapped_file' : 'file_mapped')) / MB,
        reached: v1 ? await bytes('memory.failcnt') : await field('memory.events', 'max'),
        // Kernels before 4.13 (v1) have no oom_kill count: NaN, which no caller takes for a kill.
        killed: (await oomKills()) - killsBefore,
      };
    },
    spawnInside(spawn) {
      // A child is born in its parent's cgroup: this process steps in for the spawn and back out.
      writeFileSync(`${dir}/cgroup.procs`, String(process.pid));
      try {
        return spawn();
      } finally {
        writeFileSync(`${own}/cgroup.procs`, String(process.pid));
      }
    },
    async holds(pid) {
      return (await read('cgroup.procs')).split('\n').includes(String(pid));
    },
  };
};

/**
 * A new cgroup named `name` limited to `limitMb` (no swap), with what removes it; or why none could
 * be made here.
 */
export const makeCgroup = async (
  name: string,
  limitMb: number,
): Promise<{ readonly cgroup: Cgroup; dispose(): Promise<void> } | { readonly why: string }> => {
  const v1 = existsSync(`${V1_ROOT}/cgroup.procs`);
  const v2 =
    !v1 &&
    (await readFile(`${V2_ROOT}/cgroup.subtree_control`, 'utf8').catch(() => ''))
      .split(/\s+/)
      .includes('memory');
  if (!v1 && !v2) return { why: 'no memory cgroup hierarchy to make one in' };
  const dir = `${v1 ? V1_ROOT : V2_ROOT}/${name}`;
  try {
    await mkdir(dir, { recursive: true });
    const limit = String(limitMb * MB);
    if (v1) {
      await writeFile(`${dir}/memory.limit_in_bytes`, limit);
      // Memory and swap together held to the same limit: no swap, where the host has any.
      if (existsSync(`${dir}/memory.memsw.limit_in_bytes`))
        await writeFile(`${dir}/memory.memsw.limit_in_bytes`, limit);
    } else {
      await writeFile(`${dir}/memory.max`, limit);
      await writeFile(`${dir}/memory.swap.max`, '0').catch(() => undefined);
    }
    return {
      cgroup: await openCgroup(dir),
      dispose: () =>
        rmdir(dir).catch((e: unknown) => {
          process.stderr.write(`bench: the cgroup ${dir} could not be removed: ${String(e)}\n`);
        }),
    };
  } catch (e) {
    await rmdir(dir).catch(() => undefined);
    return { why: `no cgroup could be made (${e instanceof Error ? e.message : String(e)}): it takes root` };
  }
};

interface Rounds {
  readonly lists: Array<{ rps: number; p99: number }>;
  readonly searches: Array<{ rps: number; p99: number }>;
}

export interface LimitRun extends Rounds {
  /** The node command line the image's command left, with the heap limit it chose. */
  readonly argv: string;
  /** Whether the service warned at start that its heap does not fit the limit. */
  readonly warned: boolean;
  readonly importS: number;
  readonly afterImport: CgroupFigures;
  readonly afterLoads: CgroupFigures & { readonly residentMb: number | undefined };
  readonly stopS: number;
  readonly snapshot: boolean;
  readonly restartS: number;
  readonly afterRestart: CgroupFigures;
}

/**
 * The growth bench's embedded steps at `students`, the service started by the image's command inside
 * `cgroup`; `nodeOptions` as a deployment would set them (a heap limit of its own, say). Rejects when
 * a step fails, the process killed among the reasons (`figures().killed` says so).
 */
export const runInLimit = async (
  cgroup: Cgroup,
  students: number,
  nodeOptions: string | undefined,
  say: (line: string) => void = () => undefined,
): Promise<LimitRun> => {
  const svc = await serviceProcess(
    `memory-limit-${students}`,
    {
      AUTH_MODE: 'jwt',
      NODE_ENV: 'development',
      RATE_LIMIT_REQUESTS: '1000000',
      ACCESS_TOKEN_TTL_SECONDS: '86400',
      ...(nodeOptions === undefined ? {} : { NODE_OPTIONS: nodeOptions }),
    },
    { kind: 'image' },
  );
  let argv = '';
  let warned = false;
  const startInside = async (timeoutMs: number): Promise<string> => {
    const url = await cgroup.spawnInside(() => svc.start(timeoutMs));
    const pid = svc.pid();
    if (pid === undefined || !(await cgroup.holds(pid)))
      throw new Error('the service did not start in the cgroup');
    argv = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0').join(' ').trim();
    warned ||= svc.output().includes('the memory limit leaves too little beside the heap limit');
    await waitHealthy(url);
    return url;
  };
  try {
    let url = await startInside(60_000);
    say(`started: ${argv}; ${warned ? 'it warned that the limit is too small' : 'no memory warning'}`);
    const auth = await signedInAdmin(url);
    const t0 = performance.now();
    await importRoll(url, auth, students, () => svc.output());
    const importS = (performance.now() - t0) / 1000;
    const afterImport = await cgroup.figures();
    const { lists, searches } = await measureLoads(url, auth, svc.pid(), students, true);
    const afterLoads = { ...(await cgroup.figures()), residentMb: await rssMb(svc.pid()) };
    await burstOfCreations(url, auth, 200);
    const s0 = performance.now();
    await svc.stop();
    const stopS = (performance.now() - s0) / 1000;
    const snapshot = await hasSnapshot(svc);
    const r0 = performance.now();
    url = await startInside(180_000);
    const restartS = (performance.now() - r0) / 1000;
    return {
      argv,
      warned,
      importS,
      afterImport,
      lists,
      searches,
      afterLoads,
      stopS,
      snapshot,
      restartS,
      afterRestart: await cgroup.figures(),
    };
  } finally {
    await svc.dispose();
  }
};

/** A line of a cgroup's figures, for a run's log. */
export const describeFigures = (f: CgroupFigures): string =>
  `the cgroup held ${f.usageMb.toFixed(0)} MB (most ${f.peakMb.toFixed(0)}), anonymous ${f.anonMb.toFixed(0)}, ` +
  `file ${f.fileMb.toFixed(0)} of which mapped ${f.mappedMb.toFixed(0)}; the limit met ${f.reached} times, ` +
  `${f.killed} killed`;
