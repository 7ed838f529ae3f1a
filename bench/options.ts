/**
 * Command-line options of `npm run bench`:
 *   --quick            a minute instead of five (shorter runs, a smaller data set)
 *   --smoke            quicker still (implies --quick): the heaviest scenarios' loads of a second or
 *                      three and smaller data sets; every row still runs end to end, its figures not
 *                      worth keeping (CI's run, beside another step: the bench must still work)
 *   --only a,b         only the named scenarios: students, check-in, attendance, cold-start, memory, sync,
 *                      first-pull, idempotency, import, couchdb, growth, retention, print, print-agent (a change to one
 *                      path need not wait for the others; couchdb needs BENCH_COUCHDB_URL or shared/couchdb;
 *                      print and print-agent need ippeveprinter and DNS-SD, as npm run test:print does)
 *   --runs N           measured runs per service scenario (default 3), for tighter medians
 *   --cpu-prof DIR     the service process writes a V8 CPU profile into DIR when it stops
 *                      (`bench/cpuProfile.mjs`; Node 20 refuses `--cpu-prof` in NODE_OPTIONS)
 * and environment variables for the service process: BENCH_SERVICE_NODE_OPTIONS (added to its
 * NODE_OPTIONS, such as a preload that counts store calls) and BENCH_SERVICE_ENV (NAME=value pairs
 * set before it starts, such as UV_THREADPOOL_SIZE=2).
 */
export const SCENARIOS = [
  'students',
  'check-in',
  'attendance',
  'cold-start',
  'memory',
  'sync',
  'first-pull',
  'idempotency',
  'import',
  'couchdb',
  'growth',
  'retention',
  'print',
  'print-agent',
] as const;
export type ScenarioName = (typeof SCENARIOS)[number];

export interface BenchOptions {
  readonly quick: boolean;
  /** `--smoke`: `quick`, and the heaviest scenarios shortened further (CI's run). */
  readonly smoke: boolean;
  readonly runs: number | undefined;
  readonly cpuProfDir: string | undefined;
  wants(name: ScenarioName): boolean;
}

const isScenario = (s: string): s is ScenarioName => SCENARIOS.some((n) => n === s);

/** The value after `--name` or in `--name=value`. */
const argValue = (argv: ReadonlyArray<string>, name: string): string | undefined => {
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    if (arg === `--${name}`) return argv[i + 1];
    if (arg?.startsWith(`--${name}=`)) return arg.slice(name.length + 3);
  }
  return undefined;
};

export const parseBenchOptions = (argv: ReadonlyArray<string>): BenchOptions => {
  const onlyArg = argValue(argv, 'only');
  const only = onlyArg?.split(',').map((s) => s.trim());
  // A misspelt name would silently measure nothing; say so instead.
  const unknown = only?.filter((s) => !isScenario(s)) ?? [];
  if (unknown.length > 0)
    throw new Error(`unknown scenario(s) ${unknown.join(', ')}; known: ${SCENARIOS.join(', ')}`);
  const runsArg = argValue(argv, 'runs');
  const runs = runsArg === undefined ? undefined : Number(runsArg);
  if (runs !== undefined && !(Number.isInteger(runs) && runs > 0))
    throw new Error(`--runs wants a positive integer, got ${runsArg}`);
  return {
    quick: argv.includes('--quick') || argv.includes('--smoke'),
    smoke: argv.includes('--smoke'),
    runs,
    cpuProfDir: argValue(argv, 'cpu-prof'),
    wants: (name) => only === undefined || only.includes(name),
  };
};

/** Space-separated NAME=value pairs (BENCH_SERVICE_ENV and the duel's per-side variables). */
export const envPairs = (text: string | undefined): Record<string, string> =>
  Object.fromEntries(
    (text ?? '').split(' ').flatMap((pair) => {
      const at = pair.indexOf('=');
      return at > 0 ? [[pair.slice(0, at), pair.slice(at + 1)] as const] : [];
    }),
  );
