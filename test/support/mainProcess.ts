/** The real process (`src/main.ts`) as a child, for tests that stop it the hard way. */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { makeTempDir, removeDir } from './tempDir.js';

export const startMain = (env: Record<string, string>): ChildProcess =>
  spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });

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

/** The URL the process logged once listening. */
export const listeningUrl = (stdout: () => string, timeoutMs = 30_000): Promise<string> =>
  waitFor(() => /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(stdout())?.[1], timeoutMs);

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
}

export const serviceProcess = async (label: string, env: Record<string, string>): Promise<ServiceProcess> => {
  const dataDir = await makeTempDir(label);
  let child: ChildProcess | undefined;
  const running = () => child !== undefined && child.exitCode === null && child.signalCode === null;
  const end = async (signal: NodeJS.Signals) => {
    if (child === undefined || !running()) return;
    const exited = once(child, 'exit');
    child.kill(signal);
    await exited;
  };
  return {
    dataDir,
    pid: () => (running() ? child?.pid : undefined),
    start(timeoutMs) {
      child = startMain({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'info', ...env });
      return listeningUrl(collect(child.stdout), timeoutMs);
    },
    kill: () => end('SIGKILL'),
    stop: () => end('SIGTERM'),
    async dispose() {
      await end('SIGKILL');
      await removeDir(dataDir);
    },
  };
};
