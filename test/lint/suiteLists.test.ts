/**
 * Suites named file by file: the stress battery lists its files longest first, so that its two mocha
 * workers end together (decision 0048), and the three-node CouchDB run names the suites whose
 * behaviour differs on a cluster, of which `scripts/test-couchdb.sh` names the fault rows
 * (`--fault-suites` runs them alone, `--no-fault-suites` the others). A list is where a new suite can
 * be left out without anyone seeing it, so every stress file must be in the battery's list once, every
 * listed file must exist, and each fault row must be one of the cluster's suites (or neither share
 * would run it).
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import * as t from 'io-ts';
import { decodeAs } from '../support/http.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const MochaConfig = t.type({ spec: t.array(t.string) });

const specOf = async (config: string): Promise<string[]> =>
  decodeAs(MochaConfig, JSON.parse(await readFile(join(ROOT, config), 'utf8'))).spec;

describe('suites listed file by file', () => {
  it('the stress battery lists every stress file under test/stress once', async () => {
    const listed = await specOf('.mocharc.stress.json');
    const present = (await readdir(join(ROOT, 'test/stress')))
      .filter((f) => f.endsWith('.stress.ts'))
      .map((f) => `test/stress/${f}`);
    expect(new Set(listed).size, 'a file listed twice runs twice').to.equal(listed.length);
    expect([...listed].sort()).to.deep.equal(present.sort());
  });

  it('every suite the three-node CouchDB run names exists', async () => {
    const listed = await specOf('.mocharc.couchdb-cluster.json');
    expect(listed).to.not.be.empty;
    for (const file of listed) {
      const found = await stat(join(ROOT, file)).then(
        (s) => s.isFile(),
        () => false,
      );
      expect(found, file).to.equal(true);
    }
  });

  it("the fault rows the CouchDB script names are among the cluster's suites, and not all of them", async () => {
    const script = await readFile(join(ROOT, 'scripts/test-couchdb.sh'), 'utf8');
    const block = /^fault_suites=\(\n([^)]*)\)/m.exec(script)?.[1];
    expect(block, 'a fault_suites=( … ) list in scripts/test-couchdb.sh').to.be.a('string');
    const faults = (block ?? '')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '');
    const cluster = await specOf('.mocharc.couchdb-cluster.json');
    expect(faults).to.not.be.empty;
    expect(
      faults.filter((f) => !cluster.includes(f)),
      'fault rows outside the cluster list',
    ).to.deep.equal([]);
    expect(faults.length).to.be.below(cluster.length);
  });
});
