/**
 * What CouchDB's indexing of one imported student costs, view by view (decision 0072): `documents`
 * student records as the store writes them (the growth bench's names) go into a fresh database, then
 * each view is queried alone so that CouchDB builds it, and again after as many more records (the
 * incremental update an import leaves behind); for each, the wall time and the CPU of CouchDB's Erlang
 * VM and of its JavaScript processes. The student views as deployed, variants of them (`raw`
 * collation, smaller keys or values), and the private database's Mango indexes, each in a design
 * document of its own with `autoupdate: false`, so that CouchDB's background indexer builds none of
 * them beside the writes.
 *
 *   PROBE_COUCHDB_URL=<CouchDB with credentials> PROBE_COUCH_PID=<its beam.smp pid> \
 *     npx tsx bench/viewCostProbe.ts [documents=10000] [variant,variant…]
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { foldName } from '../src/rules/students.js';
import { boundedFetch } from '../src/store/boundedFetch.js';
import { indexSpecs } from '../src/store/indexes.js';
import { PouchDB } from '../src/store/pouch.js';
import {
  BY_NAME_AND_BIRTH_MAP,
  BY_NAME_MAP,
  BY_SUFFIX_MAP,
  BY_TRIGRAM_MAP,
  BY_WORD_MAP,
  VISITORS_MAP,
} from '../src/store/studentViews.js';
import { aStudentRecord } from '../test/support/fixtures.js';
import { couchCpu } from './couchServer.js';
import { nameOf } from './scenarios/growth.js';

const url = process.env.PROBE_COUCHDB_URL;
if (url === undefined) throw new Error('PROBE_COUCHDB_URL names the CouchDB to probe');
const beam = Number(process.env.PROBE_COUCH_PID ?? 0);
const documents = Number(process.argv[2] ?? 10_000);
const asked = process.argv[3]?.split(',');

const TRIGRAM_EMIT = 'emit([doc.status, g, key], entry)';
const SUFFIX_EMIT = '], value);';
const raw = { options: { collation: 'raw' } };

/** Each variant's design document (its views' `v`); the deployed ones first. */
const variants: Readonly<Record<string, Readonly<Record<string, unknown>>>> = {
  name: { views: { v: { map: BY_NAME_MAP } } },
  trigram: { views: { v: { map: BY_TRIGRAM_MAP, reduce: '_count' } } },
  suffix: { views: { v: { map: BY_SUFFIX_MAP } } },
  matches: { views: { v: { map: BY_NAME_AND_BIRTH_MAP } } },
  visitors: { views: { v: { map: VISITORS_MAP } } },
  'trigram without its count': { views: { v: { map: BY_TRIGRAM_MAP } } },
  'trigram, no value': {
    views: { v: { map: BY_TRIGRAM_MAP.replace(TRIGRAM_EMIT, 'emit([doc.status, g, key], null)') } },
  },
  'trigram, [status, trigram] keys, no value': {
    views: { v: { map: BY_TRIGRAM_MAP.replace(TRIGRAM_EMIT, 'emit([doc.status, g], null)') } },
  },
  'suffix, no value': { views: { v: { map: BY_SUFFIX_MAP.replace(SUFFIX_EMIT, '], null);') } } },
  'suffix, the folded name its value': {
    views: { v: { map: BY_SUFFIX_MAP.replace(SUFFIX_EMIT, '], f);') } },
  },
  'name, raw collation': { ...raw, views: { v: { map: BY_NAME_MAP } } },
  'trigram, raw collation': { ...raw, views: { v: { map: BY_TRIGRAM_MAP, reduce: '_count' } } },
  'suffix, raw collation': { ...raw, views: { v: { map: BY_SUFFIX_MAP } } },
  // Whole design documents as deployed (decision 0073): a query of `v` indexes every view of one.
  'suffix with its count (by-word)': { views: { v: { map: BY_SUFFIX_MAP, reduce: '_count' } } },
  'student-directory (name and trigram)': {
    views: { v: { map: BY_NAME_MAP }, t: { map: BY_TRIGRAM_MAP, reduce: '_count' } },
  },
  'student-list (name and word)': {
    views: { v: { map: BY_NAME_MAP }, w: { map: BY_WORD_MAP, reduce: '_count' } },
  },
};

const db = new PouchDB(`${url.replace(/\/$/, '')}/viewcost_${randomUUID().slice(0, 8)}`, {
  fetch: boundedFetch(900_000),
});
const classId = randomUUID();

/** Records `from` to `to` as the student store writes them (`docOf`: the folded name derived). */
const write = async (from: number, to: number): Promise<void> => {
  const docs = Array.from({ length: to - from }, (_, k) => {
    const r = aStudentRecord({ displayName: nameOf(from + k), classId, birthDate: '2019-01-02' });
    return { _id: `student:${r.studentId}`, docType: 'student', ...r, nameFolded: foldName(r.displayName) };
  });
  for (let i = 0; i < docs.length; i += 500) await db.bulkDocs(docs.slice(i, i + 500));
};

const timed = async (label: string, build: () => Promise<unknown>): Promise<void> => {
  const c0 = await couchCpu(beam);
  const t0 = performance.now();
  await build();
  const c1 = await couchCpu(beam);
  const s = (ms: number) => (ms / 1000).toFixed(1);
  console.log(
    `${label}: ${s(performance.now() - t0)} s, Erlang ${s(c1.erlang - c0.erlang)} s, couchjs ${s(c1.couchjs - c0.couchjs)} s of CPU`,
  );
};

try {
  await write(0, documents);
  const names = Object.keys(variants).filter((v) => asked === undefined || asked.includes(v));
  for (const [k, v] of names.entries())
    await db.put({ _id: `_design/v${k}`, language: 'javascript', autoupdate: false, ...variants[v] });
  // The private database's Mango indexes, each as CouchDB's `_index` writes one (`mangoView`).
  const mango = asked === undefined || asked.includes('mango') ? indexSpecs.private : [];
  for (const spec of mango) {
    const design = { _id: `_design/mango-${spec.name}`, language: 'query', autoupdate: false };
    const views = {
      [spec.name]: {
        map: {
          fields: Object.fromEntries(spec.fields.map((f) => [f, 'asc'])),
          partial_filter_selector: {},
        },
        reduce: '_count',
        options: { def: { fields: [...spec.fields] } },
      },
    };
    // A Mango index's map is an object where PouchDB's types want a function's text (`indexes.ts`).
    await db.put(Object.defineProperty(design, 'views', { value: views, enumerable: true }));
  }
  for (const round of ['built', 'updated'] as const) {
    if (round === 'updated') await write(documents, 2 * documents);
    const rows = round === 'built' ? documents : `${documents} more`;
    for (const [k, v] of names.entries())
      await timed(`${v}, ${round} over ${rows}`, () => db.query(`v${k}/v`, { limit: 0, reduce: false }));
    for (const spec of mango)
      await timed(`Mango ${spec.name}, ${round} over ${rows}`, () =>
        db.find({
          selector: Object.fromEntries(spec.fields.map((f) => [f, 'none'])),
          use_index: [`mango-${spec.name}`, spec.name],
          limit: 1,
        }),
      );
  }
} finally {
  await db.destroy();
}
