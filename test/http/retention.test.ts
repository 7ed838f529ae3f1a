/**
 * Retention under the LGPD (decision 0045), black-box: the ADMIN's periods, the preview, the runs of
 * the job (at start, and as the daily run does), and what is left of a child, a check-in, a page and
 * an audit entry once their periods are over. Time is the service's clock, moved forward by the test.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import * as t from 'io-ts';
import { RetentionConfig, RetentionPreview } from '../../src/domain/retention.js';
import { type CouchServer, couchServerLabel, startCouchServer } from '../support/couchServer.js';
import { harnessOf, TOKENS, useService } from '../support/harness.js';
import { call, decodeAs, expectEnvelope, issuePaths } from '../support/http.js';
import { uploadTestPhoto } from '../support/photo.js';
import { createdId } from '../support/seed.js';
import { makeTempDir, removeDir } from '../support/tempDir.js';
import { authHeaders, mutationHeaders, startTestService, type TestService } from '../support/testService.js';

const DAY = 86_400_000;
const ADMIN: string = TOKENS.ADMIN;

const StudentRead = t.type({ displayName: t.string, status: t.string });
const ExportC = t.type({
  student: t.record(t.string, t.unknown),
  imageConsents: t.array(t.type({ granted_by_name: t.string })),
  events: t.array(t.type({ type: t.string, payload: t.record(t.string, t.unknown) })),
  auditEntries: t.array(t.type({ subject_id: t.union([t.string, t.null]), endpoint: t.string })),
  checkIns: t.array(t.record(t.string, t.unknown)),
  pickupEntries: t.array(t.unknown),
  photo: t.union([t.null, t.unknown]),
});
const Report = t.type({
  rows: t.array(
    t.type({ studentId: t.string, displayName: t.union([t.string, t.null]), present: t.boolean }),
  ),
});
const AuditItems = t.type({
  items: t.array(
    t.type({
      endpoint: t.string,
      outcome: t.string,
      action: t.string,
      subject_id: t.union([t.string, t.null]),
      details: t.record(t.string, t.unknown),
    }),
  ),
});

/** A clock the test moves forward; the service reads "now" from it. */
const movableClock = () => {
  let offset = 0;
  return {
    now: () => new Date(Date.now() + offset),
    forward: (days: number) => {
      offset += days * DAY;
    },
  };
};

/**
 * The audit entries of the retention job (newest first), once there are `runs` of them: the run a
 * service makes as it starts is under way while it already answers.
 */
const untilStartRunAudited = async (url: string, runs = 1) => {
  for (let i = 0; i < 400; i += 1) {
    const r = await call(
      `${url}/api/v1/audit-logs?endpoint=${encodeURIComponent('JOB /retention')}&limit=10`,
      {
        headers: authHeaders(ADMIN),
      },
    );
    const items = decodeAs(AuditItems, r.json).items;
    if (items.length >= runs) return items;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('the start-up run left no audit entry in 20 s');
};

/** Every document of every database, as text: what must no longer hold a name anywhere. */
const everything = async (svc: TestService): Promise<string> => {
  const out: string[] = [];
  for (const db of Object.values(svc.store.db)) {
    const all = await db.allDocs({ include_docs: true });
    out.push(JSON.stringify(all.rows.map((r) => r.doc)));
  }
  return out.join('\n');
};

/** Where the service keeps its store: the embedded one, or a CouchDB server (a prefix per test). */
const backends: ReadonlyArray<{ readonly name: string; readonly couch: boolean }> = [
  { name: 'embedded leveldb', couch: false },
  { name: couchServerLabel(), couch: true },
];

for (const backend of backends)
  describe(`retention (LGPD): the periods, the preview and the runs, on ${backend.name}`, function () {
    this.timeout(120_000);
    let clock: ReturnType<typeof movableClock>;
    let couch: CouchServer | undefined;
    before(async () => {
      if (backend.couch) couch = await startCouchServer();
    });
    after(() => couch?.dispose());
    const h = useService(() => {
      clock = movableClock();
      return {
        clock: clock.now,
        ...(couch === undefined
          ? {}
          : { env: { COUCHDB_URL: couch.url, DB_PREFIX: `r${randomUUID().replaceAll('-', '')}_` } }),
      };
    }, 'test');
    const { get } = h.as(ADMIN);
    const { send } = h.as(ADMIN);
    const preview = async () => {
      const r = await get('/api/v1/retention/preview');
      expect(r.status, r.text).to.equal(200);
      return decodeAs(RetentionPreview, r.json);
    };
    const periods = { deletedStudentDays: 1, attendanceDays: 30, pageDays: 1, auditDays: 365 };

    // The routes and their checks are the same on every backend: once is enough.
    if (!backend.couch)
      it('the periods are ADMIN only, with defaults and the legal basis of each; bad periods are 400 naming each', async () => {
        const defaults = decodeAs(RetentionConfig, (await get('/api/v1/church/retention')).json);
        expect(defaults).to.deep.include({
          deletedStudentDays: 30,
          attendanceDays: 1825,
          pageDays: 90,
          auditDays: 1825,
          idempotencyHours: 24,
          updatedAt: null,
        });
        expect(defaults.periods.map((p) => [p.setting, p.ends])).to.deep.equal([
          ['deletedStudentDays', 'ANONYMISED'],
          ['attendanceDays', 'DELETED'],
          ['pageDays', 'DELETED'],
          ['auditDays', 'SUBJECTS_ANONYMISED'],
        ]);
        for (const p of defaults.periods) expect(p.legalBasis).to.match(/LGPD art/);

        for (const token of [TOKENS.CHAMADOR, TOKENS.CADASTRO, TOKENS.RELATORIOS]) {
          expectEnvelope(await get('/api/v1/church/retention', token), 403, 'FORBIDDEN_ROLE');
          expectEnvelope(await get('/api/v1/retention/preview', token), 403, 'FORBIDDEN_ROLE');
          expectEnvelope(
            await send('PUT', '/api/v1/church/retention', periods, token),
            403,
            'FORBIDDEN_ROLE',
          );
        }

        const absurd = { deletedStudentDays: 0, attendanceDays: 7, pageDays: 1.5, auditDays: 100_000 };
        expect(
          issuePaths(
            expectEnvelope(await send('PUT', '/api/v1/church/retention', absurd), 400, 'VALIDATION_FAILED'),
          ),
        ).to.have.members([
          'body.deletedStudentDays',
          'body.attendanceDays',
          'body.pageDays',
          'body.auditDays',
        ]);
        for (const body of [
          { ...periods, attendanceDays: '30' },
          { ...periods, attendanceDays: -30 },
          { ...periods, forever: true },
          { deletedStudentDays: 30 },
        ])
          expectEnvelope(await send('PUT', '/api/v1/church/retention', body), 400, 'VALIDATION_FAILED');
        expect(decodeAs(RetentionConfig, (await get('/api/v1/church/retention')).json).updatedAt).to.equal(
          null,
        );

        const key = randomUUID();
        const put = () =>
          call(`${h.url}/api/v1/church/retention`, {
            method: 'PUT',
            headers: mutationHeaders(ADMIN, key),
            body: JSON.stringify(periods),
          });
        const first = await put();
        expect(first.status, first.text).to.equal(200);
        expect(decodeAs(RetentionConfig, first.json)).to.deep.include(periods);
        const replay = await put();
        expect(replay.headers.get('idempotent-replayed')).to.equal('true');
        expect(replay.json).to.deep.equal(first.json);
        const stored = decodeAs(RetentionConfig, (await get('/api/v1/church/retention')).json);
        expect(stored).to.deep.include(periods);
        expect(stored.updatedAt).to.be.a('string');

        const audit = decodeAs(
          AuditItems,
          (await get(`/api/v1/audit-logs?endpoint=${encodeURIComponent('PUT /api/v1/church/retention')}`))
            .json,
        );
        // The change with the periods set; its replay names the request it replays.
        expect(audit.items.filter((i) => i.outcome === 'SUCCESS').map((i) => i.details)).to.deep.equal([
          {
            status: 200,
            deviceId: authHeaders(ADMIN)['X-Device-Id'],
            replayOf: first.headers.get('x-correlation-id'),
          },
          { ...periods, status: 200, deviceId: authHeaders(ADMIN)['X-Device-Id'] },
        ]);
      });

    it('preview, run, preview empty: a deleted child anonymised, the check-ins, marks and pages past their periods deleted, old audit entries without their subjects', async () => {
      const today = clock.now().toISOString().slice(0, 10);
      const classId = await createdId(h.url, '/api/v1/classes', { name: 'Turma' }, 'classId');
      const sessionId = await createdId(h.url, '/api/v1/sessions', { classId, date: today }, 'sessionId');
      const student = (displayName: string, allergies: string | null) =>
        createdId(
          h.url,
          '/api/v1/students',
          {
            displayName,
            guardianName: 'Cláudia Guardiã',
            phones: [{ number: '+55 11 5555-0101', qualifier: 'mãe' }],
            classId,
            allergies,
          },
          'studentId',
        );
      const ana = await student('Ana Apagada', 'Amendoim raro');
      const bruno = await student('Bruno Ativo', null);
      // A photo under a consent, then a check-in, a page to the guardians and a check-out by an adult.
      const consent = await send('POST', '/api/v1/image-consents', {
        subject_type: 'STUDENT',
        subject_id: ana,
        term_version: '2026-01',
        purpose: 'Identificar a criança na entrega',
        term_text: 'Autorizo o uso da foto.',
        granted_by_name: 'Cláudia Guardiã',
        relationship: 'mãe',
        verification_method: 'VERIFIED_GUARDIAN_PRESENT',
      });
      expect(consent.status, consent.text).to.equal(201);
      await uploadTestPhoto(h.url, ana, authHeaders(ADMIN));
      const checkedIn = await send('POST', '/api/v1/check-in', { studentId: ana, sessionId });
      expect(checkedIn.status, checkedIn.text).to.equal(201);
      const { checkInId, code } = decodeAs(t.type({ checkInId: t.string, code: t.string }), checkedIn.json);
      const paged = await send('POST', `/api/v1/check-ins/${checkInId}/page`, {
        message: 'Cláudia, venha à sala',
      });
      expect(paged.status, paged.text).to.equal(201);
      const { pageId } = decodeAs(t.type({ pageId: t.string }), paged.json);
      const out = await send('POST', '/api/v1/check-out', {
        checkInId,
        code,
        pickupPerson: 'Tio Adulto Buscador',
      });
      expect(out.status, out.text).to.equal(200);
      const markEventId = randomUUID();
      const mark = await send('POST', '/api/v1/sync/events', {
        events: [
          {
            eventId: markEventId,
            type: 'MARK_PRESENT',
            studentId: bruno,
            sessionId,
            clientTimestamp: clock.now().toISOString(),
          },
        ],
      });
      expect(mark.status, mark.text).to.equal(200);
      await h.svc.deps.sync.pipeline.catchUp();

      // The photo goes at the deletion itself; the rest waits for the period.
      const deleted = await send('POST', `/api/v1/students/${ana}/delete`, {
        justification: 'A família mudou-se e pediu a exclusão',
      });
      expect(deleted.status, deleted.text).to.equal(200);
      expect(deleted.json).to.deep.include({ photoRef: null, photo_refs: [], status: 'DELETED' });
      expect((await get(`/api/v1/students/${ana}/photo`)).status).to.be.oneOf([404, 409]);
      const exportOf = async (id: string) => {
        const r = await get(`/api/v1/students/${id}/export`);
        expect(r.status, r.text).to.equal(200);
        return { text: r.text, body: decodeAs(ExportC, r.json) };
      };
      const before = await exportOf(ana);
      expect(before.body.photo).to.equal(null);
      expect(before.text).to.contain('Cláudia Guardiã').and.to.contain('Tio Adulto Buscador');
      expect(before.body.student).to.include({ displayName: 'Ana Apagada', allergies: 'Amendoim raro' });

      expect((await send('PUT', '/api/v1/church/retention', periods)).status).to.equal(200);
      const nothingYet = await preview();
      expect(nothingYet.studentsAnonymised).to.deep.equal({ count: 0, ids: [] });
      expect(nothingYet.photosErased.count).to.equal(0);
      expect(nothingYet.pagesDeleted.count).to.equal(0);

      // Two days on: the deletion and the page are past their periods.
      clock.forward(2);
      const due = await preview();
      expect(due.periods).to.deep.equal(periods);
      expect(due.studentsAnonymised).to.deep.equal({ count: 1, ids: [ana] });
      expect(due.pagesDeleted).to.deep.equal({ count: 1, ids: [pageId] });
      expect(due.checkInsDeleted.count).to.equal(0);
      expect(due.marksDeleted.count).to.equal(0);
      expect(JSON.stringify(due)).not.to.contain('Ana Apagada');
      const { idempotencyRecordsDeleted, ...ended } = await h.svc.deps.registration.retention.run();
      expect(ended).to.deep.equal({
        studentsAnonymised: 1,
        photosErased: 0,
        checkInsDeleted: 0,
        marksDeleted: 0,
        pagesDeleted: 1,
        auditEntriesAnonymised: 0,
      });
      // The responses kept for retries (the child's record among them) are past their 24 hours too.
      expect(idempotencyRecordsDeleted).to.be.greaterThan(0);
      const after = await preview();
      expect([after.studentsAnonymised, after.pagesDeleted]).to.deep.equal([
        { count: 0, ids: [] },
        { count: 0, ids: [] },
      ]);

      // What is left of the child: the id and what the reports count; the export says so.
      const left = await exportOf(ana);
      expect(left.body.student).to.include({
        studentId: ana,
        classId,
        status: 'DELETED',
        displayName: '[anonymised]',
        guardianName: '[anonymised]',
        allergies: null,
      });
      expect(left.body.student.anonymisedAt).to.be.a('string');
      expect(left.body.student.phones).to.deep.equal([]);
      expect(left.body.imageConsents.map((c) => c.granted_by_name)).to.deep.equal(['[anonymised]']);
      expect(left.body.checkIns.map((c) => c.pickupPerson)).to.deep.equal([null]);
      expect(left.body.events.map((e) => e.type)).to.include.members([
        'CHECK_IN',
        'CHECK_OUT',
        'SOFT_DELETE',
      ]);
      expect(left.body.auditEntries.length).to.be.greaterThan(0);
      for (const name of [
        'Ana Apagada',
        'Cláudia Guardiã',
        'Tio Adulto Buscador',
        'Amendoim raro',
        '5555-0101',
      ])
        expect(left.text, name).not.to.contain(name);
      await h.svc.deps.replication.reconciler.refresh();
      const stored = await everything(h.svc);
      for (const name of ['Ana Apagada', 'Tio Adulto Buscador', 'Amendoim raro', 'venha à sala'])
        expect(stored, name).not.to.contain(name);
      // The active child's guardian shares the name: still there, on Bruno's record.
      expect(stored).to.contain('Bruno Ativo');
      expect(decodeAs(StudentRead, (await get(`/api/v1/students/${ana}`)).json).displayName).to.equal(
        '[anonymised]',
      );
      // The check-in still counts in the day's report.
      const day = decodeAs(Report, (await get(`/api/v1/reports/attendance?from=${today}&to=${today}`)).json);
      expect(day.rows.map((r) => [r.studentId, r.displayName, r.present])).to.have.deep.members([
        [ana, '[anonymised]', true],
        [bruno, 'Bruno Ativo', true],
      ]);

      // Past the attendance period: the check-in and the mark go, events and projections with them.
      clock.forward(40);
      const old = await preview();
      expect(old.checkInsDeleted).to.deep.equal({ count: 1, ids: [checkInId] });
      expect(old.marksDeleted).to.deep.equal({ count: 1, ids: [`attendance:${bruno}:${sessionId}`] });
      const ran = await h.svc.deps.registration.retention.run();
      expect([ran.checkInsDeleted, ran.marksDeleted]).to.deep.equal([1, 1]);
      const emptied = await preview();
      expect([emptied.checkInsDeleted.count, emptied.marksDeleted.count]).to.deep.equal([0, 0]);
      const gone = decodeAs(Report, (await get(`/api/v1/reports/attendance?from=${today}&to=${today}`)).json);
      expect(gone.rows).to.deep.equal([]);
      expect((await exportOf(ana)).body.checkIns).to.deep.equal([]);
      expect((await exportOf(bruno)).body.events.filter((e) => e.type === 'MARK_PRESENT')).to.deep.equal([]);
      expect(await everything(h.svc)).not.to.contain(checkInId);
      // A tablet that replicates from the start again (after a restore) is told the retired mark is
      // held, so it does not push it back; an event the server never had is still asked for.
      const unknown = `event:${randomUUID()}`;
      const diff = await fetch(`${h.url}/api/v1/replication/events/_revs_diff`, {
        method: 'POST',
        headers: { ...authHeaders(ADMIN), 'Content-Type': 'application/json' },
        body: JSON.stringify({ [`event:${markEventId}`]: ['1-a'], [unknown]: ['1-b'] }),
      });
      expect(diff.status).to.equal(200);
      expect(await diff.json()).to.deep.equal({ [unknown]: { missing: ['1-b'] } });

      // Past the audit period: the entries of those days are kept, without their subjects.
      clock.forward(400);
      const audits = await preview();
      expect(audits.auditEntriesAnonymised.count).to.be.greaterThan(0);
      const ranAudit = await h.svc.deps.registration.retention.run();
      expect(ranAudit.auditEntriesAnonymised).to.equal(audits.auditEntriesAnonymised.count);
      expect((await preview()).auditEntriesAnonymised.count).to.equal(0);
      const ofAna = decodeAs(AuditItems, (await get(`/api/v1/audit-logs?subjectId=${ana}&limit=200`)).json);
      expect(ofAna.items).to.deep.equal([]);
      const deletions = decodeAs(
        AuditItems,
        (
          await get(
            `/api/v1/audit-logs?endpoint=${encodeURIComponent('POST /api/v1/students/{studentId}/delete')}`,
          )
        ).json,
      );
      expect(deletions.items.map((i) => [i.subject_id, i.outcome, i.details.status])).to.deep.equal([
        [null, 'SUCCESS', 200],
      ]);
      expect(deletions.items[0]?.details.anonymisedAt).to.be.a('string');
      expect(deletions.items[0]?.details).not.to.have.property('deviceId');
      // Nothing of this went past the pipeline unread: no event quarantined, no warning logged.
      const quarantined = await h.svc.store.db.projections.allDocs({
        startkey: 'quarantine:',
        endkey: 'quarantine:\ufff0',
      });
      expect(quarantined.rows).to.deep.equal([]);
      // (The kiosk and office bundles are not built for these tests: their warnings name a path.)
      expect(h.svc.logLines().filter((l) => Number(l.level) >= 40 && l.path === undefined)).to.deep.equal([]);
    });

    if (!backend.couch)
      it('the run the service makes as it starts leaves one audit entry, with its counts and nothing else', async () => {
        const runs = await untilStartRunAudited(h.url);
        expect(runs.length).to.equal(1);
        for (const entry of runs) {
          expect(entry).to.deep.include({ outcome: 'SUCCESS', action: 'MUTATION', subject_id: null });
          expect(Object.keys(entry.details).sort()).to.deep.equal([
            'auditEntriesAnonymised',
            'checkInsDeleted',
            'idempotencyRecordsDeleted',
            'marksDeleted',
            'pagesDeleted',
            'photosErased',
            'studentsAnonymised',
          ]);
        }
      });
  });

describe('retention at start: a restored store is brought within the periods', function () {
  this.timeout(120_000);
  it('a service started later on the same data applies the periods before anything else reads them', async () => {
    const dataDir = await makeTempDir('retention-restart');
    const clock = movableClock();
    try {
      const first = await startTestService({ clock: clock.now, env: { DATA_DIR: dataDir } });
      const h = harnessOf(() => first);
      let studentId: string;
      try {
        // Its own start-up run first, so the two starts leave an entry each.
        await untilStartRunAudited(first.url, 1);
        const classId = await createdId(first.url, '/api/v1/classes', { name: 'Turma' }, 'classId');
        studentId = await createdId(
          first.url,
          '/api/v1/students',
          { displayName: 'Davi Restaurado', guardianName: 'Rute', phones: [], classId },
          'studentId',
        );
        const put = await h.send('PUT', '/api/v1/church/retention', {
          deletedStudentDays: 1,
          attendanceDays: 1825,
          pageDays: 90,
          auditDays: 1825,
        });
        expect(put.status, put.text).to.equal(200);
        const del = await h.send('POST', `/api/v1/students/${studentId}/delete`, {
          justification: 'Pedido da família, por escrito',
        });
        expect(del.status, del.text).to.equal(200);
      } finally {
        await first.dispose();
      }
      clock.forward(3);
      const second = await startTestService({ clock: clock.now, env: { DATA_DIR: dataDir } });
      try {
        // The start-up run is under way as the service answers; its audit entry says it is done.
        // One entry by each start: the second's, newest, anonymised the child.
        const [run] = await untilStartRunAudited(second.url, 2);
        expect(run?.details).to.include({ studentsAnonymised: 1 });
        const r = await call(`${second.url}/api/v1/students/${studentId}`, { headers: authHeaders(ADMIN) });
        expect(decodeAs(StudentRead, r.json)).to.deep.include({
          displayName: '[anonymised]',
          status: 'DELETED',
        });
        expect(r.text).not.to.contain('Rute');
      } finally {
        await second.dispose();
      }
    } finally {
      await removeDir(dataDir);
    }
  });
});
