/**
 * A small roll and what the roster's passes read beside it (classes, sessions, the secret, the
 * church's required fields, a family pass in its second generation), for the tests that compare a
 * pass's roster with `rosterDocs` of the whole roll at once.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { dayKey } from '../../src/crypto/dayKeys.js';
import { DEFAULT_CHECKIN_CONFIG } from '../../src/domain/checkin.js';
import type { ClassDoc, ClassSessionDoc } from '../../src/domain/classes.js';
import type { AllowedAdult } from '../../src/domain/pickup.js';
import type { RosterDoc } from '../../src/domain/roster.js';
import type { StudentDoc } from '../../src/domain/student.js';
import { type RosterInput, rosterDocs } from '../../src/rules/roster.js';
import { photosAllowed } from '../../src/rules/students.js';
import type { Database } from '../../src/store/pouch.js';
import { studentStore } from '../../src/store/students.js';
import { familyKeyOf, familyPassesOf, rosterWindow } from '../../src/sync/rosterInput.js';
import { studentDirectory } from '../../src/sync/studentDirectory.js';
import { aStudentRecord } from './fixtures.js';

export const NOW = new Date('2026-11-27T10:00:00.000Z');
export const SECRET = new Uint8Array(32).fill(7);
export const CLASS_A = randomUUID();
export const CLASS_B = randomUUID();
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
export const classes = [
  aClass(CLASS_A, 'A', { capacity: 10 }),
  aClass(CLASS_B, 'B', { childrenPerVolunteer: 5 }),
];
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
export const sessions: ClassSessionDoc[] = [aSession(CLASS_A), aSession(CLASS_B)];
export const VOLUNTEERS = 3;
export const REQUIRED = { requiredFields: ['birthDate' as const] };
// One family's pass is in its second generation (a pass was reissued).
export const GENERATIONS: ReadonlyMap<string, number> = new Map([[familyKeyOf(SECRET)('11987654321'), 2]]);

/** Siblings share a phone (one family); '12' names no family. */
export const PHONES = [
  '+55 11 98765-4321',
  '(21) 3333-4444',
  '(31) 3333-5555',
  '(41) 99999-0000',
  '(51) 3222-1111',
  '12',
] as const;

export const aStudent = fc.record({
  name: fc.constantFrom('Ana', 'Bia', 'Caio', 'Davi'),
  active: fc.boolean(),
  photo: fc.boolean(),
  consented: fc.boolean(),
  thumbnail: fc.boolean(),
  allergies: fc.constantFrom(null, 'amendoim'),
  visitor: fc.boolean(),
  phone: fc.constantFrom(...PHONES),
  birthDate: fc.constantFrom(null, '2020-02-29'),
  consentsEver: fc.nat({ max: 2 }),
  classB: fc.boolean(),
});

export type AStudent = typeof aStudent extends fc.Arbitrary<infer T> ? T : never;

/**
 * `roll` stored in a private database of its own (`privateDb`), beside an empty roster database, with
 * what the passes read of each student besides its record: its consents, thumbnail and directory.
 * `add` stores one more (its id given or new).
 */
export const storedRoll = async (
  open: (name: string) => Database,
  n: number,
  roll: ReadonlyArray<AStudent>,
) => {
  const privateDb = open(`private-${n}`);
  const rosterDb = open(`roster-${n}`);
  await rosterDb.put({ _id: '_design/idx-by-docType', views: {} });
  const students = studentStore(privateDb);
  const directory = studentDirectory();
  const thumbs = new Set<string>();
  const consented = new Set<string>();
  const recorded = new Map<string, number>();
  const add = async (s: AStudent, studentId: string = randomUUID()): Promise<StudentDoc> => {
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
    if (s.thumbnail) thumbs.add(studentId);
    if (s.consented) consented.add(studentId);
    recorded.set(studentId, s.consentsEver);
    return doc;
  };
  const docs: StudentDoc[] = [];
  for (const s of roll) docs.push(await add(s));
  directory.load(docs, []);
  return {
    privateDb,
    rosterDb,
    students,
    directory,
    docs,
    add,
    activeConsents: (id: string) => (consented.has(id) ? 1 : 0),
    consentsRecorded: (id: string) => recorded.get(id) ?? 0,
    thumbnail: async (id: string, photoRef: string) => (thumbs.has(id) ? `thumb-of-${photoRef}` : undefined),
  };
};

/** Adults as the pickup service would give them: the guardian, with the record's phones. */
export const adultsOf = async (students: ReadonlyArray<StudentDoc>) =>
  new Map<string, AllowedAdult[]>(
    students.map((s) => [
      s.studentId,
      [{ name: s.guardianName, level: 'N1', relationship: 'mãe', phones: s.phones.map((p) => p.number) }],
    ]),
  );

/** The pass dependencies that are not the roll's: classes, sessions, the secret, the church's settings. */
export const settingsDeps = {
  classes: { listSessions: async () => sessions, listClasses: async () => classes },
  checkins: {
    secret: async () => SECRET,
    config: async () => ({ ...DEFAULT_CHECKIN_CONFIG, ...REQUIRED, updatedAt: null }),
  },
  volunteersInRoom: async () => VOLUNTEERS,
  clock: () => NOW,
  familyPassGenerations: async () => GENERATIONS,
};

/** The roster database's documents, without their revisions, in id order. */
export const rosterOf = async (db: Database): Promise<unknown[]> =>
  (await db.allDocs({ include_docs: true })).rows.flatMap((r) => {
    if (r.id.startsWith('_design/') || r.doc === undefined || r.doc === null) return [];
    const { _rev: _r, ...doc } = r.doc;
    return [doc];
  });

/** What `rosterDocs` gives for the whole roll `docs` at once, beside `settingsDeps`. */
export const wholeRoster = async (
  docs: ReadonlyArray<StudentDoc>,
  roll: {
    readonly activeConsents: (id: string) => number;
    readonly consentsRecorded: (id: string) => number;
    readonly thumbnail: (id: string, photoRef: string) => Promise<string | undefined>;
    readonly aspects?: RosterInput['aspects'];
  },
): Promise<RosterDoc[]> => {
  const days = rosterWindow(NOW);
  const thumbnails = new Map<string, { photoRef: string; data: string }>();
  for (const d of docs) {
    const data = d.photoRef === null ? undefined : await roll.thumbnail(d.studentId, d.photoRef);
    if (d.photoRef !== null && data !== undefined && photosAllowed(roll.activeConsents(d.studentId)))
      thumbnails.set(d.studentId, { photoRef: d.photoRef, data });
  }
  return rosterDocs({
    students: docs,
    photosAllowed: (id) => photosAllowed(roll.activeConsents(id)),
    consentsRecorded: roll.consentsRecorded,
    thumbnails,
    familyKey: familyKeyOf(SECRET),
    adults: await adultsOf(docs.filter((d) => d.status === 'ACTIVE')),
    classes,
    sessions: sessions.filter((s) => days.sessionDays.includes(s.date)),
    volunteers: new Map(sessions.filter((s) => s.classId === CLASS_B).map((s) => [s.sessionId, VOLUNTEERS])),
    ...REQUIRED,
    dayKeys: days.keyDays.map((day) => ({
      day,
      key: Buffer.from(dayKey(SECRET, day)).toString('base64url'),
    })),
    aspects: roll.aspects ?? [],
    familyPasses: familyPassesOf(SECRET, GENERATIONS),
  });
};
