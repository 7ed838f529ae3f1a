/**
 * The container image's command (`scripts/container-start.sh`, decision 0077) run as the image runs
 * it, from the repository's root as from the image's `/app`: the process it leaves is node running the
 * bundle, with the heap limit for this machine's memory limit, or the one NODE_OPTIONS sets.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { totalmem } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { upToDate } from '../../scripts/buildFreshness.js';
import {
  bundleHeapLimit,
  bundleServer,
  HEAP_LIMIT_BUNDLE,
  SERVER_BUNDLE,
} from '../../scripts/buildServer.js';
import { heapLimitMbFor } from '../../src/config/runtime.js';
import { childControl, collect, listeningUrl } from '../support/mainProcess.js';
import { makeTempDir, removeDir } from '../support/tempDir.js';

/** The runtime stage's `CMD`, as the JSON array the Dockerfile writes it in. */
const imageCommand = async (): Promise<string[]> => {
  const dockerfile = await readFile('Dockerfile', 'utf8');
  const cmd = /^CMD\s+(\[.*\])\s*$/m.exec(dockerfile.slice(dockerfile.lastIndexOf('\nFROM ')))?.[1];
  const parsed: unknown = cmd === undefined ? undefined : JSON.parse(cmd);
  if (!Array.isArray(parsed) || !parsed.every((w) => typeof w === 'string'))
    throw new Error('the image has no CMD in exec form');
  return parsed;
};

/** Starts the image's command with `env`; answers the arguments of the process left listening. */
const argumentsOfStarted = async (env: Record<string, string>): Promise<string[]> => {
  const [command = '', ...args] = await imageCommand();
  const dataDir = await makeTempDir('container-start');
  let child: ChildProcess | undefined;
  const { end } = childControl(() => child);
  try {
    child = spawn(command, args, {
      env: {
        PATH: process.env.PATH ?? '',
        PORT: '0',
        HOST: '127.0.0.1',
        DATA_DIR: dataDir,
        NODE_ENV: 'development',
        AUTH_MODE: 'jwt',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    await listeningUrl(collect(child.stdout));
    // `exec`: the shell's pid is node's, so the process that listens is the one the command started.
    const cmdline = await readFile(`/proc/${child.pid}/cmdline`, 'utf8');
    return cmdline.split('\0').filter((w) => w !== '');
  } finally {
    await end('SIGTERM');
    await removeDir(dataDir);
  }
};

describe("the container image's command", function () {
  this.timeout(120_000);

  before(async () => {
    // The bundles themselves, whatever entry the other tests start (TEST_SERVICE_ENTRY=source).
    if (!(await upToDate([SERVER_BUNDLE]))) await bundleServer();
    if (!(await upToDate([HEAP_LIMIT_BUNDLE]))) await bundleHeapLimit();
  });

  it('starts the bundle with the heap limit for the memory the process may use', async () => {
    const argv = await argumentsOfStarted({});
    const heapMb = heapLimitMbFor(process.constrainedMemory(), totalmem());
    expect(argv).to.deep.equal(['node', `--max-old-space-size=${heapMb}`, SERVER_BUNDLE]);
  });

  for (const flag of ['--max-old-space-size=300', '--max_old_space_size=300'])
    it(`leaves the heap limit to NODE_OPTIONS when a deployment sets one there (${flag})`, async () => {
      const argv = await argumentsOfStarted({ NODE_OPTIONS: `--max-semi-space-size=4 ${flag}` });
      expect(argv).to.deep.equal(['node', SERVER_BUNDLE]);
    });

  it('runs another bundle named first, with the arguments after it, under the same heap limit', async () => {
    const dir = await makeTempDir('container-start-bundle');
    try {
      const script = join(dir, 'show.js');
      await writeFile(
        script,
        'console.log(JSON.stringify({ flags: process.execArgv, args: process.argv.slice(2) }))',
      );
      const [command = '', ...args] = await imageCommand();
      const run = spawnSync(command, [...args, script, 'backup', '--out', 'a file'], {
        encoding: 'utf8',
        env: { PATH: process.env.PATH ?? '' },
      });
      const heapMb = heapLimitMbFor(process.constrainedMemory(), totalmem());
      expect(JSON.parse(run.stdout)).to.deep.equal({
        flags: [`--max-old-space-size=${heapMb}`],
        args: ['backup', '--out', 'a file'],
      });
    } finally {
      await removeDir(dir);
    }
  });
});
