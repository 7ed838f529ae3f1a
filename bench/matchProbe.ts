/**
 * What finding an import file's matches costs on a real CouchDB as the roll grows (decision 0064):
 * the roll's records read a page at a time (`eachPage`, what every file did before) against the
 * matching index (`activeMatching`, then the records it names). Alternated in one run, so the ratio
 * holds on the shared machine; the wall time and CouchDB's Erlang CPU of each.
 *
 *   PROBE_COUCHDB_URL=<CouchDB with credentials> PROBE_COUCH_PID=<its beam.smp pid> \
 *     npx tsx bench/matchProbe.ts [students=50000] [rounds=3]
 *
 * The roll is written straight into a database of its own (the import's records, not through the
 * service), and the file is 10,000 new rows: what a late file of a growing roll asks.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { boundedFetch } from '../src/store/boundedFetch.js';
import { PouchDB } from '../src/store/pouch.js';
import { studentStore } from '../src/store/students.js';
import { activeMatching, ensureStudentViews, type NameAndBirth } from '../src/store/studentViews.js';
import { aStudentRecord } from '../test/support/fixtures.js';
import { writeStudents } from './dataset.js';
import { cpuMs } from './scenarios/serviceLoad.js';

const url = process.env.PROBE_COUCHDB_URL;
if (url === undefined) throw new Error('PROBE_COUCHDB_URL names the CouchDB to probe');
const beam = Number(process.env.PROBE_COUCH_PID ?? 0);
const students = Number(process.argv[2] ?? 50_000);
const rounds = Number(process.argv[3] ?? 3);
const FILE_ROWS = 10_000;

/** CouchDB's Erlang VM's CPU so far (0 without its pid). */
const erlangMs = async (): Promise<number> => (beam === 0 ? 0 : ((await cpuMs(beam)) ?? 0));

const nameOf = (i: number) => `${['maria', 'ana', 'joao', 'pedro', 'sofia'][i % 5]} costa ${i}`;
const birthOf = (i: number) => `2019-0${(i % 9) + 1}-${String((i % 28) + 1).padStart(2, '0')}`;

const db = new PouchDB(`${url.replace(/\/$/, '')}/matchprobe_${randomUUID().slice(0, 8)}`, {
  fetch: boundedFetch(600_000),
});
try {
  await ensureStudentViews(db);
  const store = studentStore(db);
  const t0 = performance.now();
  await writeStudents(db, students, (i) => aStudentRecord({ displayName: nameOf(i), birthDate: birthOf(i) }));
  const t1 = performance.now();
  await db.query('student-matches/by-name-and-birth', { limit: 0 });
  process.stderr.write(
    `${students} students written in ${((t1 - t0) / 1000).toFixed(1)} s, indexed in ${((performance.now() - t1) / 1000).toFixed(1)} s\n`,
  );
  // The file: 10,000 children not on the roll, each with a derived id of its own.
  const keys: NameAndBirth[] = Array.from({ length: FILE_ROWS }, (_, k) => [
    nameOf(students + k),
    birthOf(students + k),
  ]);
  const ids: string[] = keys.map(() => randomUUID());
  const wanted = new Set(keys.map(([n, b]) => `${n}\u0000${b}`));
  const idSet = new Set(ids);
  const variants: Record<string, () => Promise<number>> = {
    'whole roll, a page at a time': async () => {
      let found = 0;
      await store.eachPage(1_000, (page) => {
        for (const s of page)
          if (idSet.has(s.studentId) || wanted.has(`${s.nameFolded ?? ''}\u0000${s.birthDate ?? ''}`))
            found += 1;
      });
      return found;
    },
    'matching index, read whole': async () => {
      const named = await activeMatching(db, { keyedReadInRows: 1e9 })({ keys, ids });
      return (await store.getMany(named)).size;
    },
    'matching index, by key': async () => {
      const named = await activeMatching(db, { keyedReadInRows: 0 })({ keys, ids });
      return (await store.getMany(named)).size;
    },
  };
  for (let round = 0; round < rounds; round += 1)
    for (const [name, run] of Object.entries(variants)) {
      const cpu0 = await erlangMs();
      const a = performance.now();
      const found = await run();
      const seconds = (performance.now() - a) / 1000;
      const cpu = ((await erlangMs()) - cpu0) / 1000;
      process.stdout.write(
        `${JSON.stringify({ students, round, variant: name, found, seconds: Number(seconds.toFixed(2)), erlangCpuS: Number(cpu.toFixed(2)) })}\n`,
      );
    }
} finally {
  await db.destroy();
}
