/**
 * The CouchDB settings the deployment mounts into every node (`deploy/couchdb/chamada.ini`) and the
 * part of them the bench gives the CouchDB it measures (decision 0066).
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import { deployedCompaction } from '../../bench/couchServer.js';
import { makeTempDir, removeDir } from '../support/tempDir.js';

const HH_MM = /^([01]\d|2[0-3]):[0-5]\d$/;
const minutes = (hhmm: string): number => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3));

describe('the deployment’s CouchDB settings', () => {
  it('compact databases and indexes in a strict window of the night, not all day', async () => {
    const settings = await deployedCompaction();
    for (const channel of ['smoosh.ratio_dbs', 'smoosh.ratio_views']) {
      const of = (key: string) => settings.find((s) => s.section === channel && s.key === key)?.value;
      const from = of('from') ?? '';
      const to = of('to') ?? '';
      expect(from, `${channel} from`).to.match(HH_MM);
      expect(to, `${channel} to`).to.match(HH_MM);
      expect(of('strict_window'), channel).to.equal('true');
      // Long enough to compact a night's growth, short enough to stay out of a day's imports.
      const length = (minutes(to) - minutes(from) + 24 * 60) % (24 * 60);
      expect(length, channel).to.be.within(4 * 60, 8 * 60);
    }
  });

  it('gives the bench only the compaction schedule, not the container’s other settings', async () => {
    const dir = await makeTempDir('ini');
    try {
      const file = join(dir, 'chamada.ini');
      await writeFile(
        file,
        [
          '[couchdb]',
          'single_node = true',
          '[smoosh.ratio_dbs]',
          'from = 04:00',
          'strict_window = true',
          '[smoosh]',
          'persist = false',
        ].join('\n'),
      );
      expect(await deployedCompaction(file)).to.deep.equal([
        { section: 'smoosh.ratio_dbs', key: 'from', value: '04:00' },
        { section: 'smoosh.ratio_dbs', key: 'strict_window', value: 'true' },
      ]);
    } finally {
      await removeDir(dir);
    }
  });
});
