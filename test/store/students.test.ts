/**
 * The student store's bulk creation, the event store's and the audit log's writes when the store's
 * silence limit cuts a write's answer (decision 0064): the write is sent again, and what the first send
 * stored counts as stored, on the embedded store.
 */
import { expect } from 'chai';
import { v5 as uuidV5 } from 'uuid';
import { auditDocId } from '../../src/domain/audit.js';
import type { NewEvent } from '../../src/domain/event.js';
import { auditLog } from '../../src/store/auditLog.js';
import { SENDS_AFTER_SILENCE } from '../../src/store/docWrites.js';
import { eventStore } from '../../src/store/events.js';
import type { Database } from '../../src/store/pouch.js';
import { openStore, type Store } from '../../src/store/store.js';
import { StoreTimeoutError } from '../../src/store/storeErrors.js';
import { studentStore } from '../../src/store/students.js';
import { anAuditEntry, aStudentRecord } from '../support/fixtures.js';
import { studentCreated } from '../support/studentEvents.js';
import { makeTempDir, removeDir } from '../support/tempDir.js';

/**
 * `db` whose bulk writes answer the silence limit as `cut` says for each send (from 1): `after` the
 * write reached the store (its answer lost), `before` it did (nothing stored), or `none` (answered).
 */
const cutting = (db: Database, cut: (send: number) => 'after' | 'before' | 'none') => {
  let sends = 0;
  const bulkDocs = async (docs: Array<{ _id: string }>) => {
    sends += 1;
    const how = cut(sends);
    if (how === 'before') throw new StoreTimeoutError(5_000);
    const answer = await db.bulkDocs(docs);
    if (how === 'after') throw new StoreTimeoutError(5_000);
    return answer;
  };
  const wrapped = new Proxy(db, {
    get: (target, prop, receiver) => (prop === 'bulkDocs' ? bulkDocs : Reflect.get(target, prop, receiver)),
  });
  return { db: wrapped, sends: () => sends };
};

const records = (n: number) =>
  Array.from({ length: n }, (_, i) => aStudentRecord({ displayName: `Criança ${i}` }));

describe('bulk writes cut by the store silence limit', () => {
  let dir: string;
  let store: Store;

  beforeEach(async () => {
    dir = await makeTempDir('silence');
    store = await openStore({ kind: 'embedded', dataDir: dir, prefix: 'chamada_' });
  });
  afterEach(async () => {
    await store.close();
    await removeDir(dir);
  });

  it('students: an answer cut after the write is sent again, and every record counts as stored, once', async () => {
    const { db, sends } = cutting(store.db.private, (send) => (send === 1 ? 'after' : 'none'));
    const wanted = records(7);
    const stored = await studentStore(db).createMany(wanted);
    expect(sends()).to.equal(2);
    expect(stored.map((s) => (s === 'CONFLICT' ? s : s.studentId))).to.deep.equal(
      wanted.map((r) => r.studentId),
    );
    expect(await studentStore(store.db.private).listAll()).to.have.length(7);
  });

  it('students: an answer cut before the write is sent again and stores the records', async () => {
    const { db, sends } = cutting(store.db.private, (send) => (send === 1 ? 'before' : 'none'));
    const stored = await studentStore(db).createMany(records(3));
    expect(sends()).to.equal(2);
    expect(stored.filter((s) => s === 'CONFLICT')).to.deep.equal([]);
    expect(await studentStore(store.db.private).listAll()).to.have.length(3);
  });

  it('students: sent again, a record another writer stored under the id with other content is still a CONFLICT', async () => {
    const [mine] = records(1);
    if (mine === undefined) throw new Error('no record');
    await studentStore(store.db.private).create({ ...mine, displayName: 'Outro nome' });
    const { db } = cutting(store.db.private, (send) => (send === 1 ? 'after' : 'none'));
    expect(await studentStore(db).createMany([mine])).to.deep.equal(['CONFLICT']);
  });

  it(`fails once ${SENDS_AFTER_SILENCE} sends in a row were cut`, async () => {
    const { db, sends } = cutting(store.db.private, () => 'before');
    const failure = await studentStore(db)
      .createMany(records(2))
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(failure).to.be.instanceOf(StoreTimeoutError);
    expect(sends()).to.equal(SENDS_AFTER_SILENCE);
  });

  it('events: an answer cut after the write is sent again; each event is stored once and reported', async () => {
    const { db, sends } = cutting(store.db.events, (send) => (send === 1 ? 'after' : 'none'));
    const events: NewEvent[] = Array.from({ length: 5 }, (_, i) =>
      studentCreated(i, '2026-11-29T06:00:00.000Z'),
    );
    const outcomes = await eventStore(db).appendMany(events);
    expect(sends()).to.equal(2);
    expect([...outcomes.keys()]).to.deep.equal(events.map((e) => e.eventId));
    expect(new Set(outcomes.values())).to.deep.equal(new Set(['duplicate']));
    const all = await store.db.events.allDocs({ startkey: 'event:', endkey: 'event:\ufff0' });
    expect(all.rows).to.have.length(5);
  });

  const auditDocs = async () =>
    (await store.db.audit.allDocs({ startkey: 'audit:', endkey: 'audit:\ufff0' })).rows.map((r) => r.id);
  const clock = () => new Date('2026-11-29T06:00:00.000Z');
  const keyOf = (decision: string) => ({
    at: '2026-11-29T05:59:00.123Z',
    auditId: uuidV5(decision, uuidV5.URL),
  });

  it('audit log: an answer cut after the write is sent again; each entry, plain or keyed, is stored once', async () => {
    const { db, sends } = cutting(store.db.audit, (send) => (send === 1 ? 'after' : 'none'));
    const log = auditLog(db, { clock });
    await Promise.all([
      log.append(anAuditEntry()),
      log.append(anAuditEntry()),
      log.appendKeyed(anAuditEntry({ action: 'CONFLICT_RESOLVED' }), keyOf('decision-1')),
    ]);
    // The first write was sent twice; the appends queued behind it may make a write of their own.
    expect(sends()).to.be.at.least(2);
    expect(await auditDocs()).to.have.length(3);
  });

  it("audit log with claims: a claim cut after the write is sent again, and the entry keeps its writer's time", async () => {
    const claims = cutting(store.db.requests, (send) => (send === 1 ? 'after' : 'none'));
    const log = auditLog(store.db.audit, { clock, claims: claims.db });
    const key = keyOf('decision-2');
    await log.appendKeyed(anAuditEntry({ action: 'CONFLICT_RESOLVED' }), key);
    expect(claims.sends()).to.equal(2);
    expect(await auditDocs()).to.deep.equal([auditDocId(key.at, key.auditId)]);
  });

  it(`audit log: an append fails once ${SENDS_AFTER_SILENCE} sends in a row were cut, and stores nothing`, async () => {
    const { db, sends } = cutting(store.db.audit, () => 'before');
    const failure = await auditLog(db, { clock })
      .append(anAuditEntry())
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(failure).to.be.instanceOf(Error);
    expect(sends()).to.equal(SENDS_AFTER_SILENCE);
    expect(await auditDocs()).to.deep.equal([]);
  });
});
