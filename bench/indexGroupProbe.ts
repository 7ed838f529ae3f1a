/**
 * What CouchDB's indexing of the private database's Mango indexes costs, one design document an index
 * against one design document for all (decision 0064, twenty-seventh session): student-shaped
 * documents written into a fresh database holding the five indexes, then each index queried so that
 * every one is brought up to date; the wall time and CouchDB's Erlang CPU of the indexing, alternated.
 *
 *   PROBE_COUCHDB_URL=<CouchDB with credentials> PROBE_COUCH_PID=<its beam.smp pid> \
 *     npx tsx bench/indexGroupProbe.ts [documents=10000] [rounds=2]
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { boundedFetch } from '../src/store/boundedFetch.js';
import { indexSpecs } from '../src/store/indexes.js';
import { PouchDB } from '../src/store/pouch.js';
import { aStudentRecord } from '../test/support/fixtures.js';
import { cpuMs } from './scenarios/serviceLoad.js';

const url = process.env.PROBE_COUCHDB_URL;
if (url === undefined) throw new Error('PROBE_COUCHDB_URL names the CouchDB to probe');
const beam = Number(process.env.PROBE_COUCH_PID ?? 0);
const documents = Number(process.argv[2] ?? 10_000);
const rounds = Number(process.argv[3] ?? 2);

/** CouchDB's Erlang VM's CPU so far (0 without its pid). */
const erlangMs = async (): Promise<number> => (beam === 0 ? 0 : ((await cpuMs(beam)) ?? 0));

const probe = async (layout: 'one each' | 'shared'): Promise<string> => {
  const db = new PouchDB(`${url.replace(/\/$/, '')}/indexprobe_${randomUUID().slice(0, 8)}`, {
    fetch: boundedFetch(600_000),
  });
  try {
    const ddocOf = (name: string) => (layout === 'shared' ? 'idx-private' : `idx-${name}`);
    for (const spec of indexSpecs.private)
      await db.createIndex({ index: { name: spec.name, ddoc: ddocOf(spec.name), fields: [...spec.fields] } });
    const docs = Array.from({ length: documents }, (_, i) => ({
      _id: `student:${String(i).padStart(7, '0')}`,
      docType: 'student',
      ...aStudentRecord({ studentId: `s-${i}`, displayName: `Maria Costa ${i}` }),
    }));
    for (let i = 0; i < documents; i += 500) await db.bulkDocs(docs.slice(i, i + 500));
    const cpu0 = await erlangMs();
    const t0 = performance.now();
    for (const spec of indexSpecs.private)
      await db.find({
        selector: Object.fromEntries(spec.fields.map((f) => [f, 'none'])),
        use_index: layout === 'shared' ? [ddocOf(spec.name), spec.name] : ddocOf(spec.name),
        limit: 1,
      });
    const ms = performance.now() - t0;
    const cpu = (await erlangMs()) - cpu0;
    return `${layout}: indexed in ${(ms / 1000).toFixed(1)} s, CouchDB ${(cpu / 1000).toFixed(1)} s of CPU (${(cpu / documents).toFixed(2)} ms a document)`;
  } finally {
    await db.destroy();
  }
};

for (let round = 1; round <= rounds; round += 1)
  for (const layout of ['one each', 'shared'] as const) console.log(`round ${round}, ${await probe(layout)}`);
