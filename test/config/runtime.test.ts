/** The service's Node.js flags and environment are the same wherever it is started (src/config/runtime.ts). */
import { spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { expect } from 'chai';
import * as t from 'io-ts';
import {
  HEAP_LIMIT_MB,
  SERVICE_ENV,
  SERVICE_NODE_FLAGS,
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

  it('the container image sets every flag in NODE_OPTIONS, where a deployment can change them', async () => {
    const options =
      imageEnv(await runtimeStage())
        .get('NODE_OPTIONS')
        ?.split(/\s+/) ?? [];
    for (const flag of SERVICE_NODE_FLAGS) expect(options, flag).to.include(flag);
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
