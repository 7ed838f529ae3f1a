/**
 * What a search costs on a real CouchDB at a large roll (decisions 0067, 0073): the directory's page
 * read through the trigram and suffix views (0067) against the words' view of `student-list` (0073).
 * Alternated rounds in one run, so the ratio holds on the shared machine; per search, the wall time
 * (p50, p99), CouchDB's Erlang CPU and this process's CPU (the directory's side of a page, without
 * HTTP serving), one search at a time and ten at once.
 *
 *   PROBE_COUCHDB_URL=<CouchDB with credentials> PROBE_COUCH_PID=<its beam.smp pid> \
 *     npx tsx bench/searchProbe.ts [students=250000] [rounds=3] [searches=200]
 *
 * The roll (the growth bench's names) is written straight into a database of its own and indexed
 * before the rounds; `PROBE_DB=<name>` reads one a run left (`PROBE_KEEP=1` keeps it).
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { boundedFetch } from '../src/store/boundedFetch.js';
import { PouchDB } from '../src/store/pouch.js';
import { ensureStudentViews, STUDENT_DESIGNS, studentViews } from '../src/store/studentViews.js';
import { couchStudentDirectory } from '../src/sync/couchStudentDirectory.js';
import type { DirectoryPort } from '../src/sync/directoryPort.js';
import { studentDirectory } from '../src/sync/studentDirectory.js';
import { trigramSearch } from '../src/sync/trigramSearch.js';
import { aStudentRecord } from '../test/support/fixtures.js';
import { basicAuth, couchCpu } from './couchServer.js';
import { writeStudents } from './dataset.js';
import { nameOf, oneChildQuery } from './scenarios/growth.js';
import { cpuMs } from './scenarios/serviceLoad.js';

const url = process.env.PROBE_COUCHDB_URL;
if (url === undefined) throw new Error('PROBE_COUCHDB_URL names the CouchDB to probe');
const beam = Number(process.env.PROBE_COUCH_PID ?? 0);
const students = Number(process.argv[2] ?? 250_000);
const rounds = Number(process.argv[3] ?? 3);
const searches = Number(process.argv[4] ?? 200);
const CLASS = randomUUID();

/** CouchDB's Erlang VM's CPU so far (0 without its pid). */
const erlangMs = async (): Promise<number> => (beam === 0 ? 0 : ((await cpuMs(beam)) ?? 0));

const name = process.env.PROBE_DB ?? `searchprobe_${randomUUID().slice(0, 8)}`;
const db = new PouchDB(`${url.replace(/\/$/, '')}/${name}`, { fetch: boundedFetch(3_600_000) });
const info = await db.info();
try {
  if (info.doc_count === 0) {
    await ensureStudentViews(db);
    const t0 = performance.now();
    await writeStudents(db, students, (i) => aStudentRecord({ displayName: nameOf(i), classId: CLASS }));
    process.stderr.write(
      `${students} students written in ${((performance.now() - t0) / 1000).toFixed(0)} s\n`,
    );
  }
  // Each design document indexed alone, one after the other: what each costs CouchDB.
  for (const id of Object.keys(STUDENT_DESIGNS)) {
    const design = id.slice('_design/'.length);
    const views = STUDENT_DESIGNS[id as keyof typeof STUDENT_DESIGNS];
    const t1 = performance.now();
    const cpu0 = await couchCpu(beam);
    // CouchDB answers a query that waited past its own limit with a timeout; the index goes on.
    for (;;) {
      const built = await db.query(`${design}/${Object.keys(views)[0]}`, { limit: 0 }).then(
        () => true,
        (e: unknown) => {
          if (e instanceof Object && 'error' in e && e.error === 'timeout') return false;
          throw e;
        },
      );
      if (built) break;
    }
    const cpu1 = await couchCpu(beam);
    const { base, authorization } = basicAuth(url);
    const index: unknown = await fetch(`${base}/${name}/${id}/_info`, { headers: { authorization } }).then(
      (r) => r.json(),
    );
    process.stderr.write(
      `${design} indexed in ${((performance.now() - t1) / 1000).toFixed(0)} s, CouchDB CPU: Erlang ${(cpu1.erlang - cpu0.erlang) / 1000} s, couchjs ${(cpu1.couchjs - cpu0.couchjs) / 1000} s (${JSON.stringify(index).slice(0, 300)})\n`,
    );
  }

  // The door's query for one child (the growth bench's), then other children, each its own number.
  const oneChild = oneChildQuery(students);
  const others = Array.from({ length: searches }, (_, k) => {
    const i = Math.floor(((k * 7919) % students) / 10) * 10 + (k % 10);
    const words = nameOf(i).split(' ');
    return `${words[0]} ${words[words.length - 1]}`;
  });
  const queries: Record<string, (k: number) => string> = {
    'the same child': () => oneChild,
    'a different child each time': (k) => others[k % others.length] ?? oneChild,
    'a first name alone (first page)': () => 'maria',
  };
  const views = studentViews(db);
  const directories: Record<string, Pick<DirectoryPort, 'page'>> = {
    'trigrams, suffix first (0067)': trigramSearch({ views: views.trigrams, held: studentDirectory() }),
    'words (0073)': couchStudentDirectory({ views, held: studentDirectory() }),
  };
  const percentile = (sorted: number[], p: number) =>
    sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? Number.NaN;
  for (let round = 0; round < rounds; round += 1)
    for (const [query, qOf] of Object.entries(queries))
      for (const [variant, directory] of Object.entries(directories))
        for (const concurrency of [1, 10]) {
          const page = (k: number) =>
            directory?.page({ status: 'ACTIVE', q: qOf(k), afterKey: undefined, limit: 50 });
          await page(0); // the counts, held from here on
          const times: number[] = [];
          let found = 0;
          let next = 0;
          const cpu0 = await erlangMs();
          const own0 = process.cpuUsage();
          const a = performance.now();
          await Promise.all(
            Array.from({ length: concurrency }, async () => {
              for (let k = next++; k < searches; k = next++) {
                const s = performance.now();
                const items = (await page(k))?.items.length ?? 0;
                found += items;
                times.push(performance.now() - s);
              }
            }),
          );
          const wall = performance.now() - a;
          const own = process.cpuUsage(own0);
          const cpu = (await erlangMs()) - cpu0;
          times.sort((x, y) => x - y);
          process.stdout.write(
            `${JSON.stringify({
              students,
              round,
              query,
              variant,
              concurrency,
              found,
              perSecond: Math.round((searches / wall) * 1000),
              p50Ms: Number(percentile(times, 0.5).toFixed(1)),
              p99Ms: Number(percentile(times, 0.99).toFixed(1)),
              couchCpuMs: Number((cpu / searches).toFixed(2)),
              ownCpuMs: Number(((own.user + own.system) / 1000 / searches).toFixed(2)),
            })}\n`,
          );
        }
} finally {
  if (process.env.PROBE_KEEP !== '1') await db.destroy();
}
