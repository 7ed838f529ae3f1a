/** The real process (`src/main.ts`) as a child, for tests that stop it the hard way. */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { IMAGE_NODE_OPTIONS_FLAGS, SERVICE_ENV, SERVICE_NODE_FLAGS } from '../../src/config/runtime.js';
import { serviceEntry } from './serviceBundle.js';
import { makeTempDir, removeDir } from './tempDir.js';

/**
 * The TypeScript entry through tsx, or a built entry such as the bundle `dist/server/main.js` (what
 * tests start by default, `serviceEntry`; and the benchmarks), with the Node.js flags the service
 * ships with.
 */
export type NodeEntry = { readonly kind: 'source' } | { readonly kind: 'built'; readonly path: string };

/** Or the container image's command (`scripts/container-start.sh`), which sets the heap limit itself. */
export type Entry = NodeEntry | { readonly kind: 'image' };

export const startMain = (env: Record<string, string>, entry: Entry = { kind: 'source' }): ChildProcess =>
  entry.kind === 'image'
    ? spawn('sh', ['scripts/container-start.sh'], {
        env: {
          PATH: process.env.PATH ?? '',
          ...SERVICE_ENV,
          NODE_OPTIONS: IMAGE_NODE_OPTIONS_FLAGS.join(' '),
          ...env,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      })
    : spawn(
        process.execPath,
        [
          ...SERVICE_NODE_FLAGS,
          ...(entry.kind === 'source' ? ['--import', 'tsx', 'src/main.ts'] : [entry.path]),
        ],
        { env: { PATH: process.env.PATH ?? '', ...SERVICE_ENV, ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
      );

/** Everything a stream has written so far. */
export const collect = (stream: NodeJS.ReadableStream | null): (() => string) => {
  let text = '';
  stream?.on('data', (chunk: Buffer) => {
    text += chunk.toString('utf8');
  });
  return () => text;
};

export const waitFor = async (what: () => string | undefined, ms: number): Promise<string> => {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const found = what();
    if (found !== undefined) return found;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('timed out waiting');
};

/**
 * The URL the process logged once listening. The bound only keeps a start that hangs from holding the
 * suite: a start takes about a second, and half a minute was overrun on a machine loaded twentyfold
 * (an e2e file's service, while other suites ran beside it).
 */
export const listeningUrl = (stdout: () => string, timeoutMs = 90_000): Promise<string> =>
  waitFor(() => /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(stdout())?.[1], timeoutMs);

/** Whether the current child still runs, and ending it with a signal (resolves once it exited). */
export const childControl = (current: () => ChildProcess | undefined) => {
  const running = (): boolean => {
    const child = current();
    return child !== undefined && child.exitCode === null && child.signalCode === null;
  };
  const end = async (signal: NodeJS.Signals): Promise<void> => {
    const child = current();
    if (child === undefined || !running()) return;
    const exited = once(child, 'exit');
    child.kill(signal);
    await exited;
  };
  return { running, end };
};

/**
 * The service as a child process on one data directory, in development auth mode, that a test can
 * kill (SIGKILL), restart and stop (SIGTERM). `dispose` kills what still runs and removes the data.
 */
export interface ServiceProcess {
  readonly dataDir: string;
  /** The running process's pid, for resource readings. */
  pid(): number | undefined;
  /** Starts (or restarts) the process on the same data; resolves with its URL. */
  start(timeoutMs?: number): Promise<string>;
  kill(): Promise<void>;
  stop(): Promise<void>;
  dispose(): Promise<void>;
  /** What the running process (the last started) has written to stdout: its log lines. */
  output(): string;
}

/** `entry` defaults to `serviceEntry()`: the bundle, rebuilt first if a source is newer. */
export const serviceProcess = async (
  label: string,
  env: Record<string, string>,
  entry?: Entry,
): Promise<ServiceProcess> => {
  const dataDir = await makeTempDir(label);
  let child: ChildProcess | undefined;
  const { running, end } = childControl(() => child);
  let output = () => '';
  return {
    dataDir,
    output: () => output(),
    pid: () => (running() ? child?.pid : undefined),
    async start(timeoutMs) {
      child = startMain(
        { PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'info', ...env },
        entry ?? (await serviceEntry()),
      );
      const stdout = collect(child.stdout);
      const stderr = collect(child.stderr);
      output = stdout;
      return listeningUrl(stdout, timeoutMs).catch(async (e: unknown) => {
        // A start that did not come up leaves no process behind: the caller has no handle to stop it
        // yet, and a child still running keeps mocha from ever ending (a CI run that hangs).
        await end('SIGKILL');
        // Say why: the process's last words are the only clue a timed-out start leaves.
        throw new Error(
          `${label} did not start: ${String(e)}\n${stderr().slice(-2000)}\n${stdout().slice(-2000)}`,
        );
      });
    },
    kill: () => end('SIGKILL'),
    stop: () => end('SIGTERM'),
    async dispose() {
      await end('SIGKILL');
      await removeDir(dataDir);
    },
  };
};

/**
 * Resolves once the service at `url` answers its health check with 200 (polling every `everyMs`);
 * rejects after `atMostMs`, so a service that never becomes healthy (or has exited) ends the wait.
 */
export const waitHealthy = async (url: string, everyMs = 10, atMostMs = 180_000): Promise<void> => {
  const deadline = Date.now() + atMostMs;
  while (Date.now() < deadline) {
    const ok = await fetch(`${url}/api/v1/health`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) return;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`${url} was not healthy within ${atMostMs} ms`);
};
