/**
 * The roster's full pass reads the students a page at a time and reconciles each page's range of the
 * roster before reading the next. Whatever the roll, the page size and what the roster held before
 * (stale students, photos, classes), the roster it leaves is exactly `rosterDocs` of the whole roll at
 * once. Both backends: the pages' bounds are key ranges of the primary index.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import fc from 'fast-check';
import { dayKey } from '../../src/crypto/dayKeys.js';
import { DEFAULT_CHECKIN_CONFIG } from '../../src/domain/checkin.js';
import type { ClassDoc, ClassSessionDoc } from '../../src/domain/classes.js';
import type { AllowedAdult } from '../../src/domain/pickup.js';
import type { RosterDoc } from '../../src/domain/roster.js';
import type { StudentDoc } from '../../src/domain/student.js';
import { rosterDocs } from '../../src/rules/roster.js';
import { photosAllowed } from '../../src/rules/students.js';
import type { Database } from '../../src/store/pouch.js';
import { rosterStore } from '../../src/store/roster.js';
import { studentStore } from '../../src/store/students.js';
import {
  familyKeyOf,
  familyPassesOf,
  passHashCache,
  rosterFullPass,
  rosterWindow,
} from '../../src/sync/rosterInput.js';
import { studentDirectory } from '../../src/sync/studentDirectory.js';
import { aStudentRecord } from '../support/fixtures.js';
import { type StoreHost, storeBackends } from '../support/storeBackends.js';

const NOW = new Date('2026-11-27T10:00:00.000Z');
const SECRET = new Uint8Array(32).fill(7);
const CLASS_A = randomUUID();
const CLASS_B = randomUUID();
const AT = '2026-11-01T00:00:00.000Z';
const aClass = (classId: string, name: string, over: Partial<ClassDoc>): ClassDoc => ({
  _id: `class:${classId}`,
  _rev: '1-a',
  docType: 'class',
  classId,
  name,
  nucleusId: null,
  createdAt: AT,
  updatedAt: AT,
  ...over,
});
const classes = [aClass(CLASS_A, 'A', { capacity: 10 }), aClass(CLASS_B, 'B', { childrenPerVolunteer: 5 })];
const aSession = (classId: string): ClassSessionDoc => {
  const sessionId = randomUUID();
  return {
    _id: `classSession:${sessionId}`,
    _rev: '1-a',
    docType: 'classSession',
    sessionId,
    classId,
    nucleusId: null,
    date: '2026-11-27',
    title: null,
    startsAt: null,
    endsAt: null,
    createdAt: AT,
    updatedAt: AT,
  };
};
// Class B's room has a ratio: its session carries the volunteers in it, class A's none.
const sessions: ClassSessionDoc[] = [aSession(CLASS_A), aSession(CLASS_B)];
const VOLUNTEERS = 3;
const REQUIRED = { requiredFields: ['birthDate' as const] };
// One family's pass is in its second generation (a pass was reissued).
const GENERATIONS: ReadonlyMap<string, number> = new Map([[familyKeyOf(SECRET)('11987654321'), 2]]);

const aStudent = fc.record({
  name: fc.constantFrom('Ana', 'Bia', 'Caio', 'Davi'),
  active: fc.boolean(),
  photo: fc.boolean(),
  consented: fc.boolean(),
  thumbnail: fc.boolean(),
  allergies: fc.constantFrom(null, 'amendoim'),
  visitor: fc.boolean(),
  // Siblings share a phone (one family); '12' names no family.
  phone: fc.constantFrom(
    '+55 11 98765-4321',
    '(21) 3333-4444',
    '(31) 3333-5555',
    '(41) 99999-0000',
    '(51) 3222-1111',
    '12',
  ),
  birthDate: fc.constantFrom(null, '2020-02-29'),
  consentsEver: fc.nat({ max: 2 }),
  classB: fc.boolean(),
});

/** Adults as the pickup service would give them: the guardian, with the record's phones. */
const adultsOf = async (students: ReadonlyArray<StudentDoc>) =>
  new Map<string, AllowedAdult[]>(
    students.map((s) => [
      s.studentId,
      [{ name: s.guardianName, level: 'N1', relationship: 'mãe', phones: s.phones.map((p) => p.number) }],
    ]),
  );

const stale = (id: string): RosterDoc => ({
  _id: `student:${id}`,
  docType: 'rosterStudent',
  studentId: id,
  displayName: 'Antigo',
  classId: CLASS_A,
  photoRef: null,
  allergies: null,
  specialNeeds: null,
  visitor: false,
  pickup: [],
});

for (const [backend, setUp] of storeBackends('roster-pass')) {
  describe(`roster full pass on ${backend}: streamed a page at a time, the same roster as the whole at once`, function () {
    this.timeout(120_000);
    let host: StoreHost;
    let n = 0;
    before(async () => {
      host = await setUp();
    });
    after(() => host.dispose());

    const rosterOf = async (db: Database): Promise<unknown[]> =>
      (await db.allDocs({ include_docs: true })).rows.flatMap((r) => {
        if (r.id.startsWith('_design/') || r.doc === undefined || r.doc === null) return [];
        const { _rev: _r, ...doc } = r.doc;
        return [doc];
      });

    it('leaves exactly rosterDocs of the whole roll, whatever the page size and what was there', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(aStudent, { maxLength: 12 }),
          fc.integer({ min: 1, max: 5 }),
          fc.array(
            fc.constantFrom('stale-student', 'stale-photo', 'stale-class', 'after-last', 'stale-family'),
            { maxLength: 4 },
          ),
          fc.integer({ min: 1, max: 3 }),
          async (roll, pageSize, leftovers, familyPageSize) => {
            n += 1;
            const privateDb = host.open(`private-${n}`);
            const rosterDb = host.open(`roster-${n}`);
            await rosterDb.put({ _id: '_design/idx-by-docType', views: {} });
            const students = studentStore(privateDb);
            const directory = studentDirectory();
            const docs: StudentDoc[] = [];
            const thumbs = new Set<string>();
            const consented = new Set<string>();
            const recorded = new Map<string, number>();
            for (const s of roll) {
              const studentId = randomUUID();
              const doc = await students.create(
                aStudentRecord({
                  studentId,
                  displayName: s.name,
                  status: s.active ? 'ACTIVE' : 'DELETED',
                  photoRef: s.photo ? `${studentId}.jpg` : null,
                  allergies: s.allergies,
                  visitor: s.visitor,
                  phones: [{ number: s.phone, qualifier: 'mãe' }],
                  birthDate: s.birthDate,
                  classId: s.classB ? CLASS_B : CLASS_A,
                }),
              );
              docs.push(doc);
              if (s.thumbnail) thumbs.add(studentId);
              if (s.consented) consented.add(studentId);
              recorded.set(studentId, s.consentsEver);
            }
            directory.load(docs, []);
            const activeConsents = (id: string) => (consented.has(id) ? 1 : 0);
            const consentsRecorded = (id: string) => recorded.get(id) ?? 0;
            const thumbnail = async (id: string, photoRef: string) =>
              thumbs.has(id) ? `thumb-of-${photoRef}` : undefined;
            // What the roster held before: documents no student wants any more, in every range.
            const first = docs[0]?.studentId ?? 'x';
            const before: RosterDoc[] = leftovers.map((what, i) => {
              if (what === 'stale-student') return stale(randomUUID());
              if (what === 'stale-photo')
                return {
                  _id: `photo:${first}`,
                  docType: 'rosterPhoto',
                  studentId: first,
                  photoRef: 'old.jpg',
                  contentType: 'image/jpeg',
                  data: 'old',
                };
              if (what === 'after-last') return stale(`ffffffff-${i}`);
              if (what === 'stale-family')
                return {
                  _id: `family:gone-${i}`,
                  docType: 'rosterFamily',
                  familyKey: `gone-${i}`,
                  guardianName: 'Antiga',
                  phoneSuffix: '0000',
                  studentIds: [],
                  pass: 'old',
                  revoked: [],
                };
              return { _id: `class:gone-${i}`, docType: 'rosterClass', classId: `gone-${i}`, name: 'Gone' };
            });
            if (before.length > 0) await rosterDb.bulkDocs(before.map((d) => ({ ...d })));

            // What each reconcile of family documents was given: at most a page of families.
            const roster = rosterStore(rosterDb);
            let mostFamilies = 0;
            const countingRoster: Pick<typeof roster, 'reconcileRange'> = {
              reconcileRange: (range, desired) => {
                const families = desired.filter((d) => d.docType === 'rosterFamily').length;
                mostFamilies = Math.max(mostFamilies, families);
                return roster.reconcileRange(range, desired);
              },
            };
            const pass = rosterFullPass({
              students,
              directory: { get: directory.get, activeConsents, consentsRecorded },
              pickups: { allowedAdultsOfAll: adultsOf },
              classes: { listSessions: async () => sessions, listClasses: async () => classes },
              checkins: {
                secret: async () => SECRET,
                config: async () => ({ ...DEFAULT_CHECKIN_CONFIG, ...REQUIRED, updatedAt: null }),
              },
              volunteersInRoom: async () => VOLUNTEERS,
              projections: { eachAspectByDay: async () => undefined },
              roster: countingRoster,
              clock: () => NOW,
              thumbnail,
              familyPassGenerations: async () => GENERATIONS,
              pageSize,
              familyPageSize,
            });
            const result = await pass();

            const days = rosterWindow(NOW);
            const thumbnails = new Map<string, { photoRef: string; data: string }>();
            for (const d of docs) {
              const data = d.photoRef === null ? undefined : await thumbnail(d.studentId, d.photoRef);
              if (d.photoRef !== null && data !== undefined && photosAllowed(activeConsents(d.studentId)))
                thumbnails.set(d.studentId, { photoRef: d.photoRef, data });
            }
            const whole = rosterDocs({
              students: docs,
              photosAllowed: (id) => photosAllowed(activeConsents(id)),
              consentsRecorded,
              thumbnails,
              familyKey: familyKeyOf(SECRET),
              adults: await adultsOf(docs.filter((d) => d.status === 'ACTIVE')),
              classes,
              sessions: sessions.filter((s) => days.sessionDays.includes(s.date)),
              volunteers: new Map(
                sessions.filter((s) => s.classId === CLASS_B).map((s) => [s.sessionId, VOLUNTEERS]),
              ),
              ...REQUIRED,
              dayKeys: days.keyDays.map((day) => ({
                day,
                key: Buffer.from(dayKey(SECRET, day)).toString('base64url'),
              })),
              aspects: [],
              familyPasses: familyPassesOf(SECRET, GENERATIONS, passHashCache(10)),
            });
            expect(await rosterOf(rosterDb)).to.deep.equal(whole);
            // Past one page of students, the families are reconciled a page at a time.
            if (docs.length > pageSize) expect(mostFamilies).to.be.at.most(familyPageSize);
            expect([...result.context.activeIds].sort()).to.deep.equal(
              docs
                .filter((d) => d.status === 'ACTIVE')
                .map((d) => d.studentId)
                .sort(),
            );
            // A second pass over the same records finds nothing to write.
            expect(await pass()).to.deep.include({ written: 0, deleted: 0 });
          },
        ),
        { seed: 20261127, numRuns: 20 },
      );
    });
  });
}
