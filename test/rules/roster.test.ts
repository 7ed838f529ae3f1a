import { expect } from 'chai';
import { familyPhone, phoneSuffix, type RosterInput, rosterDocs } from '../../src/rules/roster.js';

const student = (id: string, over: Partial<RosterInput['students'][number]> = {}) => ({
  studentId: id,
  displayName: `Child ${id}`,
  classId: 'c1',
  status: 'ACTIVE',
  photoRef: `photos/${id}.jpg`,
  allergies: null,
  specialNeeds: null,
  visitor: false,
  birthDate: null,
  phones: [],
  ...over,
});

const base: RosterInput = {
  students: [],
  photosAllowed: () => false,
  consentsRecorded: () => 0,
  requiredFields: [],
  adults: new Map(),
  classes: [{ classId: 'c1', name: 'Turma' }],
  sessions: [
    { sessionId: 's1', classId: 'c1', date: '2026-11-26', title: null, startsAt: null, endsAt: null },
  ],
  dayKeys: [{ day: '2026-11-26', key: 'k' }],
  aspects: [],
};

describe('roster for tablets (minimisation, table)', () => {
  it('phone suffixes keep the last four digits only', () => {
    const table: ReadonlyArray<readonly [string, string]> = [
      ['+55 11 98765-4321', '4321'],
      ['(11) 5555-0101', '0101'],
      ['123', '123'],
      ['no digits', ''],
    ];
    for (const [phone, suffix] of table) expect(phoneSuffix(phone), phone).to.equal(suffix);
  });

  it('lists active students only; a deleted one is absent (and so deleted on tablets)', () => {
    const docs = rosterDocs({ ...base, students: [student('a'), student('b', { status: 'DELETED' })] });
    expect(docs.filter((d) => d.docType === 'rosterStudent').map((d) => d._id)).to.deep.equal(['student:a']);
  });

  it('carries a thumbnail only with consent, for the key the child has now, and for active children only', () => {
    const thumb = (id: string, photoRef = `photos/${id}.jpg`) =>
      [id, { photoRef, data: `jpeg-of-${id}` }] as const;
    const table: ReadonlyArray<{
      readonly why: string;
      readonly child: ReturnType<typeof student>;
      readonly allowed: boolean;
      readonly stored: ReturnType<typeof thumb> | undefined;
      readonly sent: boolean;
    }> = [
      {
        why: 'consent and a stored photo',
        child: student('a'),
        allowed: true,
        stored: thumb('a'),
        sent: true,
      },
      { why: 'no active consent', child: student('a'), allowed: false, stored: thumb('a'), sent: false },
      { why: 'no stored photo', child: student('a'), allowed: true, stored: undefined, sent: false },
      {
        why: 'a stored photo under another key (replaced meanwhile)',
        child: student('a'),
        allowed: true,
        stored: thumb('a', 'photos/old.jpg'),
        sent: false,
      },
      {
        why: 'a child without a photo reference',
        child: student('a', { photoRef: null }),
        allowed: true,
        stored: thumb('a'),
        sent: false,
      },
      {
        why: 'a deleted child',
        child: student('a', { status: 'DELETED' }),
        allowed: true,
        stored: thumb('a'),
        sent: false,
      },
    ];
    for (const row of table) {
      const docs = rosterDocs({
        ...base,
        students: [row.child],
        photosAllowed: () => row.allowed,
        thumbnails: new Map(row.stored === undefined ? [] : [row.stored]),
      });
      const photo = docs.find((d) => d._id === 'photo:a');
      if (row.sent)
        expect(photo, row.why).to.deep.equal({
          _id: 'photo:a',
          docType: 'rosterPhoto',
          studentId: 'a',
          photoRef: 'photos/a.jpg',
          contentType: 'image/jpeg',
          data: 'jpeg-of-a',
        });
      else expect(photo, row.why).to.equal(undefined);
    }
  });

  it('shows a photo reference only with consent, and adults with suffixes, never numbers', () => {
    const docs = rosterDocs({
      ...base,
      students: [student('a'), student('b')],
      photosAllowed: (id) => id === 'a',
      adults: new Map([
        [
          'a',
          [
            {
              name: 'Mãe',
              level: 'N1' as const,
              relationship: 'guardian',
              phones: ['+55 11 98765-4321', '11 98765 4321'],
            },
          ],
        ],
      ]),
    });
    const byId = new Map(docs.map((d) => [d._id, d]));
    expect(byId.get('student:a')).to.deep.include({ photoRef: 'photos/a.jpg' });
    expect(byId.get('student:b')).to.deep.include({ photoRef: null });
    expect(byId.get('student:a')).to.deep.include({
      pickup: [{ name: 'Mãe', level: 'N1', relationship: 'guardian', phoneSuffixes: ['4321'] }],
    });
    expect(JSON.stringify(docs)).not.to.contain('98765');
  });

  it("carries check-in and mark state of the roster's sessions with their versions, and no other", () => {
    const checkin = (sessionId: string) => ({
      version: `v-${sessionId}`,
      state: {
        kind: 'checkin' as const,
        studentId: 'a',
        sessionId,
        checkins: [
          {
            checkInId: 'ci',
            status: 'CHECKED_IN' as const,
            checkedInAt: '2026-11-26T09:00:00.000Z',
            checkedInBy: 'u1',
            checkedOutAt: null,
            checkedOutBy: null,
            pickupPerson: 'Avó',
            emergency: false,
            justification: null,
            visitor: false,
          },
        ],
        ineffective: [],
      },
    });
    const docs = rosterDocs({
      ...base,
      students: [student('a')],
      aspects: [checkin('s1'), checkin('other-day')],
    });
    const states = docs.filter((d) => d.docType === 'rosterCheckin');
    expect(states.map((d) => d._id)).to.deep.equal(['checkin:s1:a']);
    expect(states[0]).to.deep.include({ version: 'v-s1' });
    // Who collected the child stays on the server.
    expect(JSON.stringify(states)).not.to.contain('Avó');
  });

  it('is sorted and deterministic, so reconciling is a plain diff', () => {
    const input = { ...base, students: [student('b'), student('a')] };
    expect(rosterDocs(input)).to.deep.equal(rosterDocs({ ...input, students: [student('a'), student('b')] }));
    expect(rosterDocs(input).map((d) => d._id)).to.deep.equal([
      'admission',
      'class:c1',
      'daykeys',
      'session:s1',
      'student:a',
      'student:b',
    ]);
  });
});

describe('families in the roster: siblings by a shared guardian phone, never the number', () => {
  const guardian = (phones: string[], level: 'N1' | 'N2' = 'N1') => ({
    name: 'G',
    level,
    relationship: 'guardian',
    phones,
  });
  const familyKey = (digits: string) => `key(${digits})`;

  it('what a family key is computed from: the last 11 digits, none for a number under 8', () => {
    const table: ReadonlyArray<readonly [string, string | undefined]> = [
      ['+55 11 98765-4321', '11987654321'],
      ['(11) 98765-4321', '11987654321'],
      ['5555-0101', '55550101'],
      ['123-4567', undefined],
    ];
    for (const [phone, digits] of table) expect(familyPhone(phone), phone).to.equal(digits);
  });

  it('children whose guardians share a phone, however written, share a family; an N2 adult makes none', () => {
    const docs = rosterDocs({
      ...base,
      familyKey,
      students: [student('a'), student('b'), student('c'), student('d')],
      adults: new Map([
        ['a', [guardian(['+55 11 98765-4321'])]],
        ['b', [guardian(['(11) 98765-4321', '11 3333-0000'])]],
        ['c', [guardian(['21 99999-0000'])]],
        ['d', [guardian(['+55 11 98765-4321'], 'N2')]],
      ]),
    });
    const families = new Map(
      docs.flatMap((d) => (d.docType === 'rosterStudent' ? [[d.studentId, d.families]] : [])),
    );
    expect(Object.fromEntries(families)).to.deep.equal({
      a: ['key(11987654321)'],
      b: ['key(1133330000)', 'key(11987654321)'],
      c: ['key(21999990000)'],
      d: [],
    });
  });

  it('one family document per shared phone: its active children, the guardian by first name, four digits, pass hashes', () => {
    const named = (name: string, phones: string[]) => ({ ...guardian(phones), name });
    const docs = rosterDocs({
      ...base,
      familyKey,
      familyPasses: {
        issuer: 'ISSUER01',
        hashesOf: (key) => ({ pass: `pass(${key})`, revoked: key.includes('98765') ? ['old(1)'] : [] }),
      },
      students: [student('b'), student('a'), student('c'), student('gone', { status: 'DELETED' })],
      adults: new Map([
        ['a', [named('Rita Prado', ['+55 11 98765-4321']), named('João Prado', ['+55 11 98765-4321'])]],
        ['b', [named('Rita P.', ['(11) 98765-4321'])]],
        ['c', [named('Ana Lima', ['21 99999-0000']), { ...guardian(['11 98765-4321'], 'N2'), name: 'Tia' }]],
        ['gone', [named('Rita Prado', ['11 98765-4321'])]],
      ]),
    });
    const families = docs.filter((d) => d.docType === 'rosterFamily');
    expect(families).to.deep.equal([
      {
        _id: 'family:key(11987654321)',
        docType: 'rosterFamily',
        familyKey: 'key(11987654321)',
        guardianName: 'Rita',
        phoneSuffix: '4321',
        studentIds: ['a', 'b'],
        pass: 'pass(key(11987654321))',
        revoked: ['old(1)'],
      },
      {
        _id: 'family:key(21999990000)',
        docType: 'rosterFamily',
        familyKey: 'key(21999990000)',
        guardianName: 'Ana',
        phoneSuffix: '0000',
        studentIds: ['c'],
        pass: 'pass(key(21999990000))',
        revoked: [],
      },
    ]);
    expect(docs.find((d) => d.docType === 'rosterFamilyPasses')).to.deep.equal({
      _id: 'familypasses',
      docType: 'rosterFamilyPasses',
      issuer: 'ISSUER01',
    });
    // Beside the key (a keyed hash on the server; readable here), four digits and first names only.
    const shown = families.map((f) => (f.docType === 'rosterFamily' ? [f.guardianName, f.phoneSuffix] : []));
    expect(JSON.stringify(shown)).not.to.match(/98765|99999|Prado|Lima/);
  });

  it('without passes the roster has no family documents', () => {
    const docs = rosterDocs({
      ...base,
      familyKey,
      students: [student('a')],
      adults: new Map([['a', [guardian(['11 98765-4321'])]]]),
    });
    expect(
      docs.filter((d) => d.docType === 'rosterFamily' || d.docType === 'rosterFamilyPasses'),
    ).to.deep.equal([]);
  });

  it('without a key function the roster names no families', () => {
    const docs = rosterDocs({
      ...base,
      students: [student('a')],
      adults: new Map([['a', [guardian(['11 98765-4321'])]]]),
    });
    expect(docs.find((d) => d.docType === 'rosterStudent')).not.to.have.property('families');
  });
});

describe('admission facts in the roster: what the rule needs offline, and no more', () => {
  const studentDoc = (docs: ReturnType<typeof rosterDocs>, id: string) =>
    docs.find((d) => d.docType === 'rosterStudent' && d.studentId === id);

  it('carries the birth month, never the day, and whether each field is answered, never its value', () => {
    const docs = rosterDocs({
      ...base,
      consentsRecorded: (id) => (id === 'a' ? 2 : 0),
      students: [
        student('a', {
          birthDate: '2019-03-17',
          phones: [{ number: '+55 11 98765-4321', qualifier: 'mãe' }],
          allergies: 'amendoim',
          specialNeeds: 'nenhuma',
        }),
        student('b'),
      ],
    });
    expect(studentDoc(docs, 'a')).to.deep.include({
      admission: {
        birthMonth: '2019-03',
        guardianPhone: true,
        allergiesAnswered: true,
        specialNeedsAnswered: true,
        imageConsentAnswered: true,
      },
    });
    expect(studentDoc(docs, 'b')).to.deep.include({
      admission: {
        birthMonth: null,
        guardianPhone: false,
        allergiesAnswered: false,
        specialNeedsAnswered: false,
        imageConsentAnswered: false,
      },
    });
    const text = JSON.stringify(docs);
    expect(text).not.to.contain('2019-03-17');
    expect(text).not.to.contain('-17');
    expect(text).not.to.contain('98765');
  });

  it('a consent recorded and then revoked still answers the question: the guardian was asked', () => {
    const asked = rosterDocs({ ...base, consentsRecorded: () => 1, students: [student('a')] });
    expect(studentDoc(asked, 'a')).to.have.nested.property('admission.imageConsentAnswered', true);
  });

  it("carries each class's age range, the church's required fields, and volunteers for the sessions counted", () => {
    const docs = rosterDocs({
      ...base,
      classes: [
        { classId: 'c1', name: 'Turma', childrenPerVolunteer: 5, ageRange: { minMonths: 36, maxMonths: 71 } },
        { classId: 'c2', name: 'Berçário' },
      ],
      sessions: [
        { sessionId: 's1', classId: 'c1', date: '2026-11-26', title: null, startsAt: null, endsAt: null },
        { sessionId: 's2', classId: 'c2', date: '2026-11-26', title: null, startsAt: null, endsAt: null },
      ],
      volunteers: new Map([['s1', 2]]),
      requiredFields: ['birthDate', 'imageConsent'],
    });
    const byId = new Map(docs.map((d) => [d._id, d]));
    expect(byId.get('class:c1')).to.deep.include({ ageRange: { minMonths: 36, maxMonths: 71 } });
    expect(byId.get('class:c2')).to.deep.include({ ageRange: null });
    expect(byId.get('session:s1')).to.deep.include({ volunteers: 2 });
    expect(byId.get('session:s2')).not.to.have.property('volunteers');
    expect(byId.get('admission')).to.deep.equal({
      _id: 'admission',
      docType: 'rosterAdmission',
      requiredFields: ['birthDate', 'imageConsent'],
    });
  });
});

describe('deactivated classes and sessions in the roster (0047)', () => {
  const session = (sessionId: string, classId: string, status?: 'ACTIVE' | 'DEACTIVATED') => ({
    sessionId,
    classId,
    date: '2026-11-26',
    title: null,
    startsAt: null,
    endsAt: null,
    ...(status === undefined ? {} : { status }),
  });
  const checkin = (sessionId: string) => ({
    version: 'v1',
    state: {
      kind: 'checkin' as const,
      sessionId,
      studentId: 'a',
      checkins: [
        {
          checkInId: `k-${sessionId}`,
          status: 'CHECKED_IN' as const,
          checkedInAt: '2026-11-26T12:00:00.000Z',
          checkedInBy: 'u1',
          checkedOutAt: null,
          checkedOutBy: null,
          pickupPerson: null,
          emergency: false,
          justification: null,
          visitor: false,
        },
      ],
      ineffective: [],
    },
  });

  it('stay in the roster, marked inactive, with the check-ins of their rooms for the check-outs', () => {
    const docs = rosterDocs({
      ...base,
      students: [student('a')],
      classes: [
        { classId: 'c1', name: 'Turma', status: 'ACTIVE' },
        { classId: 'c2', name: 'Antiga', status: 'DEACTIVATED' },
      ],
      sessions: [session('s1', 'c1', 'DEACTIVATED'), session('s2', 'c2', 'ACTIVE'), session('s3', 'c1')],
      aspects: [checkin('s1'), checkin('s2')],
    });
    const byId = new Map(docs.map((d) => [d._id, d]));
    expect(byId.get('class:c2')).to.deep.include({ active: false });
    expect(byId.get('session:s1')).to.deep.include({ active: false });
    expect(byId.get('checkin:s1:a')).to.deep.include({ sessionId: 's1', studentId: 'a' });
    expect(byId.get('checkin:s2:a')).to.deep.include({ sessionId: 's2', studentId: 'a' });
    // Each says only its own state: a session of a deactivated class is closed by its class.
    expect(byId.get('session:s2')).not.to.have.property('active');
  });

  it('an active or older record carries no flag, so the roster of a church that deactivates nothing is unchanged', () => {
    const before = rosterDocs({
      ...base,
      classes: [{ classId: 'c1', name: 'Turma' }],
      sessions: [session('s1', 'c1')],
    });
    const after = rosterDocs({
      ...base,
      classes: [{ classId: 'c1', name: 'Turma', status: 'ACTIVE' }],
      sessions: [session('s1', 'c1', 'ACTIVE')],
    });
    expect(after).to.deep.equal(before);
    for (const d of after) expect(d).not.to.have.property('active');
  });
});
