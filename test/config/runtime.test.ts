/** The service's Node.js flags are the same wherever it is started (src/config/runtime.ts). */
import { spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { expect } from 'chai';
import * as t from 'io-ts';
import { HEAP_LIMIT_MB, SERVICE_NODE_FLAGS } from '../../src/config/runtime.js';
import { decodeAs } from '../support/http.js';

const PackageJson = t.type({ scripts: t.type({ start: t.string }) });

describe('the Node.js flags the service runs with', () => {
  it('`npm start` passes every one of them to node', async () => {
    const pkg = decodeAs(PackageJson, JSON.parse(await readFile('package.json', 'utf8')));
    const words = pkg.scripts.start.split(/\s+/);
    expect(words[0]).to.equal('node');
    for (const flag of SERVICE_NODE_FLAGS) expect(words, flag).to.include(flag);
  });

  it('the container image sets every one of them in NODE_OPTIONS, where a deployment can change them', async () => {
    const dockerfile = await readFile('Dockerfile', 'utf8');
    const runtimeStage = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    const options = /^ENV NODE_OPTIONS=(.+)$/m.exec(runtimeStage)?.[1]?.trim().split(/\s+/) ?? [];
    for (const flag of SERVICE_NODE_FLAGS) expect(options, flag).to.include(flag);
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
});
