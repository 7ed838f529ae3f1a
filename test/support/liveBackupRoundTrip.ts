/**
 * A live backup's round trip (decision 0044), on either backend: a populated service is asked for its
 * backup over HTTP while check-ins, check-outs and synced marks go on; the file is restored into
 * another store, where every event and audit entry stored before the backup is found, the students
 * answer the same, and every check-in in the file is open or closed as its events say.
 */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'chai';
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import { EXIT } from '../../src/backup/cli.js';
import type { Database } from '../../src/store/pouch.js';
import { cli, copiesAgree, populateAndRecord, syncFromTablet } from './backupRoundTrip.js';
import { call, decodeAs } from './http.js';
import { seedSmallRoster } from './seed.js';
import { authHeaders, DEV_TOKENS, mutate, startTestService, type TestService } from './testService.js';

const DAY = '2026-11-26';
const TABLET = '0b7f1a34-2c1d-4e5f-9a0b-1c2d3e4f5a63';
const { DEV_ADMIN_TOKEN: ADMIN, DEV_CALLER_TOKEN: CALLER } = DEV_TOKENS;

const idsOf = async (db: Database): Promise<ReadonlyArray<string>> =>
  (await db.allDocs()).rows.map((r) => r.id).filter((id) => !id.startsWith('_design/'));

/** A read expected to answer 200, as an ADMIN unless told. */
export const get = async (url: string, path: string, token = ADMIN): Promise<unknown> => {
  const r = await call(`${url}${path}`, { headers: authHeaders(token) });
  expect(r.status, `${path}: ${r.text}`).to.equal(200);
  return r.json;
};

const Checked = t.type({ checkInId: t.string, code: t.string });
const CheckOutEvent = t.type({ type: t.literal('CHECK_OUT'), payload: t.type({ checkInId: t.string }) });
const ActiveStatus = t.type({ checkIn: t.type({ status: t.string }) });

/** The check-ins whose check-out event a store holds. */
const checkedOutIn = async (db: Database): Promise<ReadonlySet<string>> => {
  const rows = (await db.allDocs({ include_docs: true })).rows;
  return new Set(
    rows.flatMap((r) => {
      const e = CheckOutEvent.decode(r.doc);
      return E.isRight(e) ? [e.right.payload.checkInId] : [];
    }),
  );
};

interface Writes {
  /** Check-ins acknowledged (201), and whether their check-out was acknowledged too. */
  readonly checkIns: Map<string, boolean>;
  readonly marks: number;
}

/**
 * Check-ins and check-outs (REST) and marks from a tablet (sync), one after another until `stopped`
 * or `limit` rounds; resolves once the first round is acknowledged, with the whole loop's end.
 */
const writeWhile = async (
  url: string,
  ids: { readonly student: string; readonly marked: string; readonly sessionId: string },
  stopped: () => boolean,
  limit: number,
): Promise<{ readonly done: Promise<Writes> }> => {
  const writes = { checkIns: new Map<string, boolean>(), marks: 0 };
  const round = async (i: number) => {
    const r = await mutate(
      `${url}/api/v1/check-in`,
      'POST',
      { studentId: ids.student, sessionId: ids.sessionId },
      CALLER,
    );
    expect(r.status, r.text).to.equal(201);
    const checked = decodeAs(Checked, r.json);
    writes.checkIns.set(checked.checkInId, false);
    await syncFromTablet(url, TABLET, CALLER, {
      eventId: randomUUID(),
      type: i % 2 === 0 ? 'MARK_PRESENT' : 'MARK_ABSENT',
      studentId: ids.marked,
      sessionId: ids.sessionId,
      clientTimestamp: new Date(Date.parse(`${DAY}T11:00:00.000Z`) + i * 1000).toISOString(),
    });
    writes.marks += 1;
    const out = await mutate(
      `${url}/api/v1/check-out`,
      'POST',
      { checkInId: checked.checkInId, code: checked.code, pickupPerson: 'G' },
      CALLER,
    );
    expect(out.status, out.text).to.equal(200);
    writes.checkIns.set(checked.checkInId, true);
  };
  await round(0);
  const done = (async () => {
    for (let i = 1; i < limit && !stopped(); i += 1) await round(i);
    return writes;
  })();
  return { done };
};

/**
 * Backs up `svc` over HTTP into `dir` while writes go on, restores the file into the store `target`
 * names, and checks what the restored service answers.
 */
export const expectLiveBackupRestores = async (
  svc: TestService,
  target: Record<string, string>,
  dir: string,
): Promise<void> => {
  const { url } = svc;
  await populateAndRecord(svc);
  const roster = await seedSmallRoster(url, ['Dora', 'Edu'], DAY);
  const [dora, edu] = roster.studentIds;
  if (dora === undefined || edu === undefined) throw new Error('no students');
  const students = await get(url, '/api/v1/students?limit=200');

  let backedUp = false;
  const writing = await writeWhile(
    url,
    { student: dora, marked: edu, sessionId: roster.sessionId },
    () => backedUp,
    200,
  );
  // What the store holds now was acknowledged before the backup was asked for: all of it must be in.
  await svc.deps.audit.flush();
  await copiesAgree(svc);
  const before = { events: await idsOf(svc.store.db.events), audit: await idsOf(svc.store.db.audit) };
  const file = join(dir, 'live.ndjson');
  const run = await cli(['backup', '--out', file, '--server', url], { CHAMADA_TOKEN: ADMIN });
  backedUp = true;
  const writes = await writing.done;
  expect(run.status, run.stderr).to.equal(EXIT.ok);
  expect(run.stderr.split('\n').filter((l) => / done, \d+ documents$/.test(l))).to.have.length(5);
  // Writes went on during the backup: the service answered them while it read its store.
  const after = await idsOf(svc.store.db.events);
  expect(after.length).to.be.greaterThan(before.events.length);
  expect((await readFile(file, 'utf8')).trimEnd().split('\n').at(-1)).to.match(/^\{"kind":"complete"/);

  const restore = await cli(['restore', '--in', file], target);
  expect(restore.status, restore.stderr).to.equal(EXIT.ok);
  const restored = await startTestService({ env: target });
  try {
    await restored.deps.sync.pipeline.catchUp();
    await copiesAgree(restored);
    const events = await idsOf(restored.store.db.events);
    expect(events).to.include.members([...before.events]);
    expect(await idsOf(restored.store.db.audit)).to.include.members([...before.audit]);
    expect(await get(restored.url, '/api/v1/students?limit=200')).to.deep.equal(students);
    // Each check-in in the file is open or closed as its events say, whatever its record said
    // when the private database was read.
    const closed = await checkedOutIn(restored.store.db.events);
    let inFile = 0;
    for (const checkInId of writes.checkIns.keys()) {
      const r = await call(`${restored.url}/api/v1/check-in/active?checkInId=${checkInId}`, {
        headers: authHeaders(CALLER),
      });
      // Acknowledged after the events were read: not in the file, and not expected.
      if (r.status === 404) continue;
      expect(r.status, r.text).to.equal(200);
      inFile += 1;
      const { status } = decodeAs(ActiveStatus, r.json).checkIn;
      expect(status, checkInId).to.equal(closed.has(checkInId) ? 'CHECKED_OUT' : 'CHECKED_IN');
    }
    expect(inFile).to.be.greaterThan(0);
    expect(writes.marks).to.be.greaterThan(0);
  } finally {
    await restored.dispose();
  }
};
