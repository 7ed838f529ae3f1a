/** The student store's bulk creation on the embedded store: writes of a bounded size, one after the other. */
import { expect } from 'chai';
import type { Database } from '../../src/store/pouch.js';
import { openStore, type Store } from '../../src/store/store.js';
import { STUDENTS_PER_WRITE, studentDocId, studentStore } from '../../src/store/students.js';
import { aStudentRecord } from '../support/fixtures.js';
import { makeTempDir, removeDir } from '../support/tempDir.js';

/** `db` with its bulk writes counted (their sizes), and the `failAt`-th (from 1) refused. */
const countingWrites = (db: Database, failAt?: number) => {
  const sizes: number[] = [];
  const counting = async (docs: Array<{ _id: string }>) => {
    sizes.push(docs.length);
    if (sizes.length === failAt) throw new Error('the store refused the write');
    return db.bulkDocs(docs);
  };
  const counted = new Proxy(db, {
    get: (target, name, receiver) => (name === 'bulkDocs' ? counting : Reflect.get(target, name, receiver)),
  });
  return { db: counted, sizes };
};

describe('student store: bulk creation', () => {
  let dir: string;
  let store: Store;

  beforeEach(async () => {
    dir = await makeTempDir('students');
    store = await openStore({ kind: 'embedded', dataDir: dir, prefix: 'chamada_' });
  });
  afterEach(async () => {
    await store.close();
    await removeDir(dir);
  });

  it(`writes ${STUDENTS_PER_WRITE} students a write, and answers every record in the order given`, async () => {
    const { db, sizes } = countingWrites(store.db.private);
    const records = Array.from({ length: 2 * STUDENTS_PER_WRITE + 7 }, (_, i) =>
      aStudentRecord({ displayName: `Criança ${i}` }),
    );
    const stored = await studentStore(db).createMany(records);
    expect(sizes).to.deep.equal([STUDENTS_PER_WRITE, STUDENTS_PER_WRITE, 7]);
    expect(stored.map((s) => (s === 'CONFLICT' ? s : s.studentId))).to.deep.equal(
      records.map((r) => r.studentId),
    );
    const all = await studentStore(store.db.private).listAll();
    expect(all.map((s) => s.studentId).sort()).to.deep.equal(records.map((r) => r.studentId).sort());
  });

  it('reports a taken id as CONFLICT in whichever write it falls, and stores the others', async () => {
    const taken = aStudentRecord({ displayName: 'Já existe' });
    await studentStore(store.db.private).create(taken);
    const records = Array.from({ length: STUDENTS_PER_WRITE + 5 }, (_, i) =>
      i === STUDENTS_PER_WRITE + 2 ? taken : aStudentRecord({ displayName: `Criança ${i}` }),
    );
    const stored = await studentStore(store.db.private).createMany(records);
    expect(stored.filter((s) => s === 'CONFLICT')).to.have.length(1);
    expect(stored[STUDENTS_PER_WRITE + 2]).to.equal('CONFLICT');
    expect(await studentStore(store.db.private).listAll()).to.have.length(STUDENTS_PER_WRITE + 5);
  });

  it('after a refused write fails the call and starts no further write; the earlier ones stay stored', async () => {
    const { db, sizes } = countingWrites(store.db.private, 2);
    const records = Array.from({ length: 3 * STUDENTS_PER_WRITE }, (_, i) =>
      aStudentRecord({ displayName: `Criança ${i}` }),
    );
    const failure = await studentStore(db)
      .createMany(records)
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(failure).to.be.instanceOf(Error);
    expect(sizes).to.deep.equal([STUDENTS_PER_WRITE, STUDENTS_PER_WRITE]);
    const first = records.slice(0, STUDENTS_PER_WRITE).map((r) => studentDocId(r.studentId));
    const found = await store.db.private.allDocs({ keys: first });
    expect(found.rows.every((row) => !('error' in row))).to.equal(true);
    expect(await studentStore(store.db.private).listAll()).to.have.length(STUDENTS_PER_WRITE);
  });
});
