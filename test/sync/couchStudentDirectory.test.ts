/**
 * The roll served by CouchDB's views (decision 0056) answers every page as the in-memory directory
 * does: the same students, order, cursors (sort keys) and ends, for each query, class filter, status
 * and page size, on the embedded PouchDB (which runs the same views) and over the CouchDB protocol.
 * Also: every write stores the folded name, and the start's pass gives it to records written before.
 */
import { createHash, randomUUID } from 'node:crypto';
import { expect } from 'chai';
import fc from 'fast-check';
import { pino } from 'pino';
import type { StudentDoc, StudentRecord, StudentStatus } from '../../src/domain/student.js';
import { disposers } from '../../src/lib/disposers.js';
import { foldName } from '../../src/rules/students.js';
import type { Database } from '../../src/store/pouch.js';
import { withQuorumWrites } from '../../src/store/quorumWrites.js';
import { StoreTimeoutError } from '../../src/store/storeErrors.js';
import { foldStoredNames } from '../../src/store/studentNameFold.js';
import { studentStore, toRecord } from '../../src/store/students.js';
import {
  activeMatching,
  ensureStudentViews,
  type MatchQuery,
  type NameAndBirth,
  STUDENT_DESIGNS,
  type StudentViews,
  sortKeyOfViewKey,
  studentViews,
  type TrigramViews,
  type ViewRow,
  viewKeyOf,
} from '../../src/store/studentViews.js';
import {
  type CouchDirectoryDeps,
  couchStudentDirectory,
  queryWords,
} from '../../src/sync/couchStudentDirectory.js';
import type { DirectoryPort } from '../../src/sync/directoryPort.js';
import { type StudentDirectory, studentDirectory } from '../../src/sync/studentDirectory.js';
import { queryTrigrams, type TrigramSearchDeps, trigramSearch } from '../../src/sync/trigramSearch.js';
import { wireCouchDirectory } from '../../src/wiring/couchDirectory.js';
import { aStudentRecord } from '../support/fixtures.js';
import { databasePerTest, storeBackends } from '../support/storeBackends.js';

const CLASS_A = '11111111-1111-4111-8111-111111111111';
const CLASS_B = '22222222-2222-4222-8222-222222222222';

const NAMES = [
  'João Pedro Silva',
  'joao pedro silva',
  'Ana',
  'Ana Clara',
  'Anaí Souza',
  'Zé',
  'Maria José',
  'Maria 0123',
  'Maria 1230',
  'Mária Luísa',
  'Luís Ângelo',
  'Ângela Lima',
  'Lia',
  'Bia Lima Silva',
  'Çarla Nunes',
  'Pedro',
  'Pedro Ana',
  'Silva',
  'Éva',
  'Zoë',
  'Ni',
  // Outside a-z and the space: the view key's longer codes, ordered by CouchDB's collation.
  "O'Neil-Souza",
  'Ana-Maria',
  'Øyvind Lia',
  '李 Ana',
  // A name holding a word twice (its suffix rows name the student twice), a word longer than a
  // suffix key holds.
  'Ana Santana',
  'Maximiliano Bartholomeuszinho',
];

/** Every page of `query` read through `port`, following its cursors. */
const allPages = async (
  port: Pick<DirectoryPort, 'page'>,
  query: { status: StudentStatus; q: string; classId?: string },
  limit: number,
) => {
  const pages: Array<{ ids: string[]; lastKey: string | undefined }> = [];
  let afterKey: string | undefined;
  for (let i = 0; i < 100; i += 1) {
    const page = await port.page({ ...query, afterKey, limit });
    // What an item shows is compared too: the views' rows carry it (the visitors' creation included).
    pages.push({
      ids: page.items.map(
        (e) =>
          `${e.studentId} ${e.sortKey} ${e.displayName} ${e.classId} ${e.updatedAt} ${e.photoRef} ${e.visitor} ${e.visitorSince}`,
      ),
      lastKey: page.lastKey,
    });
    if (page.lastKey === undefined) return pages;
    afterKey = page.lastKey;
  }
  throw new Error('the pages never ended');
};

describe("the views' text", () => {
  // CouchDB keys an index by its design document's functions: a change of their text rebuilds the
  // views of every deployed roll at the next start (minutes at 250,000 students, the search meanwhile
  // answering from a part of it). Changing them is a decision with an upgrade plan, not an edit.
  it('of the directory, the visitors and the matches stays what deployed rolls were indexed by', () => {
    const digest = (id: keyof typeof STUDENT_DESIGNS) =>
      createHash('sha256').update(JSON.stringify(STUDENT_DESIGNS[id])).digest('hex');
    expect(digest('_design/student-directory')).to.equal(
      'ffc82a5d7804a2dcf90969a0f6d97fa9d3495a2bfe42c0f65737c2cb9bc3a369',
    );
    expect(digest('_design/student-visitors')).to.equal(
      '11de989f2a7de062d95314d7b6f5fc95eac6e3cdf4f3a3f33c085845128fe544',
    );
    expect(digest('_design/student-matches')).to.equal(
      '8b5288554f07bc1b4b060654eea1c6d76d3678ff2549a49ec287470718adbddc',
    );
    expect(digest('_design/student-search')).to.equal(
      '845e301d293c7abfcb5fa478c34ea60b28e83a723515de7605bd18fffd8427b6',
    );
    expect(digest('_design/student-list')).to.equal(
      'de169f79814ef7f8d8474cd47165e8c44a930105b06be6625d45d5ebdcf48dc1',
    );
  });

  it("of the list's design document: the name view's, which deployed rolls were indexed by, and the words' with their counts", () => {
    const list = STUDENT_DESIGNS['_design/student-list'];
    expect(list['by-name']).to.deep.equal(STUDENT_DESIGNS['_design/student-directory']['by-name']);
    expect(list['by-word'].reduce).to.equal('_count');
  });
});

describe("the views' keys", () => {
  it('spell the sort key in characters that order as the sort keys do, and back', () => {
    const keys = [
      'a\u0000x',
      'ab\u0000x',
      'a b\u0000y',
      'é\u0000z',
      '\u{1F600}\u0000w',
      'zz\u0000a',
      "o'neil-2\u0000b",
      'øyvind ß\u0000c',
      '李\u0000d',
      '{|}~\u007f\u0000e',
    ];
    for (const k of keys) expect(sortKeyOfViewKey(viewKeyOf(k))).to.equal(k);
    const byKey = [...keys].sort();
    const byView = [...keys].sort((a, b) => (viewKeyOf(a) < viewKeyOf(b) ? -1 : 1));
    expect(byView).to.deep.equal(byKey);
  });

  // Every UTF-16 unit, lone surrogates included: a sort key is code units, not text.
  const anyUnits = fc.string({
    unit: fc.integer({ min: 0, max: 0xffff }).map((u) => String.fromCharCode(u)),
  });

  it('are made of 0-9 and a-z alone, order as the code units do, and spell back, for any string', () => {
    fc.assert(
      fc.property(anyUnits, anyUnits, (a, b) => {
        const ka = viewKeyOf(a);
        const kb = viewKeyOf(b);
        expect(ka).to.match(/^[0-9a-z]*$/);
        expect(sortKeyOfViewKey(ka)).to.equal(a);
        expect(Math.sign(ka < kb ? -1 : ka > kb ? 1 : 0)).to.equal(a < b ? -1 : a > b ? 1 : 0);
      }),
      { numRuns: 2_000 },
    );
  });

  it('a name of letters takes a character a letter', () => {
    expect(viewKeyOf('ana souza')).to.have.length(9);
  });

  it("a query's words are those of three letters or more, once each, cut to what a key holds", () => {
    expect(queryWords('')).to.deep.equal([]);
    expect(queryWords('zé an')).to.deep.equal([]);
    expect(queryWords('ana anab ana')).to.deep.equal(['ana', 'anab']);
    expect(queryWords('bartholomeuszinho bartholomeuszinhos')).to.deep.equal(['bartholomeuszinh']);
  });

  it("a query's trigrams are those of its words of three letters or more, once each", () => {
    expect(queryTrigrams('')).to.deep.equal([]);
    expect(queryTrigrams('zé an')).to.deep.equal([]);
    expect(queryTrigrams('ana anab')).to.deep.equal(['ana', 'nab']);
    expect(queryTrigrams('maria 0123')).to.deep.equal(['mar', 'ari', 'ria', '012', '123']);
  });
});

/** The views before `student-list`, holding nothing but for what a test gives them. */
type QueryOptions = PouchDB.Query.Options<object, object>;

/**
 * `db` with its view queries answered by `answer` (which may ask the real query, `asked`): how a test
 * sees, delays or cuts the queries a start or a page makes, on a real store.
 */
const withQueries = (
  db: Database,
  answer: (
    view: string,
    options: QueryOptions | undefined,
    asked: () => Promise<unknown>,
  ) => Promise<unknown>,
): Database =>
  new Proxy(db, {
    get(target, prop) {
      if (prop === 'query')
        return (view: string, options?: QueryOptions) =>
          answer(view, options, () => target.query(view, options));
      const value: unknown = Reflect.get(target, prop);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });

const viewsWith = (over: Partial<TrigramViews>): TrigramViews => ({
  byName: async () => ({ rows: [], next: undefined }),
  byTrigram: async () => ({ rows: [], next: undefined }),
  bySuffix: async () => ({ rows: [], complete: true }),
  trigramCount: async () => 0,
  trigramCounts: async () => new Map(),
  ...over,
});

/** `student-list` (built) and the views before it, holding nothing but for what a test gives them. */
const listViewsWith = (over: Partial<StudentViews>): StudentViews => ({
  byName: async () => ({ rows: [], next: undefined }),
  byWord: async () => ({ rows: [], complete: true }),
  wordCodes: async () => [],
  byWordCode: async () => ({ rows: [], next: undefined }),
  listIndexed: async () => undefined,
  listMarkedBuilt: async () => false,
  markListBuilt: async () => undefined,
  visitors: async () => [],
  refresh: async () => undefined,
  trigrams: viewsWith({}),
  ...over,
});

/** A student's row in the name or trigram view, its folded name given. */
const nameRowOf = (student: StudentRecord, folded: string): ViewRow => ({
  studentId: student.studentId,
  viewKey: viewKeyOf(`${folded}\u0000${student.studentId}`),
  classId: student.classId,
  entry: {
    displayName: student.displayName,
    photoRef: null,
    updatedAt: student.updatedAt,
    visitorSince: null,
  },
});

describe('a page while the views are behind', () => {
  it('waits for the index at most its bound, then answers from the index as it stands', async () => {
    const student = aStudentRecord({ displayName: 'Ana Souza' });
    const row = nameRowOf(student, 'ana souza');
    const asked: boolean[] = [];
    const never = new Promise<never>(() => undefined);
    const views = viewsWith({
      byTrigram: (_s, _g, _from, _n, fresh) => {
        asked.push(fresh);
        return fresh ? never : Promise.resolve({ rows: [row], next: undefined });
      },
      trigramCount: async () => {
        throw new Error('every trigram of the query is in the held counts');
      },
      trigramCounts: (_s, fresh) => {
        asked.push(fresh);
        return fresh
          ? never
          : Promise.resolve(
              new Map([
                ['sou', 1],
                ['ouz', 1],
                ['uza', 1],
              ]),
            );
      },
    });
    const couch = trigramSearch({ views, held: studentDirectory(), freshWaitMs: 20 });
    const page = await couch.page({ status: 'ACTIVE', q: 'souza', afterKey: undefined, limit: 10 });
    expect(page.items.map((e) => e.displayName)).to.deep.equal(['Ana Souza']);
    // The counts' read waited its bound, then the counts and the page's rows read the index as it stands.
    expect(asked).to.deep.equal([true, false, false]);
  });
});

describe('a page and the writes this instance has seen', () => {
  it('reads the index as it stands while no write was seen since it was known current, else waits for it', async () => {
    const asked: boolean[] = [];
    const views = listViewsWith({
      byName: async (_s, _from, _n, fresh) => {
        asked.push(fresh);
        return { rows: [], next: undefined };
      },
    });
    const couch = couchStudentDirectory({ views, held: studentDirectory() });
    const list = () => couch.page({ status: 'ACTIVE', q: '', afterKey: undefined, limit: 10 });
    await list();
    await list();
    const doc = {
      _id: 'student:x',
      _rev: '1-a',
      docType: 'student' as const,
      ...aStudentRecord(),
      photo_refs: [],
      phones: [],
    };
    couch.upsertStudent(doc);
    await list();
    await list();
    // The first page found the index current (the start's wait for `student-list`), so no page waits
    // until a write is seen; then one waits again.
    expect(asked).to.deep.equal([false, false, true, false]);
  });
});

describe('the trigram counts a search chooses by', () => {
  it('are read all at once and reused for their time; a trigram they lack is asked alone, each time', async () => {
    const asked: string[] = [];
    let clock = 0;
    const views = viewsWith({
      trigramCount: async (_s, g) => {
        asked.push(g);
        return g === 'abd' ? 2 : 0;
      },
      trigramCounts: async () => {
        asked.push('all');
        return new Map([
          ['abc', 5],
          ['bcd', 3],
        ]);
      },
    });
    const couch = trigramSearch({
      views,
      held: studentDirectory(),
      countsForMs: 1_000,
      now: () => clock,
    });
    const search = (q: string) => couch.page({ status: 'ACTIVE', q, afterKey: undefined, limit: 10 });
    await Promise.all([search('abc'), search('abcd'), search('bcd')]);
    await search('abc');
    expect(asked).to.deep.equal(['all']);
    clock = 1_000;
    await search('abc');
    expect(asked).to.deep.equal(['all', 'all']);
    // Written since the counts were read (another instance's student): asked, not taken for none.
    await search('abd');
    await search('zzz');
    await search('zzz');
    expect(asked).to.deep.equal(['all', 'all', 'abd', 'zzz', 'zzz']);
  });

  it('a search waits for the read of every count at most its bound, then asks its own trigrams alone; the read, once answered, serves the next ones', async () => {
    const student = aStudentRecord({ displayName: 'Ana Souza' });
    const row = nameRowOf(student, 'ana souza');
    const asked: string[] = [];
    let answerAll: (counts: ReadonlyMap<string, number>) => void = () => undefined;
    let failAll: (e: Error) => void = () => undefined;
    const views = viewsWith({
      trigramCount: async (_s, g) => {
        asked.push(g);
        return g === 'sou' ? 1 : 7;
      },
      // The grouped read beside an import: answered long after the search (decision 0072).
      trigramCounts: () => {
        asked.push('all');
        return new Promise((resolve, reject) => {
          answerAll = resolve;
          failAll = reject;
        });
      },
      byTrigram: async (_s, g) => ({ rows: g === 'sou' ? [row] : [], next: undefined }),
    });
    const couch = trigramSearch({ views, held: studentDirectory(), countsWaitMs: 20 });
    const search = async (q: string) =>
      (await couch.page({ status: 'ACTIVE', q, afterKey: undefined, limit: 10 })).items.map(
        (i) => i.studentId,
      );
    expect(await search('souza')).to.deep.equal([student.studentId]);
    expect(asked).to.deep.equal(['all', 'sou', 'ouz', 'uza']);
    answerAll(
      new Map([
        ['sou', 1],
        ['ouz', 3],
        ['uza', 3],
      ]),
    );
    await new Promise((r) => setImmediate(r));
    expect(await search('souza')).to.deep.equal([student.studentId]);
    expect(asked).to.deep.equal(['all', 'sou', 'ouz', 'uza']);
    // A read that fails is not kept, and the search that started it still answers.
    const failing = trigramSearch({ views, held: studentDirectory(), countsWaitMs: 1_000 });
    const answer = failing.page({ status: 'ACTIVE', q: 'souza', afterKey: undefined, limit: 10 });
    failAll(new Error('the store did not answer'));
    expect((await answer).items.map((i) => i.studentId)).to.deep.equal([student.studentId]);
    expect(asked.slice(4)).to.deep.equal(['all', 'sou', 'ouz', 'uza']);
  });
});

/** A row of `by-word` of a student of `folded` name. */
const wordRowOf = (studentId: string, folded: string, classId = CLASS_A) => ({
  studentId,
  folded,
  classId,
  entry: { displayName: folded, photoRef: null, updatedAt: '2026-01-01', visitorSince: null },
});

/** A name view of `names` (folded), ids `s0`, `s1`, … in list order, read as CouchDB reads it. */
const nameViewOf = (names: readonly string[], reads: number[]): StudentViews['byName'] => {
  const rows = names
    .map((folded, i) => ({
      studentId: `s${String(i).padStart(4, '0')}`,
      viewKey: viewKeyOf(`${folded}\u0000s${String(i).padStart(4, '0')}`),
      classId: CLASS_A,
      entry: { displayName: folded, photoRef: null, updatedAt: '2026-01-01', visitorSince: null },
    }))
    .sort((a, b) => (a.viewKey < b.viewKey ? -1 : 1));
  return async (_s, fromKey, limit) => {
    const batch = rows.filter((r) => r.viewKey >= fromKey).slice(0, limit);
    reads.push(batch.length);
    return { rows: batch, next: batch.length === limit ? batch[batch.length - 1]?.viewKey : undefined };
  };
};

describe("a search by its words' counts (decision 0073)", () => {
  it('reads a rare word whole, and no name view', async () => {
    const asked: string[] = [];
    const views = listViewsWith({
      wordCodes: async (_s, word) => {
        asked.push(`codes ${word}`);
        return [{ code: viewKeyOf(word), count: word === 'maria' ? 25_000 : 2 }];
      },
      byWord: async (_s, word, limit) => {
        asked.push(`word ${word} ${limit}`);
        // One child, whose name holds the word twice.
        const row = wordRowOf('s1', 'maria lima 043210 043210');
        return { rows: [row, row], complete: true };
      },
      byName: async () => {
        throw new Error('a rare word is read whole');
      },
    });
    const couch = couchStudentDirectory({ views, held: studentDirectory() });
    const page = await couch.page({ status: 'ACTIVE', q: 'maria 043210', afterKey: undefined, limit: 50 });
    expect(page.items.map((e) => e.studentId)).to.deep.equal(['s1']);
    expect(page.lastKey).to.equal(undefined);
    expect(asked).to.deep.equal(['codes maria', 'codes 043210', 'word 043210 2001']);
  });

  it("where every word is common, merges its codes' rows in list order: no name view, no range read whole", async () => {
    const rowsOf = (names: readonly string[]) =>
      names.map((folded) =>
        nameRowOf(aStudentRecord({ studentId: folded.replaceAll(' ', '-'), displayName: folded }), folded),
      );
    // `maria mariana 7` holds both codes, `maria maria 8` one code twice: each found once.
    const byCode = new Map([
      [
        viewKeyOf('maria'),
        rowsOf([
          'ana maria 1',
          'bia maria 2',
          'maria 3',
          'maria maria 8',
          'maria maria 8',
          'maria mariana 7',
          'zoe maria 9',
        ]),
      ],
      [viewKeyOf('mariana'), rowsOf(['ana mariana 5', 'maria mariana 7', 'mariana 6'])],
    ]);
    let read = 0;
    const views = listViewsWith({
      wordCodes: async () => [...byCode].map(([code, rows]) => ({ code, count: rows.length })),
      byWordCode: async (_s, code, fromKey, limit) => {
        const batch = (byCode.get(code) ?? []).filter((r) => r.viewKey >= fromKey).slice(0, limit);
        read += batch.length;
        return { rows: batch, next: batch.length === limit ? batch[batch.length - 1]?.viewKey : undefined };
      },
      byWord: async () => {
        throw new Error('the codes are merged');
      },
      byName: async () => {
        throw new Error('the codes are merged');
      },
    });
    for (const firstBatch of [undefined, 1, 2])
      for (const limit of [1, 3]) {
        const couch = couchStudentDirectory({ views, held: studentDirectory(), wholeUpTo: 2, firstBatch });
        const names: string[] = [];
        let afterKey: string | undefined;
        for (let i = 0; i < 20; i += 1) {
          const page = await couch.page({ status: 'ACTIVE', q: 'maria', afterKey, limit });
          expect(page.items.length).to.be.at.most(limit);
          names.push(...page.items.map((e) => e.displayName));
          afterKey = page.lastKey;
          if (afterKey === undefined) break;
        }
        expect(names, `first batch ${firstBatch}, pages of ${limit}`).to.deep.equal([
          'ana maria 1',
          'ana mariana 5',
          'bia maria 2',
          'maria 3',
          'maria maria 8',
          'maria mariana 7',
          'mariana 6',
          'zoe maria 9',
        ]);
      }
    expect(read).to.be.greaterThan(0);
  });

  it('where the common word has more codes than are merged, reads the name view for at most its rows, then its range whole', async () => {
    // Two common words, seldom together: the name view does not fill the page within 150 rows.
    const names = Array.from({ length: 1_000 }, (_, i) => (i % 4 === 0 ? `ana ${i}` : `lima ${i}`));
    names.push('ana lima 1', 'ana lima 2');
    const reads: number[] = [];
    const asked: string[] = [];
    const views = listViewsWith({
      wordCodes: async (_s, word) => [{ code: viewKeyOf(word), count: word === 'lima' ? 150 : 250 }],
      byWord: async (_s, word, limit) => {
        asked.push(`word ${word} ${limit}`);
        return {
          rows: [
            wordRowOf('s1001', 'ana lima 2'),
            wordRowOf('s1000', 'ana lima 1'),
            wordRowOf('x', 'lima 4'),
          ],
          complete: true,
        };
      },
      byName: nameViewOf(names, reads),
    });
    const couch = couchStudentDirectory({
      views,
      held: studentDirectory(),
      wholeUpTo: 100,
      mergeAtMost: 0,
      wholeAtMost: 5_000,
      firstBatch: 11,
    });
    const page = await couch.page({ status: 'ACTIVE', q: 'lima ana', afterKey: undefined, limit: 10 });
    expect(page.items.map((e) => e.displayName)).to.deep.equal(['ana lima 1', 'ana lima 2']);
    expect(reads.reduce((a, b) => a + b, 0)).to.equal(150);
    expect(asked).to.deep.equal(['word lima 5001']);
  });

  it("merges a common word's codes held while no student write was seen since they were read; a write seen, they are read again", async () => {
    let codesRead = 0;
    let clock = 0;
    const code = viewKeyOf('maria');
    const views = listViewsWith({
      wordCodes: async () => {
        codesRead += 1;
        return [{ code, count: 5_000 }];
      },
      byWordCode: async () => ({
        rows: [nameRowOf(aStudentRecord({ studentId: 's1' }), 'maria lima')],
        next: undefined,
      }),
    });
    const couch = couchStudentDirectory({
      views,
      held: studentDirectory(),
      countsForMs: 1_000,
      now: () => clock,
    });
    const search = async () =>
      (await couch.page({ status: 'ACTIVE', q: 'maria', afterKey: undefined, limit: 10 })).items.length;
    expect(await search()).to.equal(1);
    expect(await search()).to.equal(1);
    expect(codesRead).to.equal(1);
    // Another instance's student, told by the private feed: a code of it could be new.
    couch.upsertStudent({
      _id: 'student:x',
      _rev: '1-a',
      docType: 'student' as const,
      ...aStudentRecord({ displayName: 'Mariazinha' }),
      photo_refs: [],
      phones: [],
    });
    expect(await search()).to.equal(1);
    expect(await search()).to.equal(1);
    expect(codesRead).to.equal(2);
    clock = 1_000;
    expect(await search()).to.equal(1);
    expect(codesRead).to.equal(3);
  });

  it("reuses a word's count for its time; a count of none is asked again each time", async () => {
    const asked: string[] = [];
    let clock = 0;
    const views = listViewsWith({
      wordCodes: async (_s, word) => {
        asked.push(word);
        return word === 'zzz' ? [] : [{ code: viewKeyOf(word), count: 3 }];
      },
    });
    const couch = couchStudentDirectory({
      views,
      held: studentDirectory(),
      countsForMs: 1_000,
      now: () => clock,
    });
    const search = (q: string) => couch.page({ status: 'ACTIVE', q, afterKey: undefined, limit: 10 });
    await search('abc');
    await search('abc bcd');
    await search('zzz');
    await search('zzz');
    expect(asked).to.deep.equal(['abc', 'bcd', 'zzz', 'zzz']);
    clock = 1_000;
    await search('abc');
    expect(asked.slice(4)).to.deep.equal(['abc']);
  });
});

describe('a page while student-list is being built (the first start of the version that adds it)', () => {
  it('where an instance found it built once (the mark), reads it even while its index answers late, never the views before it', async () => {
    const never = new Promise<never>(() => undefined);
    const answered: string[] = [];
    const views = listViewsWith({
      listMarkedBuilt: async () => true,
      // Behind an import: a query that waits does not answer in time.
      listIndexed: () => never,
      wordCodes: async () => [{ code: viewKeyOf('souza'), count: 1 }],
      byWord: async (_s, _w, _n, fresh) => {
        answered.push(fresh ? 'student-list, waiting' : 'student-list, as it stands');
        return fresh ? never : { rows: [wordRowOf('s1', 'ana souza')], complete: true };
      },
      trigrams: viewsWith({
        byTrigram: async () => {
          throw new Error('student-list was built');
        },
      }),
    });
    const couch = couchStudentDirectory({ views, held: studentDirectory(), freshWaitMs: 20 });
    const page = await couch.page({ status: 'ACTIVE', q: 'souza', afterKey: undefined, limit: 10 });
    expect(page.items.map((e) => e.studentId)).to.deep.equal(['s1']);
    expect(couch.readsTrigrams()).to.equal(false);
  });

  it('the instance that finds it built marks it, for the next starts and the other instances', async () => {
    let marked = 0;
    const views = listViewsWith({
      markListBuilt: async () => {
        marked += 1;
      },
    });
    const couch = couchStudentDirectory({ views, held: studentDirectory() });
    await couch.page({ status: 'ACTIVE', q: '', afterKey: undefined, limit: 10 });
    await couch.page({ status: 'ACTIVE', q: 'ana', afterKey: undefined, limit: 10 });
    expect(marked).to.equal(1);
  });

  it('the first waits for it at most its bound, then the views before it answer at once; it is asked again after a while', async () => {
    let clock = 0;
    let built = false;
    let asked = 0;
    let silenceLimit: (e: Error) => void = () => undefined;
    const answered: string[] = [];
    const views = listViewsWith({
      // Being built: the wait for it outlasts the page's bound, until the store's silence limit ends it.
      listIndexed: () => {
        asked += 1;
        return built
          ? Promise.resolve()
          : new Promise<void>((_resolve, reject) => {
              silenceLimit = reject;
            });
      },
      wordCodes: async () => [{ code: viewKeyOf('souza'), count: 1 }],
      byWord: async () => {
        answered.push('student-list');
        return { rows: [wordRowOf('s1', 'ana souza')], complete: true };
      },
      trigrams: viewsWith({
        trigramCounts: async () => new Map([['sou', 1]]),
        trigramCount: async () => 1,
        byTrigram: async () => {
          answered.push('trigrams');
          return { rows: [nameRowOf(aStudentRecord({ studentId: 's1' }), 'ana souza')], next: undefined };
        },
      }),
    });
    const couch = couchStudentDirectory({
      views,
      held: studentDirectory(),
      freshWaitMs: 20,
      now: () => clock,
    });
    const search = async () =>
      (await couch.page({ status: 'ACTIVE', q: 'souza', afterKey: undefined, limit: 10 })).items.length;
    expect(await search()).to.equal(1);
    expect(couch.readsTrigrams()).to.equal(true);
    expect(await search()).to.equal(1);
    expect(answered).to.deep.equal(['trigrams', 'trigrams']);
    expect(asked).to.equal(1);
    silenceLimit(new StoreTimeoutError(5_000));
    await new Promise((r) => setImmediate(r));
    await search();
    expect(asked).to.equal(1);
    built = true;
    clock = 30_000;
    // Asked again behind the page that found the while over (no page waits for it once found behind):
    // built now, and read from the next page on.
    await search();
    await search();
    await search();
    expect(asked).to.equal(2);
    expect(answered.slice(3)).to.deep.equal(['trigrams', 'student-list', 'student-list']);
    expect(couch.readsTrigrams()).to.equal(false);
  });
});

/** The held counts of the door's query `maria 043210` on a large roll: the digits' trigrams rarest. */
const doorCounts = () =>
  new Map([
    ...['mar', 'ari', 'ria'].map((g) => [g, 5_000] as const),
    ...['043', '432', '321', '210'].map((g) => [g, 900] as const),
  ]);

describe("a search by its word's suffixes", () => {
  it('reads the rarest word whole where few students hold it; a word too common for it is left to the trigrams while the counts are held', async () => {
    const asked: string[] = [];
    let clock = 0;
    const entry = {
      displayName: 'Maria Lima 043210',
      photoRef: null,
      updatedAt: '2026-01-01',
      visitorSince: null,
    };
    const views = viewsWith({
      byTrigram: async (_s, g) => {
        asked.push(`trigram ${g}`);
        return { rows: [], next: undefined };
      },
      bySuffix: async (_s, word, limit) => {
        asked.push(`suffix ${word} ${limit}`);
        // `maria` is everyone's (more rows than a read takes); `043210` one child's, twice in its name.
        if (word === 'maria') return { rows: [], complete: false };
        const row = { studentId: 's1', folded: 'maria lima 043210', classId: CLASS_A, entry };
        return { rows: [row, row], complete: true };
      },
      trigramCount: async () => 0,
      trigramCounts: async () => doorCounts(),
    });
    const couch = trigramSearch({
      views,
      held: studentDirectory(),
      countsForMs: 1_000,
      suffixCap: 100,
      now: () => clock,
    });
    const search = (q: string) => couch.page({ status: 'ACTIVE', q, afterKey: undefined, limit: 50 });
    const one = await search('maria 043210');
    expect(one.items.map((e) => e.studentId)).to.deep.equal(['s1']);
    expect(one.lastKey).to.equal(undefined);
    await search('maria');
    await search('maria');
    expect(asked).to.deep.equal(['suffix 043210 101', 'suffix maria 101', 'trigram mar', 'trigram mar']);
    clock = 1_000;
    await search('maria');
    expect(asked.slice(4)).to.deep.equal(['suffix maria 101', 'trigram mar']);
  });
});

describe('a search while the suffix index is being built (the first start of a version that adds it)', () => {
  it("reads the trigram's rows rather than the suffix index as it stands, and waits for that index again only after a while", async () => {
    const asked: string[] = [];
    let clock = 0;
    let built = false;
    const never = new Promise<never>(() => undefined);
    const entry = {
      displayName: 'Maria Lima 043210',
      photoRef: null,
      updatedAt: '2026-01-01',
      visitorSince: null,
    };
    const viewKey = viewKeyOf('maria lima 043210\u0000s1');
    const views = viewsWith({
      trigramCounts: async () => doorCounts(),
      byTrigram: async (_s, g) => {
        asked.push(`trigram ${g}`);
        return { rows: [{ studentId: 's1', viewKey, classId: CLASS_A, entry }], next: undefined };
      },
      // Being built: a query that waits does not answer in time, and the index as it stands is empty.
      bySuffix: (_s, word, _n, fresh) => {
        asked.push(`suffix ${word} ${fresh ? 'fresh' : 'as it stands'}`);
        if (!built) return fresh ? never : Promise.resolve({ rows: [], complete: true });
        const row = { studentId: 's1', folded: 'maria lima 043210', classId: CLASS_A, entry };
        return Promise.resolve({ rows: [row], complete: true });
      },
    });
    const couch = trigramSearch({
      views,
      held: studentDirectory(),
      freshWaitMs: 20,
      now: () => clock,
    });
    const search = async () =>
      (await couch.page({ status: 'ACTIVE', q: 'maria 043210', afterKey: undefined, limit: 50 })).items.map(
        (e) => e.studentId,
      );
    expect(await search()).to.deep.equal(['s1']);
    expect(await search()).to.deep.equal(['s1']);
    expect(asked).to.deep.equal(['suffix 043210 fresh', 'trigram 043', 'trigram 043']);
    built = true;
    clock = 30_000;
    expect(await search()).to.deep.equal(['s1']);
    expect(await search()).to.deep.equal(['s1']);
    expect(asked.slice(3)).to.deep.equal(['suffix 043210 fresh', 'suffix 043210 as it stands']);
  });
});

for (const [label, host] of storeBackends('couchdirectory'))
  describe(`the roll served by the views on ${label}`, function () {
    this.timeout(120_000);
    const per = databasePerTest(host, 'couchdirectory');

    const seed = async (
      portOf: (views: StudentViews) => Pick<DirectoryPort, 'page'>,
    ): Promise<{ memory: StudentDirectory; couch: Pick<DirectoryPort, 'page'> }> => {
      const db = withQuorumWrites(per.db());
      await ensureStudentViews(db);
      const students = studentStore(db);
      const memory = studentDirectory({ indexedShare: 1 / 8 });
      let n = 0;
      for (const displayName of NAMES)
        for (const classId of [CLASS_A, CLASS_B]) {
          n += 1;
          const created = await students.create(
            aStudentRecord({
              displayName,
              classId,
              status: n % 7 === 0 ? 'DELETED' : 'ACTIVE',
              visitor: n % 5 === 0,
            }),
          );
          memory.upsertStudent(created);
        }
      return { memory, couch: portOf(studentViews(db)) };
    };
    const served =
      (tuning: Omit<CouchDirectoryDeps, 'views' | 'held'>) =>
      (views: StudentViews): Pick<DirectoryPort, 'page'> =>
        couchStudentDirectory({ views, held: studentDirectory(), ...tuning });
    const trigrams =
      (tuning: Omit<TrigramSearchDeps, 'views' | 'held'>) =>
      (views: StudentViews): Pick<DirectoryPort, 'page'> =>
        trigramSearch({ views: views.trigrams, held: studentDirectory(), ...tuning });

    // The roll is small: as served, every word is read whole, so the other paths are asked for by
    // name: the word's codes merged, and, for a word of more codes than are merged, the name view
    // first (for at most the word's rows) then the word's range, and that range cut short (the name
    // view read on to the page's end). The views before `student-list` answer
    // the same, tuned as they were served, and through the port while `student-list` is being built.
    const tunings: ReadonlyArray<readonly [string, (views: StudentViews) => Pick<DirectoryPort, 'page'>]> = [
      ['as served', served({})],
      ['a first batch of 2', served({ firstBatch: 2 })],
      ["no word read whole: its codes' rows merged", served({ wholeUpTo: 0 })],
      ["no word read whole: its codes' rows merged, batches of 1", served({ wholeUpTo: 0, firstBatch: 1 })],
      [
        'no word read whole nor merged: the name view, then the range',
        served({ wholeUpTo: 0, mergeAtMost: 0 }),
      ],
      [
        'no word read whole nor merged, a range read whole of 2 rows at most',
        served({ wholeUpTo: 0, mergeAtMost: 0, wholeAtMost: 2, firstBatch: 2 }),
      ],
      ['the views before it, as served', trigrams({})],
      ['the views before it, a first batch of 2', trigrams({ firstBatch: 2 })],
      ["the views before it, every search by its word's suffixes", trigrams({ suffixAbove: 0 })],
      ['the views before it, suffix reads of 2 rows at most', trigrams({ suffixAbove: 0, suffixCap: 2 })],
      [
        'the port while student-list is being built',
        (views) =>
          couchStudentDirectory({
            views: { ...views, listIndexed: () => Promise.reject(new StoreTimeoutError(5_000)) },
            held: studentDirectory(),
          }),
      ],
    ];
    for (const [tuned, portOf] of tunings)
      it(`answers every query, class, status and page size as the in-memory directory does (${tuned})`, async () => {
        const { memory, couch } = await seed(portOf);
        const inMemory: Pick<DirectoryPort, 'page'> = { page: async (q) => memory.page(q) };
        const queries = [
          '',
          'a',
          'an',
          'ana',
          'joao',
          'silva joao',
          'lima',
          'ia',
          'mar',
          'maria 0',
          '0123',
          'xyz',
          'a z',
          'luis',
          'ana lia',
          'maria 0123',
          'santana',
          'neil-s',
          'øyv',
          'bartholomeuszinh',
          'bartholomeuszinho',
          'tholomeuszinho',
          'zinho ana',
        ];
        let compared = 0;
        for (const q of queries)
          for (const status of ['ACTIVE', 'DELETED'] as const)
            for (const classId of [undefined, CLASS_B])
              for (const limit of [1, 3, 50]) {
                const query = { status, q, ...(classId === undefined ? {} : { classId }) };
                const expected = await allPages(inMemory, query, limit);
                const got = await allPages(couch, query, limit);
                expect(got, `${JSON.stringify(query)} limit ${limit}`).to.deep.equal(expected);
                compared += expected.reduce((sum, p) => sum + p.ids.length, 0);
              }
        // The table found students, not only empty pages.
        expect(compared).to.be.greaterThan(500);
      });

    it('marks student-list built in the database once found so, and an instance started after reads it though its index answers late', async () => {
      const db = withQuorumWrites(per.db());
      await ensureStudentViews(db);
      await studentStore(db).create(aStudentRecord({ displayName: 'Ana Souza' }));
      const views = studentViews(db);
      expect(await views.listMarkedBuilt()).to.equal(false);
      const first = couchStudentDirectory({ views, held: studentDirectory() });
      await first.page({ status: 'ACTIVE', q: 'souza', afterKey: undefined, limit: 10 });
      expect(await views.listMarkedBuilt()).to.equal(true);
      const later = couchStudentDirectory({
        views: { ...views, listIndexed: () => new Promise<never>(() => undefined) },
        held: studentDirectory(),
        freshWaitMs: 20,
      });
      const page = await later.page({ status: 'ACTIVE', q: 'souza', afterKey: undefined, limit: 10 });
      expect(page.items.map((e) => e.displayName)).to.deep.equal(['Ana Souza']);
      expect(later.readsTrigrams()).to.equal(false);
    });

    it('a rename moves the student in the list and the search; a deletion moves it to DELETED', async () => {
      const db = withQuorumWrites(per.db());
      await ensureStudentViews(db);
      const students = studentStore(db);
      const couch = couchStudentDirectory({ views: studentViews(db), held: studentDirectory() });
      const a = await students.create(aStudentRecord({ displayName: 'Beto' }));
      await students.create(aStudentRecord({ displayName: 'Carla' }));
      const names = async (q: string, status: StudentStatus = 'ACTIVE') =>
        (await couch.page({ status, q, afterKey: undefined, limit: 10 })).items.map((e) => e.displayName);
      expect(await names('')).to.deep.equal(['Beto', 'Carla']);
      // As the services do after each write: the port then asks the index to catch up.
      const renamed = await students.update(a, { ...a, displayName: 'Élio' });
      if (renamed === 'CONFLICT') throw new Error('conflict');
      couch.upsertStudent(renamed);
      expect(renamed.nameFolded).to.equal('elio');
      expect(await names('')).to.deep.equal(['Carla', 'Élio']);
      expect(await names('beto')).to.deep.equal([]);
      expect(await names('eli')).to.deep.equal(['Élio']);
      const changed = await students.applyField(
        a.studentId,
        'displayName',
        'Ábio',
        '2026-01-01T00:00:00.000Z',
      );
      if (changed === undefined || changed === 'UNCHANGED') throw new Error('not changed');
      couch.upsertStudent(changed);
      expect(changed.nameFolded).to.equal('abio');
      const current = await students.get(a.studentId);
      if (current === undefined) throw new Error('gone');
      const deleted = await students.update(current, { ...current, status: 'DELETED' });
      if (deleted === 'CONFLICT') throw new Error('conflict');
      couch.upsertStudent(deleted);
      expect(await names('')).to.deep.equal(['Carla']);
      expect(await names('abi', 'DELETED')).to.deep.equal(['Ábio']);
    });

    it("the start's pass folds the names of records written before, once, and leaves those that carry it", async () => {
      const db = withQuorumWrites(per.db());
      await ensureStudentViews(db);
      const students = studentStore(db);
      // A start's port: made after the pass, as the wiring makes it.
      const portAfter = () => couchStudentDirectory({ views: studentViews(db), held: studentDirectory() });
      let couch = portAfter();
      // Records as an older version wrote them: no folded name.
      const old = ['Ícaro', 'Úrsula', 'Ivo'].map((displayName) => {
        const { studentId, ...rest } = aStudentRecord({ displayName });
        return { _id: `student:${studentId}`, docType: 'student', studentId, ...rest };
      });
      await db.bulkDocs(old);
      const fresh = await students.create(aStudentRecord({ displayName: 'Olga' }));
      const listed = async () =>
        (await couch.page({ status: 'ACTIVE', q: '', afterKey: undefined, limit: 10 })).items.map(
          (e) => e.displayName,
        );
      expect(await listed()).to.deep.equal(['Olga']);
      const first = await foldStoredNames(db, () => '2026-01-01T00:00:00.000Z');
      expect(first).to.deep.equal({ alreadyDone: false, written: 3 });
      couch = portAfter();
      expect(await listed()).to.deep.equal(['Ícaro', 'Ivo', 'Olga', 'Úrsula']);
      expect((await students.get(fresh.studentId))?._rev).to.equal(fresh._rev);
      expect(await foldStoredNames(db, () => '2026-01-02T00:00:00.000Z')).to.deep.equal({
        alreadyDone: true,
        written: 0,
      });
      expect(
        (await couch.page({ status: 'ACTIVE', q: 'icar', afterKey: undefined, limit: 10 })).items,
      ).to.have.length(1);
    });

    it('a start on a database without students queries no view; with one, it reads the visitors and sets the indexing going', async function () {
      this.timeout(30_000);
      const db = withQuorumWrites(per.db());
      // Every view query the start makes (a query is what makes CouchDB build a view's index).
      const queried: string[] = [];
      const watched = withQueries(db, (view, _options, asked) => {
        queried.push(view);
        return asked();
      });
      const start = async () => {
        const opened = disposers();
        const wired = await wireCouchDirectory(
          watched,
          studentDirectory(),
          [],
          () => new Date(),
          pino({ level: 'silent' }),
          opened,
        );
        // Past the refresher's pause (1.5 s), when a refresh would have begun.
        await new Promise((resolve) => setTimeout(resolve, 2_000));
        await opened.disposeAll();
        return wired;
      };
      await db.put({ _id: 'class:x', docType: 'class' });
      await start();
      expect(queried).to.deep.equal([]);
      const visitor = await studentStore(db).create(aStudentRecord({ displayName: 'Vera', visitor: true }));
      const wired = await start();
      // The index never built: the start held none of them, and read it behind the start.
      expect(wired.visitors).to.deep.equal([]);
      expect((await wired.port.visitors()).map((v) => v.studentId)).to.deep.equal([visitor.studentId]);
      expect(queried).to.include.members(['student-visitors/all', 'student-list/by-name']);
    });

    it("starts at once while the visitors' index is behind (another instance's import); the visitors' report waits for the ones it does not hold yet", async function () {
      this.timeout(30_000);
      const db = withQuorumWrites(per.db());
      await ensureStudentViews(db);
      const students = studentStore(db);
      const indexed = await students.create(aStudentRecord({ displayName: 'Vera', visitor: true }));
      expect((await studentViews(db).visitors()).map((v) => v.studentId)).to.deep.equal([indexed.studentId]);
      // Written since: the index holds it only once asked to catch up, which is what goes silent.
      const late = await students.create(aStudentRecord({ displayName: 'Vitor', visitor: true }));
      let silent = 2;
      const caughtUpAsked: Array<'cut' | 'answered'> = [];
      const behind = withQueries(db, (view, options, asked) => {
        if (view === 'student-visitors/all' && options?.stale === undefined) {
          caughtUpAsked.push(silent > 0 ? 'cut' : 'answered');
          if (silent > 0) {
            silent -= 1;
            return Promise.reject(new StoreTimeoutError(5_000, 'GET /db/_design/student-visitors/_view/all'));
          }
        }
        return asked();
      });
      const opened = disposers();
      try {
        const held = studentDirectory();
        const t0 = Date.now();
        const wired = await wireCouchDirectory(
          behind,
          held,
          [],
          () => new Date(),
          pino({ level: 'silent' }),
          opened,
        );
        // Started on what the index held, before any read that waits for it answered.
        expect(caughtUpAsked).to.deep.equal(['cut']);
        expect(held.visitors().map((v) => v.studentId)).to.deep.equal([indexed.studentId]);
        const report = await wired.port.visitors();
        expect(report.map((v) => v.displayName).sort()).to.deep.equal(['Vera', 'Vitor']);
        expect(held.get(late.studentId)?.displayName).to.equal('Vitor');
        expect(caughtUpAsked).to.deep.equal(['cut', 'cut', 'answered']);
        // Read again after a second, then two.
        expect(Date.now() - t0).to.be.at.least(2_900);
      } finally {
        await opened.disposeAll();
      }
    });

    it('stops reading the visitors again when the service stops', async function () {
      this.timeout(30_000);
      const db = withQuorumWrites(per.db());
      await ensureStudentViews(db);
      await studentStore(db).create(aStudentRecord({ displayName: 'Vera', visitor: true }));
      let countedAsks = 0;
      const silentForEver = withQueries(db, (view, options, asked) => {
        if (view !== 'student-visitors/all' || options?.stale !== undefined) return asked();
        countedAsks += 1;
        return Promise.reject(new StoreTimeoutError(5_000));
      });
      const opened = disposers();
      const wired = await wireCouchDirectory(
        silentForEver,
        studentDirectory(),
        [],
        () => new Date(),
        pino({ level: 'silent' }),
        opened,
      );
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      await opened.disposeAll();
      // Settles at the stop, in the pause before the third read: the loop asks no more.
      await wired.visitorsHeld;
      expect(countedAsks).to.equal(2);
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      expect(countedAsks).to.equal(2);
    });

    it("keeps CouchDB's background indexer off its views; a database set up before takes that without a rebuild", async () => {
      const db = withQuorumWrites(per.db());
      // As the version before installed them: the same views, without the field.
      for (const [id, views] of Object.entries(STUDENT_DESIGNS))
        await db.put({ _id: id, language: 'javascript', views });
      const students = studentStore(db);
      for (const displayName of ['Ana Lima', 'Bia Costa', 'Caio Reis'])
        await students.create(aStudentRecord({ displayName, classId: CLASS_A }));
      const rows = async (stale: boolean) =>
        (await db.query('student-directory/by-name', stale ? { stale: 'ok' } : {})).rows.length;
      expect(await rows(false)).to.equal(3);

      await ensureStudentViews(db);
      for (const id of Object.keys(STUDENT_DESIGNS)) {
        const stored: unknown = await db.get(id);
        expect(stored, id).to.have.property('autoupdate', false);
      }
      // The index built before still answers, without being asked to catch up: not rebuilt.
      expect(await rows(true)).to.equal(3);
      // Installed already: a later start writes nothing.
      const revs = await Promise.all(Object.keys(STUDENT_DESIGNS).map(async (id) => (await db.get(id))._rev));
      await ensureStudentViews(db);
      expect(
        await Promise.all(Object.keys(STUDENT_DESIGNS).map(async (id) => (await db.get(id))._rev)),
      ).to.deep.equal(revs);
    });

    it('holds only visitors: other students are read from the store by whoever needs them', async () => {
      const db = withQuorumWrites(per.db());
      await ensureStudentViews(db);
      const students = studentStore(db);
      const held = studentDirectory();
      const couch = couchStudentDirectory({ views: studentViews(db), held });
      const regular = await students.create(aStudentRecord({ displayName: 'Rui' }));
      const visitor = await students.create(aStudentRecord({ displayName: 'Vera', visitor: true }));
      couch.upsertStudent(regular);
      couch.upsertStudent(visitor);
      expect(couch.get(regular.studentId)).to.equal(undefined);
      expect(couch.get(visitor.studentId)?.displayName).to.equal('Vera');
      expect((await couch.visitors()).map((v) => v.studentId)).to.deep.equal([visitor.studentId]);
      expect((await studentViews(db).visitors()).map((v) => v.studentId)).to.deep.equal([visitor.studentId]);
    });
  });

for (const [label, host] of storeBackends('couchmatches'))
  describe(`the import's matches among the active students on ${label}`, function () {
    this.timeout(120_000);
    const per = databasePerTest(host, 'couchmatches');

    it('names the active students of each name and birth date asked, folded, or of an id asked, by key or reading the index whole alike, and follows renames and deletions', async () => {
      const db = withQuorumWrites(per.db());
      await ensureStudentViews(db);
      const students = studentStore(db);
      const births = [null, '2019-03-05', '2020-01-01'];
      const stored: StudentDoc[] = [];
      let n = 0;
      for (const displayName of NAMES)
        for (const birthDate of births) {
          n += 1;
          stored.push(
            await students.create(
              aStudentRecord({ displayName, birthDate, status: n % 7 === 0 ? 'DELETED' : 'ACTIVE' }),
            ),
          );
        }
      const matching = activeMatching(db);
      const active = stored.filter((s) => s.status === 'ACTIVE');
      // The ids asked that name no active student may come back (the caller reads the records): only
      // those of active students are compared.
      const activeIds = new Set(active.map((s) => s.studentId));
      const expected = (q: MatchQuery) =>
        active
          .filter(
            (s) =>
              q.ids.includes(s.studentId) ||
              q.keys.some(
                ([name, birth]) => foldName(s.displayName) === name && (s.birthDate ?? '') === birth,
              ),
          )
          .map((s) => s.studentId)
          .sort();
      const deleted = stored.find((s) => s.status === 'DELETED');
      if (deleted === undefined) throw new Error('no deleted student');
      const someIds = [active[3]?.studentId ?? '', deleted.studentId, randomUUID()];
      const everyKey = NAMES.flatMap((name) => births.map((b): NameAndBirth => [foldName(name), b ?? '']));
      // A query of one key costs less than the index read whole (keyed); one of every key, more.
      const queries: ReadonlyArray<MatchQuery> = [
        { keys: [['joao pedro silva', '2019-03-05']], ids: [] },
        { keys: [['joao pedro silva', '']], ids: [] },
        { keys: [['ana', '2019-03-06']], ids: [] },
        { keys: [], ids: someIds },
        { keys: everyKey, ids: [] },
        { keys: everyKey.slice(0, 10), ids: someIds },
        { keys: [['nobody', '']], ids: [...someIds, ...stored.map((s) => s.studentId)] },
      ];
      // Read whole in pages of 7 and of 1 too: names folded alike (with the same birth date) straddle
      // pages, or fill them.
      for (const read of [matching, activeMatching(db, { pageSize: 7 }), activeMatching(db, { pageSize: 1 })])
        for (const q of queries) {
          const got = (await read(q)).filter((id) => activeIds.has(id)).sort();
          expect(got, JSON.stringify(q).slice(0, 200)).to.deep.equal(expected(q));
        }
      // The tables find students: the index is not empty by mistake.
      expect(expected({ keys: everyKey, ids: [] }).length).to.be.greaterThan(50);
      const [first, second] = active;
      if (first === undefined || second === undefined) throw new Error('no active students');
      expect(await students.update(first, { ...toRecord(first), displayName: 'Renamed Child' })).to.not.equal(
        'CONFLICT',
      );
      expect(await students.update(second, { ...toRecord(second), status: 'DELETED' })).to.not.equal(
        'CONFLICT',
      );
      const key = (s: StudentDoc): NameAndBirth => [foldName(s.displayName), s.birthDate ?? ''];
      for (const keys of [[key(first), key(second)], everyKey]) {
        const got = await matching({ keys: [...keys, ['renamed child', first.birthDate ?? '']], ids: [] });
        expect(got).to.include(first.studentId);
        expect(got).to.not.include(second.studentId);
      }
      expect(await matching({ keys: [key(first)], ids: [] })).to.not.include(first.studentId);
    });

    it('sends the query that waits for the index again when the silence limit cut it, a bounded number of times', async () => {
      const db = per.db();
      await ensureStudentViews(db);
      const child = await studentStore(db).create(
        aStudentRecord({ displayName: 'Lia', birthDate: '2020-01-01' }),
      );
      let cut = 0;
      const slow = (times: number) =>
        withQueries(db, async (_view, _options, asked) => {
          if (cut < times) {
            cut += 1;
            throw new StoreTimeoutError(5_000);
          }
          return asked();
        });
      const q: MatchQuery = { keys: [['lia', '2020-01-01']], ids: [] };
      expect(await activeMatching(slow(3))(q)).to.deep.equal([child.studentId]);
      expect(cut).to.equal(3);
      cut = 0;
      const failed = await activeMatching(slow(100))(q).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(failed).to.be.instanceOf(StoreTimeoutError);
      expect(cut).to.equal(6);
    });
  });
