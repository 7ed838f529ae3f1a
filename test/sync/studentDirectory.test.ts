import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import fc from 'fast-check';
import { Subject } from 'rxjs';
import type { ConsentDoc } from '../../src/domain/consent.js';
import type { StudentDoc } from '../../src/domain/student.js';
import { foldName, queryMatcher, sortKeyOf } from '../../src/rules/students.js';
import type { Change } from '../../src/sync/changeFeed.js';
import { directoryMatching, studentDirectory } from '../../src/sync/studentDirectory.js';
import { aStudentRecord } from '../support/fixtures.js';

let tick = 0;
const student = (displayName: string, over: Partial<StudentDoc> = {}): StudentDoc => {
  const studentId = over.studentId ?? randomUUID();
  tick += 1;
  return {
    _id: `student:${studentId}`,
    _rev: '1-a',
    docType: 'student',
    ...aStudentRecord({
      studentId,
      displayName,
      photoRef: 'p.jpg',
      updatedAt: new Date(Date.UTC(2026, 0, 1) + tick).toISOString(),
    }),
    // The stored document's arrays are mutable; the record's are read-only.
    photo_refs: [],
    phones: [],
    ...over,
  };
};

const consent = (subjectId: string, revoked: boolean, consentId = randomUUID()): ConsentDoc => ({
  _id: `imageConsent:${consentId}`,
  _rev: '1-a',
  docType: 'imageConsent',
  consentId,
  subject_type: 'STUDENT',
  subject_id: subjectId,
  term_version: '1',
  purpose: 'p',
  term_text: 't',
  granted_by_name: 'g',
  granted_by_user_id: null,
  relationship: 'mãe',
  verification_method: 'ADULT_SELF',
  verified_by_user_id: 'u',
  granted_at: '2026-01-01T00:00:00.000Z',
  revoked_at: revoked ? '2026-01-02T00:00:00.000Z' : null,
  revoked_by_user_id: null,
  revocation_reason: null,
});

const allPages = (d: ReturnType<typeof studentDirectory>, limit: number, q = '') => {
  const seen: string[] = [];
  let after: string | undefined;
  for (let i = 0; i < 10_000; i += 1) {
    const page = d.page({ status: 'ACTIVE', q, afterKey: after, limit });
    seen.push(...page.items.map((e) => e.displayName));
    if (page.lastKey === undefined) return seen;
    after = page.lastKey;
  }
  throw new Error('paging did not end');
};

describe('student directory (in-memory projection)', () => {
  it('orders by folded name and pages without gaps', () => {
    const d = studentDirectory();
    d.load(
      ['Érica', 'ana', 'Bia', 'Ana'].map((n) => student(n)),
      [],
    );
    expect(allPages(d, 1).map((n) => n.toLowerCase())).to.deep.equal(['ana', 'ana', 'bia', 'érica']);
  });

  it('moves a student between the ACTIVE and DELETED lists when deleted', () => {
    const d = studentDirectory();
    const s = student('Ana');
    d.load([s], []);
    d.upsertStudent({ ...s, status: 'DELETED', updatedAt: '2027-01-01T00:00:00.000Z' });
    expect(d.page({ status: 'ACTIVE', q: '', afterKey: undefined, limit: 10 }).items).to.have.length(0);
    expect(d.page({ status: 'DELETED', q: '', afterKey: undefined, limit: 10 }).items).to.have.length(1);
  });

  it('keeps the newest version when a feed delivers an older one after our own write', () => {
    const d = studentDirectory();
    const s = student('Ana');
    d.upsertStudent({ ...s, displayName: 'Ana Nova', updatedAt: '2027-01-01T00:00:00.000Z' });
    d.upsertStudent(s);
    expect(allPages(d, 10)).to.deep.equal(['Ana Nova']);
  });

  it("leaves in place a student the feed tells back as it is held (our own write's echo), and applies one that differs in any field, at the same time too", () => {
    const d = studentDirectory();
    const s = student('Ana');
    d.load([student('Bia'), student('Caio')], []);
    d.upsertStudent(s);
    const held = d.get(s.studentId);
    d.upsertStudent({ ...s, _rev: '2-b' });
    expect(d.get(s.studentId)).to.equal(held);
    const changes: ReadonlyArray<Partial<StudentDoc>> = [
      { displayName: 'Ana Maria' },
      { classId: randomUUID() },
      { photoRef: null },
      { visitor: true },
      { status: 'DELETED' },
    ];
    let last = s;
    for (const change of changes) {
      last = { ...last, ...change };
      d.upsertStudent(last);
      const now = d.get(s.studentId);
      expect(now, JSON.stringify(change)).to.not.equal(held);
      expect(now?.displayName).to.equal(last.displayName);
      expect(now?.classId).to.equal(last.classId);
      expect(now?.status).to.equal(last.status);
      expect(now?.visitor).to.equal(last.visitor);
    }
    expect(allPages(d, 10)).to.deep.equal(['Bia', 'Caio']);
    expect(d.named('DELETED', 'ana maria')).to.deep.equal([s.studentId]);
  });

  it('serves photo references only while an unrevoked consent exists', () => {
    const d = studentDirectory();
    const s = student('Ana');
    const c = consent(s.studentId, false);
    d.load([s], []);
    expect(d.page({ status: 'ACTIVE', q: '', afterKey: undefined, limit: 1 }).items[0]?.photoRef).to.equal(
      null,
    );
    d.upsertConsent(c);
    expect(d.page({ status: 'ACTIVE', q: '', afterKey: undefined, limit: 1 }).items[0]?.photoRef).to.equal(
      'p.jpg',
    );
    d.upsertConsent({ ...c, revoked_at: '2026-02-01T00:00:00.000Z' });
    expect(d.activeConsents(s.studentId)).to.equal(0);
    expect(d.page({ status: 'ACTIVE', q: '', afterKey: undefined, limit: 1 }).items[0]?.photoRef).to.equal(
      null,
    );
  });

  it('counts the consents ever recorded for a child, a revoked one too, each once however often told', () => {
    const d = studentDirectory();
    const s = student('Ana');
    d.load([s], []);
    expect(d.consentsRecorded(s.studentId)).to.equal(0);
    const c = consent(s.studentId, false);
    d.upsertConsent(c);
    d.upsertConsent(c);
    d.upsertConsent({ ...c, revoked_at: '2026-02-01T00:00:00.000Z' });
    expect(d.consentsRecorded(s.studentId)).to.equal(1);
    expect(d.activeConsents(s.studentId)).to.equal(0);
  });

  it('follows a change feed and skips (reporting) an undecodable document without stopping', () => {
    const d = studentDirectory();
    const feed = new Subject<Change>();
    const bad: string[] = [];
    const sub = d.follow(feed, (id) => bad.push(id));
    feed.next({ id: 'student:x', seq: 1, deleted: false, doc: { docType: 'student', nonsense: true } });
    const s = student('Ana');
    feed.next({ id: s._id, seq: 2, deleted: false, doc: s });
    feed.next({ id: 'user:1', seq: 3, deleted: false, doc: {} });
    sub.unsubscribe();
    expect(bad).to.deep.equal(['student:x']);
    expect(allPages(d, 10)).to.deep.equal(['Ana']);
  });

  it('property: pages read while students are added list every earlier student exactly once', () => {
    const name = fc.stringMatching(/^[A-Za-zÀ-ÿ ]{1,8}$/);
    fc.assert(
      fc.property(
        fc.array(name, { minLength: 0, maxLength: 30 }),
        fc.array(fc.array(name, { maxLength: 3 }), { maxLength: 15 }),
        fc.integer({ min: 1, max: 7 }),
        (initial, additions, limit) => {
          const d = studentDirectory();
          const before = initial.map((n) => student(n));
          d.load(before, []);
          const seen: string[] = [];
          let after: string | undefined;
          for (let round = 0; round < 1000; round += 1) {
            const page = d.page({ status: 'ACTIVE', q: '', afterKey: after, limit });
            seen.push(...page.items.map((e) => e.studentId));
            for (const n of additions[round] ?? []) d.upsertStudent(student(n));
            if (page.lastKey === undefined) break;
            after = page.lastKey;
          }
          expect(new Set(seen).size, 'no student twice').to.equal(seen.length);
          for (const s of before)
            expect(
              seen.filter((id) => id === s.studentId),
              'each earlier student once',
            ).to.have.length(1);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('student directory summaries (what a snapshot keeps)', () => {
  /** Everything a reader of the directory can see, in a comparable form. */
  const seen = (d: ReturnType<typeof studentDirectory>, ids: ReadonlyArray<string>) => ({
    active: d.page({ status: 'ACTIVE', q: '', afterKey: undefined, limit: 1_000 }).items,
    deleted: d.page({ status: 'DELETED', q: '', afterKey: undefined, limit: 1_000 }).items,
    search: d.page({ status: 'ACTIVE', q: 'ana', afterKey: undefined, limit: 1_000 }).items,
    visitors: d.visitors().sort((a, b) => (a.studentId < b.studentId ? -1 : 1)),
    byId: ids.map((id) => d.get(id)),
    size: d.size(),
  });

  it("property: a directory loaded from another one's summaries, with the same consents, reads the same", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            name: fc.constantFrom('Ana', 'Bia', 'Ana Clara', 'Érica', 'João', 'Ana'),
            deleted: fc.boolean(),
            visitor: fc.boolean(),
            photo: fc.boolean(),
            consent: fc.constantFrom('none', 'active', 'revoked'),
          }),
          { maxLength: 30 },
        ),
        (rows) => {
          const docs = rows.map((r) =>
            student(r.name, {
              status: r.deleted ? 'DELETED' : 'ACTIVE',
              visitor: r.visitor,
              photoRef: r.photo ? 'p.jpg' : null,
            }),
          );
          const consents = rows.flatMap((r, i) => {
            const id = docs[i]?.studentId;
            return id === undefined || r.consent === 'none' ? [] : [consent(id, r.consent === 'revoked')];
          });
          const original = studentDirectory();
          original.load(docs, consents);
          const again = studentDirectory();
          again.load([], consents);
          again.loadSummaries(original.summaries());
          const ids = docs.map((d) => d.studentId);
          expect(seen(again, ids)).to.deep.equal(seen(original, ids));
        },
      ),
    );
  });

  it('gives its summaries the active in name order, then the deleted in name order', () => {
    const d = studentDirectory();
    d.load([student('Caio'), student('Ana', { status: 'DELETED' }), student('Bia'), student('Ágata')], []);
    d.upsertStudent(student('Aline'));
    expect(d.summaries().map((s) => [s.displayName, s.status])).to.deep.equal([
      ['Ágata', 'ACTIVE'],
      ['Aline', 'ACTIVE'],
      ['Bia', 'ACTIVE'],
      ['Caio', 'ACTIVE'],
      ['Ana', 'DELETED'],
    ]);
  });

  it('keeps the newer of a summary and a record, whichever comes first', () => {
    const s = student('Ana');
    const newer = { ...s, displayName: 'Ana Nova', updatedAt: '2027-01-01T00:00:00.000Z' };
    const fromNewer = studentDirectory();
    fromNewer.load([newer], []);
    const d = studentDirectory();
    d.loadSummaries(fromNewer.summaries());
    // The feed then tells of the older record (a change before the snapshot's sequence, replayed).
    d.upsertStudent(s);
    expect(allPages(d, 10)).to.deep.equal(['Ana Nova']);
  });
});

describe('student directory search: the name index answers what a scan of the roll would', () => {
  /** The reference: every student of the status in name order, filtered with the same matcher. */
  const scanned = (docs: ReadonlyMap<string, StudentDoc>, q: string): string[] => {
    const matches = queryMatcher(foldName(q));
    return [...docs.values()]
      .filter((d) => d.status === 'ACTIVE' && matches(foldName(d.displayName)))
      .map((d) => ({ id: d.studentId, key: sortKeyOf(d.displayName, d.studentId) }))
      .sort((a, b) => (a.key < b.key ? -1 : 1))
      .map((e) => e.id);
  };
  const paged = (d: ReturnType<typeof studentDirectory>, q: string, limit: number): string[] => {
    const seen: string[] = [];
    let after: string | undefined;
    for (let i = 0; i < 1000; i += 1) {
      const page = d.page({ status: 'ACTIVE', q, afterKey: after, limit });
      expect(page.items.length).to.be.at.most(limit);
      seen.push(...page.items.map((e) => e.studentId));
      if (page.lastKey === undefined) return seen;
      after = page.lastKey;
    }
    throw new Error('paging did not end');
  };

  it('property: the same students in the same pages, whichever path answers, across renames and deletions', () => {
    // A small alphabet, so queries of three letters and more match often, and renames come back to
    // earlier names (a trigram that leaves a name and returns).
    const word = fc.stringMatching(/^[aeiosnlrç]{1,6}$/);
    const name = fc.array(word, { minLength: 1, maxLength: 3 }).map((w) => w.join(' '));
    const step = fc.oneof(
      fc.record({ kind: fc.constant('add' as const), name }),
      fc.record({ kind: fc.constant('rename' as const), which: fc.nat(), name }),
      fc.record({ kind: fc.constant('delete' as const), which: fc.nat() }),
    );
    fc.assert(
      fc.property(
        fc.array(step, { maxLength: 40 }),
        fc.array(
          fc.oneof(
            word,
            fc.array(word, { minLength: 2, maxLength: 2 }).map((w) => w.join(' ')),
          ),
          {
            minLength: 1,
            maxLength: 4,
          },
        ),
        fc.integer({ min: 1, max: 5 }),
        (steps, queries, limit) => {
          const indexed = studentDirectory({ indexedShare: Number.POSITIVE_INFINITY });
          const scanning = studentDirectory({ indexedShare: 0 });
          // Loaded with the first half of the steps' records at once (its index made in one go), then
          // told the rest one by one.
          const loaded = studentDirectory();
          const docs = new Map<string, StudentDoc>();
          const apply = (doc: StudentDoc, at: number) => {
            docs.set(doc.studentId, doc);
            indexed.upsertStudent(doc);
            scanning.upsertStudent(doc);
            if (at >= steps.length / 2) loaded.upsertStudent(doc);
          };
          for (const [at, s] of steps.entries()) {
            if (at === Math.ceil(steps.length / 2)) loaded.load([...docs.values()], []);
            const ids = [...docs.keys()];
            const target =
              s.kind === 'add' ? undefined : docs.get(ids[s.which % Math.max(1, ids.length)] ?? '');
            if (s.kind === 'add') apply(student(s.name), at);
            else if (target !== undefined && s.kind === 'rename')
              apply(student(s.name, { studentId: target.studentId }), at);
            else if (target !== undefined && s.kind === 'delete')
              apply(student(target.displayName, { studentId: target.studentId, status: 'DELETED' }), at);
          }
          if (steps.length < 2) loaded.load([...docs.values()], []);
          // Every name given (renames too) is searched for, whole and by its last word, beside the random queries.
          const given = steps.flatMap((s) =>
            s.kind === 'delete' ? [] : [s.name, s.name.split(' ').pop() ?? ''],
          );
          for (const q of [...queries, ...given]) {
            const want = scanned(docs, q);
            expect(paged(indexed, q, limit), `index, q=${q}`).to.deep.equal(want);
            expect(paged(scanning, q, limit), `scan, q=${q}`).to.deep.equal(want);
            expect(paged(loaded, q, limit), `loaded, q=${q}`).to.deep.equal(want);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('finds a surname among many students, and a common word across pages', () => {
    const d = studentDirectory();
    const many = Array.from({ length: 400 }, (_, i) =>
      student(`Criança ${String(i).padStart(3, '0')} Silva`),
    );
    d.load([...many, student('Bruno Queiroz'), student('Ana Queiroz Lima')], []);
    expect(allPages(d, 50, 'queiroz')).to.deep.equal(['Ana Queiroz Lima', 'Bruno Queiroz']);
    expect(allPages(d, 50, 'silva')).to.have.length(400);
    expect(allPages(d, 50, 'xyz')).to.deep.equal([]);
  });
});

describe("the import's matching from the directory (the embedded store)", () => {
  // Names that fold alike, names that are another's prefix, and spacing: what a range of the
  // name-ordered list must take or leave.
  const NAMES = [
    'Ana',
    'ANA',
    'Aná',
    'Ana Lima',
    'ana  lima',
    'Ana Lima Souza',
    'Analima',
    'Ana Li',
    'Bia',
    'Zé',
  ];
  const foldedNames = [...new Set(NAMES.map(foldName))];

  it("property: names exactly the students of a status whose folded name is asked, across renames, deletions and a load; the import's query gets them with the ids asked", async () => {
    const step = fc.oneof(
      fc.record({ kind: fc.constant('add' as const), name: fc.constantFrom(...NAMES) }),
      fc.record({ kind: fc.constant('rename' as const), which: fc.nat(), name: fc.constantFrom(...NAMES) }),
      fc.record({ kind: fc.constant('delete' as const), which: fc.nat() }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 40 }), fc.nat(), async (steps, cut) => {
        const told = studentDirectory();
        const loaded = studentDirectory();
        const docs = new Map<string, StudentDoc>();
        const at = steps.length === 0 ? 0 : cut % steps.length;
        for (const [i, s] of steps.entries()) {
          if (i === at) loaded.load([...docs.values()], []);
          const ids = [...docs.keys()];
          const target =
            s.kind === 'add' ? undefined : docs.get(ids[s.which % Math.max(1, ids.length)] ?? '');
          const doc =
            s.kind === 'add'
              ? student(s.name)
              : target === undefined
                ? undefined
                : s.kind === 'rename'
                  ? student(s.name, { studentId: target.studentId })
                  : student(target.displayName, { studentId: target.studentId, status: 'DELETED' });
          if (doc === undefined) continue;
          docs.set(doc.studentId, doc);
          told.upsertStudent(doc);
          if (i >= at) loaded.upsertStudent(doc);
        }
        if (steps.length === 0) loaded.load([], []);
        for (const status of ['ACTIVE', 'DELETED'] as const)
          for (const folded of foldedNames) {
            const want = [...docs.values()]
              .filter((d) => d.status === status && foldName(d.displayName) === folded)
              .map((d) => d.studentId)
              .sort();
            expect(told.named(status, folded).sort(), `${status} ${folded}`).to.deep.equal(want);
            expect(loaded.named(status, folded).sort(), `loaded: ${status} ${folded}`).to.deep.equal(want);
          }
        const asked = [...docs.keys()].slice(0, 2);
        const matched = await directoryMatching(told)({
          keys: [
            [foldName('Ana Lima'), '2019-03-05'],
            [foldName('ANA LIMA'), ''],
          ],
          ids: [...asked, 'not-held'],
        });
        const named = [...docs.values()]
          .filter((d) => d.status === 'ACTIVE' && foldName(d.displayName) === 'ana lima')
          .map((d) => d.studentId);
        expect(matched.sort()).to.deep.equal([...new Set([...named, ...asked, 'not-held'])].sort());
      }),
      { numRuns: 300 },
    );
  });
});
