/** The real process (`src/main.ts`) as a child, for tests that stop it the hard way. */
import { type ChildProcess, spawn } from 'node:child_process';

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
export const listeningUrl = (stdout: () => string): Promise<string> =>
  waitFor(() => /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(stdout())?.[1], 30_000);
