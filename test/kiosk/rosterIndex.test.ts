import { expect } from 'chai';
import {
  buildRosterIndex,
  normalizeText,
  photoOf,
  searchStudents,
  sessionOpen,
  sessionsFrom,
  siblingsOf,
} from '../../src/kiosk/app/rosterIndex.js';
import { aRosterStudent } from '../support/fixtures.js';

const student = (studentId: string, displayName: string, classId: string) => ({
  _id: `student:${studentId}`,
  _rev: '1-a',
  docType: 'rosterStudent',
  studentId,
  displayName,
  classId,
  photoRef: null,
  allergies: null,
  specialNeeds: null,
  visitor: false,
  pickup: [],
});

const index = buildRosterIndex([
  student('s1', 'João Pedro Araújo', 'c1'),
  student('s2', 'Luana Souza', 'c1'),
  student('s3', 'Ana Lúcia Ferreira', 'c2'),
  student('s4', 'Ana Beatriz Conceição', 'c1'),
  { _id: 'class:c1', docType: 'rosterClass', classId: 'c1', name: 'Turma A' },
  { _id: 'daykeys', docType: 'rosterDayKeys', keys: [{ day: '2026-11-26', key: 'abc' }] },
  { _id: 'student:broken', docType: 'rosterStudent', studentId: 's9' },
]);
const names = (q: string, classId: string | null = null) =>
  searchStudents(index, q, classId).map((s) => s.displayName);

describe('kiosk: the local roster and its search', () => {
  it('normalises names without accents, case or extra spaces', () => {
    expect(normalizeText('  João   ARAÚJO Conceição ')).to.equal('joao araujo conceicao');
  });

  it('finds a child by the start of each word typed, accents ignored', () => {
    expect(names('joao')).to.deep.equal(['João Pedro Araújo']);
    expect(names('ANA LU')).to.deep.equal(['Ana Lúcia Ferreira']);
    expect(names('conceicao')).to.deep.equal(['Ana Beatriz Conceição']);
  });

  it('matches word starts only: "ana" does not find Luana', () => {
    expect(names('ana')).to.deep.equal(['Ana Beatriz Conceição', 'Ana Lúcia Ferreira']);
  });

  it("lists the session's class first, and only it when nothing is typed", () => {
    expect(names('ana', 'c2')).to.deep.equal(['Ana Lúcia Ferreira', 'Ana Beatriz Conceição']);
    expect(names('', 'c1')).to.deep.equal(['Ana Beatriz Conceição', 'João Pedro Araújo', 'Luana Souza']);
  });

  it('skips documents it cannot decode, and counts them', () => {
    expect(index.students.size).to.equal(4);
    expect(index.unreadable).to.equal(1);
    expect(index.dayKeys.get('2026-11-26')).to.equal('abc');
    expect(index.classes.get('c1')).to.equal('Turma A');
  });
});

describe("kiosk: each class's room", () => {
  it('reads the capacity, ratio and age range the roster sends, and none from a roster that sends none', () => {
    const rooms = buildRosterIndex([
      {
        _id: 'class:c1',
        docType: 'rosterClass',
        classId: 'c1',
        name: 'A',
        capacity: 12,
        childrenPerVolunteer: 4,
        ageRange: { minMonths: 36, bornUntil: '2023-12' },
      },
      { _id: 'class:c2', docType: 'rosterClass', classId: 'c2', name: 'B' },
    ]).rooms;
    expect([...rooms]).to.deep.equal([
      ['c1', { capacity: 12, childrenPerVolunteer: 4, ageRange: { minMonths: 36, bornUntil: '2023-12' } }],
      ['c2', { capacity: null, childrenPerVolunteer: null, ageRange: null }],
    ]);
  });

  it('knows the required fields the roster names, ignoring one this version does not know, and none without', () => {
    const doc = {
      _id: 'admission',
      docType: 'rosterAdmission',
      requiredFields: ['imageConsent', 'shoeSize', 'birthDate'],
    };
    expect(buildRosterIndex([doc]).requiredFields).to.deep.equal(['birthDate', 'imageConsent']);
    expect(buildRosterIndex([]).requiredFields).to.deep.equal([]);
  });
});

describe('kiosk: deactivated classes and sessions (0047)', () => {
  const session = (sessionId: string, classId: string, date: string, active?: boolean) => ({
    _id: `session:${sessionId}`,
    docType: 'rosterSession',
    sessionId,
    classId,
    date,
    title: null,
    startsAt: null,
    endsAt: null,
    ...(active === undefined ? {} : { active }),
  });
  const roster = buildRosterIndex([
    { _id: 'class:c1', docType: 'rosterClass', classId: 'c1', name: 'A' },
    { _id: 'class:c2', docType: 'rosterClass', classId: 'c2', name: 'B', active: false },
    session('open', 'c1', '2026-11-29'),
    session('closed', 'c1', '2026-11-29', false),
    session('ofClosedClass', 'c2', '2026-11-29'),
    session('later', 'c1', '2026-11-30'),
    session('laterClosed', 'c1', '2026-11-30', false),
  ]);
  const ids = (p: {
    today: ReadonlyArray<{ sessionId: string }>;
    later: ReadonlyArray<{ sessionId: string }>;
  }) => ({
    today: p.today.map((s) => s.sessionId),
    later: p.later.map((s) => s.sessionId),
  });

  it('a session is open unless it or its class is deactivated; an older roster says neither', () => {
    expect(roster.sessions.map((s) => [s.sessionId, sessionOpen(roster, s)])).to.deep.equal([
      ['open', true],
      ['closed', false],
      ['ofClosedClass', false],
      ['later', true],
      ['laterClosed', false],
    ]);
    expect([...roster.deactivatedClasses]).to.deep.equal(['c2']);
  });

  it('the tablet stops offering a deactivated session, but for one with children still in its room', () => {
    expect(ids(sessionsFrom(roster, '2026-11-29'))).to.deep.equal({ today: ['open'], later: ['later'] });
    const occupied = new Set(['ofClosedClass', 'laterClosed']);
    expect(ids(sessionsFrom(roster, '2026-11-29', (id) => occupied.has(id)))).to.deep.equal({
      today: ['open', 'ofClosedClass'],
      later: ['later', 'laterClosed'],
    });
  });
});

describe('kiosk: siblings', () => {
  const kid = (id: string, displayName: string, families?: string[]) =>
    aRosterStudent(id, displayName, families === undefined ? {} : { families });
  const family = buildRosterIndex([
    kid('1', 'Caio', ['f1']),
    kid('2', 'Ana', ['f1', 'f2']),
    kid('3', 'Bia', ['f2']),
    kid('4', 'Davi', ['f9']),
    kid('5', 'Eva'),
  ]);
  const names = (id: string) => {
    const s = family.students.get(id);
    return s === undefined ? [] : siblingsOf(family, s).map((x) => x.displayName);
  };

  it('are the other children sharing a family key with the child, by name', () => {
    expect(names('2')).to.deep.equal(['Bia', 'Caio']);
    expect(names('1')).to.deep.equal(['Ana']);
    expect(names('4')).to.deep.equal([]);
    expect(names('5')).to.deep.equal([]);
  });
});

describe("kiosk: a child's photo thumbnail", () => {
  const photo = (studentId: string, photoRef: string) => ({
    _id: `photo:${studentId}`,
    docType: 'rosterPhoto',
    studentId,
    photoRef,
    contentType: 'image/jpeg',
    data: '/9j/',
  });
  const withPhotos = buildRosterIndex([
    { ...student('s1', 'Ana', 'c1'), photoRef: 'photos/s1/new.jpg' },
    { ...student('s2', 'Bia', 'c1'), photoRef: 'photos/s2/b.jpg' },
    student('s3', 'Caio', 'c1'),
    photo('s1', 'photos/s1/old.jpg'),
    photo('s2', 'photos/s2/b.jpg'),
    photo('s3', 'photos/s3/c.jpg'),
  ]);
  const of = (id: string) => {
    const s = withPhotos.students.get(id);
    return s === undefined ? undefined : photoOf(withPhotos, s)?.photoRef;
  };

  it("is shown only for the photo the child's record names now", () => {
    // s1's record names a newer photo than the thumbnail pulled; s3's names none (consent revoked).
    expect([of('s1'), of('s2'), of('s3')]).to.deep.equal([undefined, 'photos/s2/b.jpg', undefined]);
    expect(withPhotos.unreadable).to.equal(0);
  });
});
