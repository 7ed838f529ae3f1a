/**
 * How the service's process is started: the Node.js flags and the environment it runs with. `npm
 * start`, the container image and the tests that start the real process all use them
 * (`test/config/runtime.test.ts` checks that the first two carry them).
 *
 * V8 sizes its heap limit from the machine's memory (about 4 GiB on a 24 GiB host) and, far from
 * that limit, lets the old generation grow several times past the live data before a full
 * collection, keeping the pages afterwards: under steady load the process grew by 60–90 MB a minute
 * with a live heap of 35 MB (the soak row of the reliability battery, decision 0011). A limit sized
 * to the service's budget makes V8 collect before it grows: 256 MB is seven times the live heap seen
 * under load and four times the benchmark's ten thousand children, and the soak then grows by less
 * than 10 MB. A deployment with more data raises it (`NODE_OPTIONS=--max-old-space-size=…`).
 */
export const HEAP_LIMIT_MB = 256;

/**
 * V8's young generation: each of its two halves (semi-spaces) grows to 16 MB on a 64-bit machine, and
 * both stay resident once a burst of allocation (an import, a roster pass) has grown them. At 4 MB a
 * service after a 20,000-student import and a search load held 24 MB less of young generation and
 * 42 MB less resident memory in all (292 → 250 MB, decision 0062); what lives past a collection moves
 * to the old generation sooner, which the old space's limit above bounds anyway.
 */
export const YOUNG_SEMI_SPACE_MB = 4;

export const SERVICE_NODE_FLAGS: ReadonlyArray<string> = [
  `--max-old-space-size=${HEAP_LIMIT_MB}`,
  `--max-semi-space-size=${YOUNG_SEMI_SPACE_MB}`,
];

/**
 * The flags the container image's `NODE_OPTIONS` carries: all but the heap limit, which its command
 * sizes to the container (decision 0077) and which, found in `NODE_OPTIONS`, it takes for a
 * deployment's own.
 */
export const IMAGE_NODE_OPTIONS_FLAGS: ReadonlyArray<string> = SERVICE_NODE_FLAGS.filter(
  (f) => !f.startsWith('--max-old-space-size'),
);

/**
 * glibc gives each thread that allocates an arena of its own, up to eight per core, and keeps what is
 * freed in an arena for that arena's later use. LevelDB's reads and compactions and leveldown's work
 * run on the libuv pool's and LevelDB's threads, and much of what they allocate is freed on the main
 * thread: ten minutes of soak (decision 0011) ended with twelve arenas holding 61 MB, 26 MB more than
 * after the warm-up and still growing; with two, the same load ended with 29 MB in them (+11 MB), at
 * the same request rate. glibc reads it when the process starts, so it must be in the environment
 * node is started with; the image sets it with `ENV`, where a deployment can change it.
 */
export const SERVICE_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '2' };

/**
 * What the service holds beside V8's heap, in MB: malloc's arenas (LevelDB's blocks and leveldown's
 * buffers), V8's young generation and code, and room for the pages of the node binary and LevelDB's
 * tables a limit counts. At 100,000 students imported into a container limited to 256 MB, the heap
 * limit the image used to ship (256 MB) let the process be killed at the eighth file with 254 MB of
 * anonymous memory; 96 MB less heap (160 MB) ran the import, the loads, the stop and the restart
 * (decision 0077).
 */
export const BESIDE_HEAP_MB = 96;

/** Below this a heap holds too little of a roll to be worth starting with (a small club's, 0077). */
export const MIN_HEAP_LIMIT_MB = 64;

/**
 * The heap limit for a process the OS limits to `limitBytes` of memory (`process.constrainedMemory()`:
 * 0 when it knows of no limit, and a cgroup's "no limit" reads as more than the machine has): the
 * service's budget, less when the container's limit would not also hold what sits beside the heap.
 */
const noLimit = (limitBytes: number, machineBytes: number): boolean =>
  !(limitBytes > 0) || limitBytes >= machineBytes;

export const heapLimitMbFor = (limitBytes: number, machineBytes: number): number => {
  if (noLimit(limitBytes, machineBytes)) return HEAP_LIMIT_MB;
  const fits = Math.floor(limitBytes / 2 ** 20) - BESIDE_HEAP_MB;
  return Math.max(MIN_HEAP_LIMIT_MB, Math.min(HEAP_LIMIT_MB, fits));
};

/** V8's largest semi-space on a 64-bit machine when no flag sets it (Node 20 and 22). */
const V8_DEFAULT_SEMI_SPACE_MB = 16;

/**
 * The semi-space the process runs with, from its flags (`process.execArgv` and `NODE_OPTIONS`'s words;
 * the last one given wins, as V8 reads them): a deployment's `NODE_OPTIONS` replaces the image's, and
 * may leave `--max-semi-space-size` out.
 */
export const semiSpaceMbOf = (flags: ReadonlyArray<string>): number => {
  let mb = V8_DEFAULT_SEMI_SPACE_MB;
  for (const flag of flags) {
    const value = /^--max[-_]semi[-_]space[-_]size=(\d+)$/.exec(flag)?.[1];
    if (value !== undefined) mb = Number(value);
  }
  return mb;
};

/**
 * Whether a running process's old-space limit (`heap_size_limit` less the young generation of
 * `semiSpaceMb` semi-spaces, which `BESIDE_HEAP_MB` counts) leaves `BESIDE_HEAP_MB` under its memory
 * limit: a deployment that set `--max-old-space-size` itself (or `npm start` in a container) is told
 * at start, not by the kernel's killer in the middle of an import.
 */
export const memoryShortfall = (
  heapSizeLimitBytes: number,
  semiSpaceMb: number,
  limitBytes: number,
  machineBytes: number,
): { readonly heapLimitMb: number; readonly memoryLimitMb: number; readonly shortMb: number } | undefined => {
  if (noLimit(limitBytes, machineBytes)) return undefined;
  // heap_size_limit adds the young generation, three semi-spaces; BESIDE_HEAP_MB counts it already.
  const heapLimitMb = Math.round(heapSizeLimitBytes / 2 ** 20) - 3 * semiSpaceMb;
  const memoryLimitMb = Math.floor(limitBytes / 2 ** 20);
  const shortMb = heapLimitMb + BESIDE_HEAP_MB - memoryLimitMb;
  return shortMb > 0 ? { heapLimitMb, memoryLimitMb, shortMb } : undefined;
};
