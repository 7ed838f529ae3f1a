import { expect } from 'chai';
import {
  AdmissionItem,
  type AttendanceRow,
  type ConflictItem,
  type PageItem,
} from '../../src/kiosk/app/adminApi.js';
import {
  addDays,
  adminHash,
  adminRoute,
  attendanceLines,
  attendanceTable,
  attendanceTotals,
  conflictLines,
  conflictsTable,
  exceptionLines,
  isDay,
  localDayBounds,
  type Names,
  pageLines,
  pagesTable,
  policyRefusalOf,
  unnamedStudents,
  withOffset,
} from '../../src/kiosk/app/adminModel.js';
import { toCsv } from '../../src/kiosk/app/csv.js';

const side = (over: Partial<ConflictItem['winner']>): ConflictItem['winner'] => ({
  eventId: 'e',
  userId: 'u-admin',
  role: 'ADMIN',
  deviceId: 'dev-a',
  clientTimestamp: '2026-11-26T22:02:00.000Z',
  serverTimestamp: '2026-11-26T22:10:00.000Z',
  change: { type: 'EMERGENCY_CHECKOUT', checkInId: 'c1' },
  ...over,
});

const conflict = (loserEventId: string, detectedAt: string, subjectId = 'kid-1'): ConflictItem => ({
  aspect: `checkin:s1:${subjectId}`,
  kind: 'checkin',
  subjectId,
  policy: 'ADMIN_PRECEDENCE',
  winner: side({ eventId: `w-${loserEventId}` }),
  loser: side({
    eventId: loserEventId,
    userId: 'u-door',
    role: 'CHAMADOR',
    deviceId: 'dev-b',
    clientTimestamp: '2026-11-26T22:05:00.000Z',
    change: { type: 'CHECK_OUT', checkInId: 'c1' },
  }),
  detectedAt,
});

const names = (over: Partial<Names> = {}): Names => ({
  students: new Map([['kid-1', 'Luíza Gonçalves']]),
  users: new Map([['u-admin', 'Administrador']]),
  classes: new Map([['class-1', 'Turma Arco-Íris']]),
  sessions: new Map([
    [
      's1',
      { sessionId: 's1', classId: 'class-1', date: '2026-11-26', title: 'Culto da noite', startsAt: null },
    ],
  ]),
  ...over,
});

describe("kiosk: the admins' view as data", () => {
  it('routes #/admin to the conflicts, and each tab to itself', () => {
    expect(adminRoute('#/admin')).to.equal('conflicts');
    expect(adminRoute('#/admin/')).to.equal('conflicts');
    expect(adminRoute(adminHash('conflicts'))).to.equal('conflicts');
    expect(adminRoute(adminHash('attendance'))).to.equal('attendance');
    expect(adminRoute(adminHash('pages'))).to.equal('pages');
    for (const other of ['', '#', '#/administrator', '#/admin/users', '#admin', '#/admin/attendance/x']) {
      expect(adminRoute(other), other).to.equal(undefined);
    }
  });

  it('reads calendar days and steps across months and years', () => {
    expect(isDay('2026-11-26')).to.equal(true);
    expect(isDay('2026-02-30')).to.equal(false);
    expect(isDay('26/11/2026')).to.equal(false);
    expect(addDays('2026-12-31', 1)).to.equal('2027-01-01');
    expect(addDays('2026-03-01', -1)).to.equal('2026-02-28');
  });

  it("bounds the day by the tablet's own midnights", () => {
    const before = process.env.TZ;
    try {
      process.env.TZ = 'America/Sao_Paulo';
      expect(localDayBounds('2026-11-26')).to.deep.equal({
        from: '2026-11-26T03:00:00.000Z',
        to: '2026-11-27T03:00:00.000Z',
      });
      process.env.TZ = 'Asia/Tokyo';
      expect(localDayBounds('2026-11-26')).to.deep.equal({
        from: '2026-11-25T15:00:00.000Z',
        to: '2026-11-26T15:00:00.000Z',
      });
    } finally {
      if (before === undefined) delete process.env.TZ;
      else process.env.TZ = before;
    }
  });

  it('writes instants as the wall clock read them, with the offset', () => {
    expect(withOffset('2026-11-27T00:30:00.000Z', -180)).to.equal('2026-11-26T21:30:00.000-03:00');
    expect(withOffset('2026-11-26T10:00:00.250Z', 330)).to.equal('2026-11-26T15:30:00.250+05:30');
    expect(withOffset('2026-11-26T10:00:00.000Z', -210)).to.equal('2026-11-26T06:30:00.000-03:30');
    expect(withOffset('2026-11-26T10:00:00.000Z', 0)).to.equal('2026-11-26T10:00:00.000+00:00');
  });

  it('names both sides of a conflict, marks this tablet, and lists the newest first', () => {
    const lines = conflictLines(
      [conflict('l-old', '2026-11-26T22:10:00.000Z'), conflict('l-new', '2026-11-26T23:00:00.000Z', 'kid-2')],
      names(),
      'dev-b',
    );
    expect(lines.map((l) => l.loser.eventId)).to.deep.equal(['l-new', 'l-old']);
    const [, old] = lines;
    expect(old?.child).to.equal('Luíza Gonçalves');
    expect(lines[0]?.child).to.equal(null);
    expect(old?.winner).to.include({
      userName: 'Administrador',
      role: 'ADMIN',
      deviceId: 'dev-a',
      thisDevice: false,
      change: 'EMERGENCY_CHECKOUT',
    });
    // A RELATORIOS tablet cannot list users: the id stays, the name is unknown.
    expect(old?.loser).to.include({
      userName: null,
      userId: 'u-door',
      thisDevice: true,
      change: 'CHECK_OUT',
    });
    expect(
      unnamedStudents(
        [conflict('a', 'x'), conflict('b', 'y', 'kid-2'), conflict('c', 'z', 'kid-2')],
        names().students,
      ),
    ).to.deep.equal(['kid-2']);
  });

  it('puts both sides of each conflict on one CSV line, neutralising names', () => {
    const evil = names({ students: new Map([['kid-1', '=HYPERLINK("http://x","y")']]) });
    const table = conflictsTable(
      conflictLines([conflict('l1', '2026-11-26T22:10:00.000Z')], evil, 'dev-b'),
      (iso) => `local:${iso}`,
    );
    expect(table.header.slice(0, 6)).to.deep.equal([
      'detectedAt',
      'studentId',
      'child',
      'kind',
      'aspect',
      'policy',
    ]);
    expect(table.header).to.include.members([
      'winner.role',
      'winner.deviceId',
      'loser.role',
      'loser.deviceId',
    ]);
    const row = table.rows[0] ?? [];
    const cell = (name: string) => row[table.header.indexOf(name)];
    expect(row).to.have.length(table.header.length);
    expect(cell('policy')).to.equal('ADMIN_PRECEDENCE');
    expect(cell('winner.role')).to.equal('ADMIN');
    expect(cell('winner.deviceId')).to.equal('dev-a');
    expect(cell('winner.userName')).to.equal('Administrador');
    expect(cell('loser.role')).to.equal('CHAMADOR');
    expect(cell('loser.deviceId')).to.equal('dev-b');
    expect(cell('loser.eventId')).to.equal('l1');
    expect(cell('loser.clientTimestamp')).to.equal('local:2026-11-26T22:05:00.000Z');
    const csv = toCsv(table.header, table.rows);
    expect(csv).to.contain(`"'=HYPERLINK(""http://x"",""y"")"`);
    expect(csv).not.to.contain(',"=HYPERLINK');
  });

  const row = (over: Partial<AttendanceRow>): AttendanceRow => ({
    date: '2026-11-26',
    sessionId: 's1',
    classId: 'class-1',
    studentId: 'kid-1',
    displayName: 'Luíza Gonçalves',
    mark: null,
    markedAt: null,
    checkedInAt: '2026-11-26T22:00:00.000Z',
    checkedOutAt: '2026-11-27T00:30:00.000Z',
    present: true,
    ...over,
  });

  it("keeps the day's rows (a session's late check-ins included), sorted, with totals", () => {
    const lines = attendanceLines(
      [
        row({}),
        row({ studentId: 'kid-3', displayName: 'Ana Lúcia', checkedOutAt: null }),
        row({
          studentId: 'kid-4',
          displayName: 'Bruno',
          checkedInAt: null,
          checkedOutAt: null,
          mark: 'ABSENT',
          present: false,
        }),
        row({ date: '2026-11-25', studentId: 'kid-9', displayName: 'Ontem' }),
        row({ date: '2026-11-27', studentId: 'kid-8', displayName: 'Amanhã' }),
        row({ studentId: 'kid-5', displayName: null, sessionId: null, classId: null }),
      ],
      '2026-11-26',
      names({ students: new Map([['kid-5', 'Do roster']]) }),
    );
    expect(lines.map((l) => l.child)).to.deep.equal(['Do roster', 'Ana Lúcia', 'Bruno', 'Luíza Gonçalves']);
    expect(lines[1]).to.include({ className: 'Turma Arco-Íris', sessionTitle: 'Culto da noite' });
    expect(attendanceTotals(lines)).to.deep.equal({ rows: 4, present: 3, absent: 1 });
    const table = attendanceTable('2026-11-26', lines, (iso) => `local:${iso}`);
    expect(table.header).to.deep.equal([
      'date',
      'class',
      'session',
      'sessionId',
      'studentId',
      'child',
      'present',
      'mark',
      'markedAt',
      'checkedInAt',
      'checkedOutAt',
    ]);
    expect(table.rows[3]).to.deep.equal([
      '2026-11-26',
      'Turma Arco-Íris',
      'Culto da noite',
      's1',
      'kid-1',
      'Luíza Gonçalves',
      'true',
      '',
      '',
      'local:2026-11-26T22:00:00.000Z',
      'local:2026-11-27T00:30:00.000Z',
    ]);
  });

  it("lists the day's pages oldest first with names, and their CSV rows carry no phone", () => {
    const item = (pageId: string, sentAt: string, message: string | null): PageItem => ({
      pageId,
      studentId: 'kid-1',
      sessionId: 's1',
      message,
      sentAt,
      sentBy: 'u-admin',
      deviceId: 'dev-a',
      phonesPaged: 2,
      phonesFailed: 0,
    });
    const lines = pageLines(
      [item('p2', '2026-11-26T22:09:00.000Z', null), item('p1', '2026-11-26T22:01:00.000Z', 'Venha.')],
      names(),
    );
    expect(lines.map((l) => [l.pageId, l.child, l.className, l.sessionTitle, l.sentByName])).to.deep.equal([
      ['p1', 'Luíza Gonçalves', 'Turma Arco-Íris', 'Culto da noite', 'Administrador'],
      ['p2', 'Luíza Gonçalves', 'Turma Arco-Íris', 'Culto da noite', 'Administrador'],
    ]);
    const table = pagesTable(lines, (iso) => `local:${iso}`);
    expect(table.rows[0]).to.deep.equal([
      'local:2026-11-26T22:01:00.000Z',
      'kid-1',
      'Luíza Gonçalves',
      'Turma Arco-Íris',
      'Culto da noite',
      's1',
      'u-admin',
      'Administrador',
      'dev-a',
      'Venha.',
      '2',
      '0',
    ]);
    expect(table.rows[1]?.[9]).to.equal('');
  });
});

describe("kiosk: the admission rule's exceptions in the admins' view", () => {
  // As the server's conflict report lists one (src/domain/projection.ts, AdmissionException).
  const exception = (eventId: string, detectedAt: string, subjectId = 'kid-1', refusals: unknown[] = []) => ({
    aspect: `checkin:s1:${subjectId}`,
    kind: 'checkin',
    subjectId,
    policy: 'ADMISSION_RULE',
    reason: 'ROOM_FULL',
    refusals: [{ reason: 'ROOM_FULL', checkedIn: 8, capacity: 8 }, ...refusals],
    event: side({
      eventId,
      userId: 'u-door',
      role: 'CHAMADOR',
      deviceId: 'dev-b',
      clientTimestamp: '2026-11-26T22:05:00.000Z',
      change: { type: 'CHECK_IN', checkInId: 'c9' },
    }),
    detectedAt,
  });
  const decoded = (x: unknown): AdmissionItem => {
    if (!AdmissionItem.is(x)) throw new Error('not an admission item');
    return x;
  };

  it('are read from the conflict report, and a conflict is not taken for one', () => {
    expect(AdmissionItem.is(exception('e1', '2026-11-26T22:10:00.000Z'))).to.equal(true);
    expect(AdmissionItem.is(conflict('l1', '2026-11-26T22:10:00.000Z'))).to.equal(false);
  });

  it('name the child, who checked them in on which device and when, newest first', () => {
    const lines = exceptionLines(
      [
        decoded(exception('e-old', '2026-11-26T22:10:00.000Z')),
        decoded(exception('e-new', '2026-11-26T23:00:00.000Z', 'kid-2')),
      ],
      names({ users: new Map([['u-door', 'Beatriz (porta)']]) }),
      'dev-b',
    );
    expect(lines.map((l) => [l.checkIn.eventId, l.child])).to.deep.equal([
      ['e-new', null],
      ['e-old', 'Luíza Gonçalves'],
    ]);
    expect(lines[1]?.checkIn).to.include({
      userName: 'Beatriz (porta)',
      role: 'CHAMADOR',
      deviceId: 'dev-b',
      thisDevice: true,
      change: 'CHECK_IN',
      clientTimestamp: '2026-11-26T22:05:00.000Z',
    });
    expect(lines[1]?.refusals).to.deep.equal([
      { code: 'ROOM_FULL', refusal: { reason: 'ROOM_FULL', checkedIn: 8, capacity: 8 } },
    ]);
    expect(
      unnamedStudents([...lines.map((l) => ({ subjectId: l.studentId }))], names().students),
    ).to.deep.equal(['kid-2']);
  });

  it('state each refusal as the rule does when its facts are there, else keep only its code', () => {
    expect(
      policyRefusalOf({ reason: 'RATIO_EXCEEDED', checkedIn: 6, volunteers: 1, childrenPerVolunteer: 6 }),
    ).to.deep.equal({ reason: 'RATIO_EXCEEDED', checkedIn: 6, volunteers: 1, childrenPerVolunteer: 6 });
    expect(
      policyRefusalOf({ reason: 'AGE_OUT_OF_RANGE', ageMonths: 80, ageRange: { maxMonths: 71 } }),
    ).to.deep.equal({
      reason: 'AGE_OUT_OF_RANGE',
      ageMonths: 80,
      ageRange: { maxMonths: 71 },
    });
    expect(
      policyRefusalOf({ reason: 'RECORD_INCOMPLETE', missing: ['birthDate', 'allergies'] }),
    ).to.deep.equal({
      reason: 'RECORD_INCOMPLETE',
      missing: ['birthDate', 'allergies'],
    });
    // Facts missing, a field or a reason a newer server adds: shown by code rather than misstated.
    expect(policyRefusalOf({ reason: 'ROOM_FULL', checkedIn: 3 })).to.equal(null);
    expect(policyRefusalOf({ reason: 'RECORD_INCOMPLETE', missing: ['shoeSize'] })).to.equal(null);
    expect(policyRefusalOf({ reason: 'MOON_PHASE' })).to.equal(null);
  });

  it("go in the conflicts' CSV after the conflicts: the check-in kept as the winner, no loser, and the rules it broke", () => {
    const kept = exceptionLines(
      [decoded(exception('e1', '2026-11-26T22:10:00.000Z', 'kid-1', [{ reason: 'RATIO_EXCEEDED' }]))],
      names(),
      'dev-a',
    );
    const table = conflictsTable(
      conflictLines([conflict('l1', '2026-11-26T22:12:00.000Z')], names(), 'dev-a'),
      (iso) => `local:${iso}`,
      kept,
    );
    const [conflictRow = [], exceptionRow = []] = table.rows;
    const cell = (row: ReadonlyArray<string>, name: string) => row[table.header.indexOf(name)];
    expect(table.rows).to.have.length(2);
    expect(exceptionRow).to.have.length(table.header.length);
    expect(cell(conflictRow, 'refusals')).to.equal('');
    expect(cell(exceptionRow, 'policy')).to.equal('ADMISSION_RULE');
    expect(cell(exceptionRow, 'child')).to.equal('Luíza Gonçalves');
    expect(cell(exceptionRow, 'winner.role')).to.equal('CHAMADOR');
    expect(cell(exceptionRow, 'winner.eventId')).to.equal('e1');
    expect(cell(exceptionRow, 'winner.clientTimestamp')).to.equal('local:2026-11-26T22:05:00.000Z');
    expect(cell(exceptionRow, 'loser.eventId')).to.equal('');
    expect(cell(exceptionRow, 'refusals')).to.equal('ROOM_FULL RATIO_EXCEEDED');
  });
});
