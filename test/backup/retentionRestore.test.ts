/**
 * Retention and restore (decision 0045): a backup taken before a retention run brings back what the
 * run ended, and the restored service ends it again as it starts; a backup taken after it holds the
 * retired events as tombstones, so they stay retired (the pipeline passes over them, and a tablet is
 * told the server holds them).
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { expect } from 'chai';
import * as t from 'io-ts';
import { EXIT } from '../../src/backup/cli.js';
import { cli } from '../support/backupRoundTrip.js';
import { call, decodeAs } from '../support/http.js';
import { createdId } from '../support/seed.js';
import { tempDirs } from '../support/tempDir.js';
import {
  authHeaders,
  DEV_TOKENS,
  mutate,
  startTestService,
  type TestService,
} from '../support/testService.js';

const ADMIN: string = DEV_TOKENS.DEV_ADMIN_TOKEN;
const DAY = 86_400_000;
const AuditItems = t.type({ items: t.array(t.type({ details: t.record(t.string, t.unknown) })) });

/** The retention job's audit entries (newest first), once there are `runs` of them. */
const retentionRuns = async (svc: TestService, runs: number) => {
  for (let i = 0; i < 400; i += 1) {
    const r = await call(`${svc.url}/api/v1/audit-logs?endpoint=${encodeURIComponent('JOB /retention')}`, {
      headers: authHeaders(ADMIN),
    });
    const items = decodeAs(AuditItems, r.json).items;
    if (items.length >= runs) return items;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`fewer than ${runs} retention runs audited in 20 s`);
};

describe('retention across a backup and a restore', function () {
  this.timeout(180_000);
  const { fresh, removeAll } = tempDirs();
  after(removeAll);

  it('a restored backup older than a run is brought within the periods at start; a newer one keeps retired events retired', async () => {
    let offset = 0;
    const clock = () => new Date(Date.now() + offset);
    const source = await fresh('retention-source');
    const start = (dataDir: string) => startTestService({ clock, env: { DATA_DIR: dataDir } });

    // The records: a child who will be deleted, and another's check-in and check-out from a tablet.
    let deleted = '';
    const checkIn = randomUUID();
    const svc = await start(source);
    try {
      await retentionRuns(svc, 1);
      const classId = await createdId(svc.url, '/api/v1/classes', { name: 'Turma' }, 'classId');
      const today = clock().toISOString().slice(0, 10);
      const sessionId = await createdId(svc.url, '/api/v1/sessions', { classId, date: today }, 'sessionId');
      const child = (name: string) =>
        createdId(
          svc.url,
          '/api/v1/students',
          { displayName: name, guardianName: 'Responsável', phones: [], classId },
          'studentId',
        );
      deleted = await child('Criança Apagada');
      const present = await child('Criança Presente');
      const checkInId = randomUUID();
      const synced = await mutate(
        `${svc.url}/api/v1/sync/events`,
        'POST',
        {
          events: [
            {
              eventId: checkIn,
              type: 'CHECK_IN',
              studentId: present,
              sessionId,
              checkInId,
              clientTimestamp: clock().toISOString(),
            },
            {
              eventId: randomUUID(),
              type: 'CHECK_OUT',
              studentId: present,
              sessionId,
              checkInId,
              pickupPerson: 'Adulto Que Buscou',
              baseVersion: checkIn,
              clientTimestamp: clock().toISOString(),
            },
          ],
        },
        ADMIN,
      );
      expect(synced.status, synced.text).to.equal(200);
      const periods = { deletedStudentDays: 1, attendanceDays: 30, pageDays: 90, auditDays: 1825 };
      expect((await mutate(`${svc.url}/api/v1/church/retention`, 'PUT', periods, ADMIN)).status).to.equal(
        200,
      );
      const del = await mutate(
        `${svc.url}/api/v1/students/${deleted}/delete`,
        'POST',
        { justification: 'Pedido da família, por escrito' },
        ADMIN,
      );
      expect(del.status, del.text).to.equal(200);
      await svc.deps.sync.pipeline.catchUp();
    } finally {
      await svc.dispose();
    }
    const before = join(await fresh('retention-files'), 'before.ndjson');
    expect((await cli(['backup', '--out', before], { DATA_DIR: source })).status).to.equal(EXIT.ok);

    // Forty days on, the source's own start ends both; a second backup is taken after it.
    offset = 40 * DAY;
    const later = await start(source);
    try {
      expect((await retentionRuns(later, 2))[0]?.details).to.include({
        studentsAnonymised: 1,
        checkInsDeleted: 1,
      });
    } finally {
      await later.dispose();
    }
    const after = join(await fresh('retention-files'), 'after.ndjson');
    expect((await cli(['backup', '--out', after], { DATA_DIR: source })).status).to.equal(EXIT.ok);

    const restored = async (file: string) => {
      const dir = await fresh('retention-restored');
      const run = await cli(['restore', '--in', file], { DATA_DIR: dir });
      expect(run.status, run.stderr).to.equal(EXIT.ok);
      return start(dir);
    };

    // The older backup holds both again: the restored service's first run ends them again.
    const fromBefore = await restored(before);
    try {
      const [run] = await retentionRuns(fromBefore, 2);
      expect(run?.details).to.include({ studentsAnonymised: 1, checkInsDeleted: 1 });
      const student = await call(`${fromBefore.url}/api/v1/students/${deleted}`, {
        headers: authHeaders(ADMIN),
      });
      expect(student.json).to.deep.include({ displayName: '[anonymised]' });
      expect(await fromBefore.stores.events.get(checkIn)).to.equal(undefined);
    } finally {
      await fromBefore.dispose();
    }

    // The newer one holds the tombstones: nothing to end, nothing quarantined, the tablet told it is held.
    const fromAfter = await restored(after);
    try {
      const [run] = await retentionRuns(fromAfter, 3);
      expect(run?.details).to.include({ studentsAnonymised: 0, checkInsDeleted: 0 });
      await fromAfter.deps.sync.pipeline.catchUp();
      expect(await fromAfter.stores.events.get(checkIn)).to.equal(undefined);
      const quarantined = await fromAfter.store.db.projections.allDocs({
        startkey: 'quarantine:',
        endkey: 'quarantine:\ufff0',
      });
      expect(quarantined.rows).to.deep.equal([]);
      const diff = await fetch(`${fromAfter.url}/api/v1/replication/events/_revs_diff`, {
        method: 'POST',
        headers: { ...authHeaders(ADMIN), 'Content-Type': 'application/json' },
        body: JSON.stringify({ [`event:${checkIn}`]: ['1-a'] }),
      });
      expect(await diff.json()).to.deep.equal({});
    } finally {
      await fromAfter.dispose();
    }
  });
});
