/**
 * What each page of the conflict report costs down a long report (decision 0048, twenty-seventh
 * session): the records written straight into a projections database, `instants` server times
 * shared among them (a sync request stamps its whole batch with one time, so one instant may hold a
 * whole report), then paged 200 at a time through the store's own query, each page timed. A page's
 * cost should not grow with how far down the report it is.
 *
 *   PROBE_COUCHDB_URL=<CouchDB with credentials> npx tsx bench/conflictPagesProbe.ts [records=1800] [instants=1]
 *   npx tsx bench/conflictPagesProbe.ts [records] [instants]   (the embedded store, in a temporary directory)
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ensureIndexes, indexSpecs } from '../src/store/indexes.js';
import { PouchDB } from '../src/store/pouch.js';
import { projectionStore } from '../src/store/projections.js';
import { openStore } from '../src/store/store.js';
import { anAdmissionException } from '../test/support/fixtures.js';

const records = Number(process.argv[2] ?? 1800);
const instants = Number(process.argv[3] ?? 1);
const PAGE = 200;
const BASE = Date.parse('2026-11-29T09:00:00.000Z');

/** Record `i`'s time: the records spread evenly over `instants` seconds. */
const instantOf = (i: number): string =>
  new Date(BASE + Math.floor((i * instants) / records) * 1000).toISOString();

const main = async (): Promise<void> => {
  const url = process.env.PROBE_COUCHDB_URL;
  const prefix = `conflictprobe_${randomUUID().slice(0, 8)}_`;
  const dir = url === undefined ? await mkdtemp(join(tmpdir(), 'conflictprobe-')) : undefined;
  const store = await openStore(
    dir === undefined
      ? { kind: 'couchdb', url: url ?? '', prefix }
      : { kind: 'embedded', dataDir: dir, prefix },
  );
  try {
    await ensureIndexes(store.db.projections, indexSpecs.projections);
    const projections = projectionStore(store.db.projections);
    const all = Array.from({ length: records }, (_, i) =>
      anAdmissionException(`child-${i}`, instantOf(i), 2),
    );
    for (let i = 0; i < records; i += 500) await projections.recordAdmissionExceptions(all.slice(i, i + 500));
    // Brings the index up to date, so that the first page is not charged with building it.
    await projections.conflicts({ limit: 1 });
    const times: number[] = [];
    let after: readonly [string, string] | undefined;
    let seen = 0;
    for (;;) {
      const started = performance.now();
      const found = await projections.conflicts({ limit: PAGE, ...(after === undefined ? {} : { after }) });
      times.push(Math.round(performance.now() - started));
      const items = found.slice(0, PAGE);
      seen += items.length;
      const last = items.at(-1);
      if (found.length <= PAGE || last === undefined) break;
      after = [last.detectedAt, last._id];
    }
    console.log(
      `${url === undefined ? 'embedded' : 'CouchDB'}: ${seen} of ${records} records in ${instants} instant(s), ` +
        `pages of ${PAGE}: ${times.join(' ')} ms`,
    );
  } finally {
    const names = Object.values(store.db).map((db) => db.name);
    await store.close();
    if (url !== undefined) await Promise.all(names.map((name) => new PouchDB(name).destroy()));
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  }
};
await main();
