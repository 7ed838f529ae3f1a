/** The service's Node.js flags and environment are the same wherever it is started (src/config/runtime.ts). */
import { spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { expect } from 'chai';
import * as t from 'io-ts';
import {
  BESIDE_HEAP_MB,
  HEAP_LIMIT_MB,
  heapLimitMbFor,
  IMAGE_NODE_OPTIONS_FLAGS,
  MIN_HEAP_LIMIT_MB,
  memoryShortfall,
  SERVICE_ENV,
  SERVICE_NODE_FLAGS,
  semiSpaceMbOf,
  YOUNG_SEMI_SPACE_MB,
} from '../../src/config/runtime.js';
import { decodeAs } from '../support/http.js';

const PackageJson = t.type({ scripts: t.type({ start: t.string }) });

/** `npm start`'s command: the `NAME=value` assignments before the command, and its words. */
const startCommand = async () => {
  const pkg = decodeAs(PackageJson, JSON.parse(await readFile('package.json', 'utf8')));
  const words = pkg.scripts.start.trim().split(/\s+/);
  const env = new Map<string, string>();
  for (const w of words) {
    const assignment = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(w);
    if (assignment === null) break;
    env.set(assignment[1] ?? '', assignment[2] ?? '');
  }
  return { env, command: words.slice(env.size) };
};

/** The lines of the Dockerfile's last stage (the image that runs), continuation lines joined. */
const runtimeStage = async (): Promise<string> => {
  const dockerfile = await readFile('Dockerfile', 'utf8');
  return dockerfile.slice(dockerfile.lastIndexOf('\nFROM ')).replace(/\\\n/g, ' ');
};

/** Every `NAME=value` the stage's `ENV` instructions set. */
const imageEnv = (stage: string): Map<string, string> => {
  const env = new Map<string, string>();
  for (const line of stage.split('\n')) {
    const body = /^ENV\s+(.+)$/.exec(line.trim())?.[1];
    if (body === undefined) continue;
    // A value is a word or a double-quoted string (NODE_OPTIONS may hold several flags).
    for (const [, name, quoted, word] of body.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=(?:"([^"]*)"|(\S+))/g))
      env.set(name ?? '', quoted ?? word ?? '');
  }
  return env;
};

describe('the Node.js flags and environment the service runs with', () => {
  it('`npm start` passes every flag to node', async () => {
    const { command } = await startCommand();
    expect(command[0]).to.equal('node');
    for (const flag of SERVICE_NODE_FLAGS) expect(command, flag).to.include(flag);
  });

  it('`npm start` sets every variable of the environment', async () => {
    const { env } = await startCommand();
    for (const [name, value] of Object.entries(SERVICE_ENV)) expect(env.get(name), name).to.equal(value);
  });

  it('the container image sets every flag but the heap limit in NODE_OPTIONS, where a deployment can change them', async () => {
    const options =
      imageEnv(await runtimeStage())
        .get('NODE_OPTIONS')
        ?.split(/\s+/) ?? [];
    // The image's command sizes the heap to the container (test/config/containerStart.test.ts); one in
    // NODE_OPTIONS would be taken for the deployment's own and left there.
    expect(options.filter((o) => o.startsWith('--max-old-space-size'))).to.deep.equal([]);
    for (const flag of IMAGE_NODE_OPTIONS_FLAGS) expect(options, flag).to.include(flag);
    // Every flag but the heap limit's.
    expect(IMAGE_NODE_OPTIONS_FLAGS).to.have.length(SERVICE_NODE_FLAGS.length - 1);
  });

  it('the container image sets every variable of the environment with ENV', async () => {
    const env = imageEnv(await runtimeStage());
    for (const [name, value] of Object.entries(SERVICE_ENV)) expect(env.get(name), name).to.equal(value);
  });

  it('the heap limit is the one the process gets', () => {
    const out = spawnSync(
      process.execPath,
      [...SERVICE_NODE_FLAGS, '-p', 'require("node:v8").getHeapStatistics().heap_size_limit'],
      { encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } },
    );
    const limitMb = Number(out.stdout.trim()) / 2 ** 20;
    // V8 adds its young generation to the old-space limit it was given.
    expect(limitMb).to.be.within(HEAP_LIMIT_MB, HEAP_LIMIT_MB + 64);
  });

  it('the young generation stays within its two semi-spaces after a burst of short-lived objects', () => {
    // Without the flag the same burst grows the new space to 32 MB (two semi-spaces of 16 MB).
    const burst =
      'let a = []; for (let i = 0; i < 3e6; i++) { a.push({ i }); if (a.length > 2e5) a = []; }' +
      'const s = require("node:v8").getHeapSpaceStatistics().find((x) => x.space_name === "new_space");' +
      'console.log(s.space_size)';
    const out = spawnSync(process.execPath, [...SERVICE_NODE_FLAGS, '-e', burst], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '' },
    });
    expect(Number(out.stdout.trim()) / 2 ** 20).to.be.within(1, 2 * YOUNG_SEMI_SPACE_MB);
  });
});

const MB = 2 ** 20;
const MACHINE = 24 * 1024 * MB;

describe('the heap limit for a memory limit (decision 0077)', () => {
  const cases: ReadonlyArray<readonly [string, number, number]> = [
    ['no limit known (0)', 0, HEAP_LIMIT_MB],
    ["a cgroup's 'no limit' (more than the machine)", 2 ** 64, HEAP_LIMIT_MB],
    ['a limit as large as the machine', MACHINE, HEAP_LIMIT_MB],
    ['1 GiB', 1024 * MB, HEAP_LIMIT_MB],
    ['exactly the budget and what sits beside it', (HEAP_LIMIT_MB + BESIDE_HEAP_MB) * MB, HEAP_LIMIT_MB],
    ['one MB less', (HEAP_LIMIT_MB + BESIDE_HEAP_MB - 1) * MB, HEAP_LIMIT_MB - 1],
    ['256 MB (docker run -m 256m)', 256 * MB, 256 - BESIDE_HEAP_MB],
    ['320 MB', 320 * MB, 320 - BESIDE_HEAP_MB],
    ['a part of a MB is not counted', 256 * MB + 512 * 1024, 256 - BESIDE_HEAP_MB],
    ['128 MB: the smallest heap', 128 * MB, MIN_HEAP_LIMIT_MB],
    ['64 MB: the smallest heap still', 64 * MB, MIN_HEAP_LIMIT_MB],
    ['not a number', Number.NaN, HEAP_LIMIT_MB],
  ];
  for (const [what, limitBytes, heapMb] of cases)
    it(`${what}: ${heapMb} MB`, () => {
      expect(heapLimitMbFor(limitBytes, MACHINE)).to.equal(heapMb);
    });
});

describe('a memory limit too small for the heap limit, told at start (decision 0077)', () => {
  /** The `heap_size_limit` V8 gives a process started with the service's flags and `oldSpaceMb`. */
  const heapSizeLimit = (oldSpaceMb: number): number =>
    Number(
      spawnSync(
        process.execPath,
        [
          ...SERVICE_NODE_FLAGS,
          `--max-old-space-size=${oldSpaceMb}`,
          '-p',
          'require("node:v8").getHeapStatistics().heap_size_limit',
        ],
        { encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } },
      ).stdout.trim(),
    );
  let budget = 0;
  let sizedTo256 = 0;
  let onePast = 0;
  before(() => {
    budget = heapSizeLimit(HEAP_LIMIT_MB);
    sizedTo256 = heapSizeLimit(heapLimitMbFor(256 * MB, MACHINE));
    onePast = heapSizeLimit(heapLimitMbFor(256 * MB, MACHINE) + 1);
  });
  const cases: ReadonlyArray<readonly [string, () => number, number, number | undefined]> = [
    ['the budget, no limit known', () => budget, 0, undefined],
    ["the budget, a cgroup's 'no limit'", () => budget, 2 ** 64, undefined],
    ['the budget, room beside it', () => budget, 512 * MB, undefined],
    ['the budget, just room', () => budget, (HEAP_LIMIT_MB + BESIDE_HEAP_MB) * MB, undefined],
    ['the budget, 1 MB short', () => budget, (HEAP_LIMIT_MB + BESIDE_HEAP_MB - 1) * MB, 1],
    ['the budget in a 256 MB container', () => budget, 256 * MB, HEAP_LIMIT_MB + BESIDE_HEAP_MB - 256],
    ["the image's heap for a 256 MB container", () => sizedTo256, 256 * MB, undefined],
    ['1 MB more heap than that', () => onePast, 256 * MB, 1],
  ];
  for (const [what, heapBytes, limitBytes, shortMb] of cases)
    it(`${what}: ${shortMb === undefined ? 'nothing said' : `${shortMb} MB short`}`, () => {
      expect(memoryShortfall(heapBytes(), YOUNG_SEMI_SPACE_MB, limitBytes, MACHINE)?.shortMb).to.equal(
        shortMb,
      );
    });

  it("counts V8's own young generation when the flags leave the semi-space out", () => {
    const heapMb = heapLimitMbFor(256 * MB, MACHINE);
    const out = spawnSync(
      process.execPath,
      [`--max-old-space-size=${heapMb}`, '-p', 'require("node:v8").getHeapStatistics().heap_size_limit'],
      { encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } },
    );
    const heapBytes = Number(out.stdout.trim());
    expect(memoryShortfall(heapBytes, semiSpaceMbOf([]), 256 * MB, MACHINE)).to.equal(undefined);
    // Taken for the image's 4 MB semi-spaces, the larger young generation would read as old space.
    expect(memoryShortfall(heapBytes, YOUNG_SEMI_SPACE_MB, 256 * MB, MACHINE)?.shortMb).to.be.above(0);
  });

  it('says the limits it compared, the old space without the young generation', () => {
    expect(memoryShortfall(budget, YOUNG_SEMI_SPACE_MB, 256 * MB, MACHINE)).to.deep.equal({
      heapLimitMb: HEAP_LIMIT_MB,
      memoryLimitMb: 256,
      shortMb: HEAP_LIMIT_MB + BESIDE_HEAP_MB - 256,
    });
  });
});

describe('the semi-space a process runs with, from its flags', () => {
  const cases: ReadonlyArray<readonly [ReadonlyArray<string>, number]> = [
    [[], 16],
    [['--max-semi-space-size=4'], 4],
    [['--max_semi_space_size=8'], 8],
    [['--max-semi-space-size=4', '--max-old-space-size=512', '--max-semi-space-size=2'], 2],
    [['--max-old-space-size=512', ''], 16],
    [['--max-semi-space-size='], 16],
  ];
  for (const [flags, mb] of cases)
    it(`${JSON.stringify(flags)}: ${mb} MB`, () => {
      expect(semiSpaceMbOf(flags)).to.equal(mb);
    });
});
