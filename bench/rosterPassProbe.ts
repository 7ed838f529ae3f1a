/**
 * What the roster's passes cost after a file of students arrives on a large roll (decision 0069):
 * the full pass (every student, the roster by ranges, every family) against the students' pass of
 * the file alone (its students by id, the families they are in), one after the other in one run so
 * the ratio holds on the shared machine; both for a single student's change, as an office edit; and
 * the full pass once more with nothing changed, as the clock runs it, and as a restart's first pass
 * runs it (decision 0070: the roster's ranges checked by their revisions, with the memos the passes
 * before kept in the database). Wall time, this process's CPU, and the most heap and memory it held, of each.
 *
 *   npx tsx bench/rosterPassProbe.ts [students=100000] [file=10000]
 *   PROBE_COUCHDB_URL=<CouchDB with credentials> PROBE_COUCH_PID=<its beam.smp pid> \
 *     npx tsx bench/rosterPassProbe.ts …   (CouchDB, and its Erlang VM's CPU)
 *
 * The roll is written straight into the store (not through the service); a third of the children
 * share a guardian's phone with the one before (siblings). The pickup lists are the records'
 * guardians, as the pickup service gives them when no entry was added.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { StudentRecord } from '../src/domain/student.js';
import { rosterStore } from '../src/store/roster.js';
import { openStore } from '../src/store/store.js';
import { studentStore } from '../src/store/students.js';
import { rosterFullPass, rosterStudentsPass } from '../src/sync/rosterInput.js';
import { studentDirectory } from '../src/sync/studentDirectory.js';
import { aStudentRecord } from '../test/support/fixtures.js';
import { adultsOf, CLASS_A, settingsDeps } from '../test/support/rosterFixtures.js';
import { makeTempDir, removeDir } from '../test/support/tempDir.js';
import { writeStudents } from './dataset.js';
import { cpuMs } from './scenarios/serviceLoad.js';

const students = Number(process.argv[2] ?? 100_000);
const fileRows = Number(process.argv[3] ?? 10_000);
const url = process.env.PROBE_COUCHDB_URL;
const beam = Number(process.env.PROBE_COUCH_PID ?? 0);
/** CouchDB's Erlang VM's CPU so far (0 without its pid). */
const erlangMs = async (): Promise<number> => (beam === 0 ? 0 : ((await cpuMs(beam)) ?? 0));

const recordOf = (i: number): StudentRecord =>
  aStudentRecord({
    displayName: `Criança ${i}`,
    guardianName: `Responsável ${i - (i % 3 === 1 ? 1 : 0)}`,
    // Every third child shares the phone of the one before.
    phones: [
      { number: `(11) 9${String(10_000_000 + i - (i % 3 === 1 ? 1 : 0)).slice(-8)}`, qualifier: 'mãe' },
    ],
    classId: CLASS_A,
  });

const mb = (bytes: number): string => (bytes / 2 ** 20).toFixed(1);

const timed = async <T>(what: string, run: () => Promise<T>): Promise<T> => {
  const cpu0 = process.cpuUsage();
  const erlang0 = await erlangMs();
  // The most the heap and the process held while it ran, sampled (the full pass's members of every
  // family are held until its families' pages: decision 0076).
  const peak = { heap: 0, rss: 0 };
  const sample = () => {
    const m = process.memoryUsage();
    peak.heap = Math.max(peak.heap, m.heapUsed);
    peak.rss = Math.max(peak.rss, m.rss);
  };
  const sampler = setInterval(sample, 20);
  const t0 = performance.now();
  const out = await run().finally(() => clearInterval(sampler));
  sample();
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const erlang = beam === 0 ? '' : `, CouchDB's Erlang CPU ${((await erlangMs()) - erlang0) / 1000} s`;
  process.stdout.write(
    `${what}: ${(ms / 1000).toFixed(2)} s, this process's CPU ${((cpu.user + cpu.system) / 1e6).toFixed(2)} s${erlang}; at most ${mb(peak.heap)} MB of heap used, ${mb(peak.rss)} MB resident\n`,
  );
  return out;
};

const dir = await makeTempDir('roster-pass-probe');
const store = await openStore(
  url === undefined
    ? { kind: 'embedded', dataDir: dir, prefix: 'probe_' }
    : { kind: 'couchdb', url, prefix: `probe_${randomUUID().slice(0, 8)}_` },
);
try {
  const records = studentStore(store.db.private);
  const directory = studentDirectory();
  const deps = {
    ...settingsDeps,
    students: records,
    directory: { get: directory.get, activeConsents: () => 0, consentsRecorded: () => 0 },
    pickups: { allowedAdultsOfAll: adultsOf },
    projections: { eachAspectByDay: async () => undefined },
    roster: rosterStore(store.db.roster),
  };
  const full = rosterFullPass(deps);
  const own = rosterStudentsPass(deps);
  let next = 0;
  const aFile = async (rows: number): Promise<string[]> => {
    const from = next;
    next += rows;
    const ids: string[] = [];
    await writeStudents(store.db.private, rows, (k) => {
      const r = recordOf(from + k);
      ids.push(r.studentId);
      return r;
    });
    return ids;
  };
  await timed(`${students} students written`, () => aFile(students));
  let { context } = await timed('the first full pass (the roster built)', () => full());
  const file = await aFile(fileRows);
  const byOwn = await timed(`a file of ${fileRows}: the students' pass`, () => own(file, context));
  if (byOwn === undefined) throw new Error('the file needed a full pass');
  context = byOwn.context;
  await aFile(fileRows);
  ({ context } = await timed(`another file of ${fileRows}: the full pass`, () => full()));
  const [edited] = await aFile(1);
  if (edited === undefined) throw new Error('one student');
  await timed("one student's change: the students' pass", () => own([edited], context));
  await aFile(1);
  await timed("another student's change: the full pass", () => full());
  await timed('the full pass again, nothing changed (the clock, every ten minutes)', () => full());
  // A new store over the same database, as at a restart or in another instance: the memos it reads
  // are the ones the passes above kept.
  const afterStart = rosterFullPass({ ...deps, roster: rosterStore(store.db.roster) });
  await timed("a restart's first full pass, nothing changed (the kept memos)", () => afterStart());
} finally {
  await store.close();
  await removeDir(dir);
}
