/**
 * A populated service and what it answers, for the backup round trips (embedded and CouchDB): the same
 * data on both backends, read back through the HTTP API as whole values.
 */

import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { expect } from 'chai';
import * as t from 'io-ts';
import sharp from 'sharp';
import { type CliIo, runCli } from '../../src/backup/cli.js';
import { untilTestCouchCopiesAgree } from './couchServer.js';
import { TOKENS } from './harness.js';
import { call, decodeAs } from './http.js';
import { readUntil } from './readUntil.js';
import { seedSmallRoster } from './seed.js';
import { authHeaders, mutate, mutationHeaders, startTestService, type TestService } from './testService.js';

const DAY = '2026-11-26';
const TABLET_A = '0b7f1a34-2c1d-4e5f-9a0b-1c2d3e4f5a61';
const TABLET_B = '0b7f1a34-2c1d-4e5f-9a0b-1c2d3e4f5a62';

export interface Populated {
  readonly checkInIds: ReadonlyArray<string>;
  /** The student whose photo (an attachment in the private database) must survive the round trip. */
  readonly withPhoto: string;
}

/** A child's photo stored under an image consent (decision 0033). */
const storePhoto = async (url: string, studentId: string): Promise<void> => {
  await post(
    url,
    '/api/v1/image-consents',
    {
      subject_type: 'STUDENT',
      subject_id: studentId,
      term_version: '2026-01',
      purpose: 'Identificação na entrega',
      term_text: 'Autorizo.',
      granted_by_name: 'G',
      relationship: 'mãe',
      verification_method: 'VERIFIED_GUARDIAN_PRESENT',
    },
    TOKENS.ADMIN,
  );
  const jpeg = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#c84' } })
    .jpeg()
    .toBuffer();
  const r = await call(`${url}/api/v1/students/${studentId}/photo`, {
    method: 'PUT',
    headers: { ...mutationHeaders(TOKENS.ADMIN), 'Content-Type': 'image/jpeg' },
    body: new Blob([new Uint8Array(jpeg)]),
  });
  expect(r.status, r.text).to.equal(200);
};

/** The stored photo's bytes, as base64 (an image, so not through the contract-checked `call`). */
const photoOf = async (url: string, studentId: string): Promise<string> => {
  const res = await fetch(`${url}/api/v1/students/${studentId}/photo`, {
    headers: authHeaders(TOKENS.ADMIN),
  });
  expect(res.status).to.equal(200);
  return Buffer.from(await res.arrayBuffer()).toString('base64');
};

const post = async (url: string, path: string, body: unknown, token: string): Promise<unknown> => {
  const r = await mutate(`${url}${path}`, 'POST', body, token);
  expect(r.status, `${path}: ${r.text}`).to.be.oneOf([200, 201, 202]);
  return r.json;
};

/** One event sent by a tablet through `POST /api/v1/sync/events`, expected accepted. */
export const syncFromTablet = async (url: string, deviceId: string, token: string, event: unknown) => {
  const r = await call(`${url}/api/v1/sync/events`, {
    method: 'POST',
    headers: {
      ...authHeaders(token),
      'X-Device-Id': deviceId,
      'Content-Type': 'application/json',
      'Idempotency-Key': randomUUID(),
    },
    body: JSON.stringify({ events: [event] }),
  });
  expect(r.status, r.text).to.equal(200);
};

/**
 * Students, a check-in and check-out and an open check-in (REST), an attendance mark, a conflict from
 * two tablets through sync, and the audit entries all of these leave.
 */
const populate = async (url: string): Promise<Populated> => {
  const roster = await seedSmallRoster(url, ['Ana', 'Bruno', 'Carla'], DAY);
  const [ana, bruno, carla] = roster.studentIds;
  if (ana === undefined || bruno === undefined || carla === undefined) throw new Error('no students');
  const { sessionId } = roster;
  const Checked = t.type({ checkInId: t.string, code: t.string });
  const caller = TOKENS.CHAMADOR;
  const first = decodeAs(Checked, await post(url, '/api/v1/check-in', { studentId: ana, sessionId }, caller));
  await post(
    url,
    '/api/v1/check-out',
    { checkInId: first.checkInId, code: first.code, pickupPerson: 'G' },
    caller,
  );
  const open = decodeAs(
    Checked,
    await post(url, '/api/v1/check-in', { studentId: bruno, sessionId }, caller),
  );
  await post(
    url,
    '/api/v1/attendance/events',
    { studentId: carla, sessionId, actionType: 'MARK_PRESENT', timestamp: `${DAY}T10:00:00.000Z` },
    caller,
  );
  const mark = (type: string, at: string) => ({
    eventId: randomUUID(),
    type,
    studentId: bruno,
    sessionId,
    clientTimestamp: at,
  });
  await syncFromTablet(url, TABLET_A, TOKENS.ADMIN, mark('MARK_ABSENT', `${DAY}T09:00:00.000Z`));
  await syncFromTablet(url, TABLET_B, caller, mark('MARK_PRESENT', `${DAY}T10:00:00.000Z`));
  await storePhoto(url, carla);
  return { checkInIds: [first.checkInId, open.checkInId], withPhoto: carla };
};

const get = async (url: string, path: string, token: string = TOKENS.ADMIN): Promise<unknown> => {
  const r = await call(`${url}${path}`, { headers: authHeaders(token) });
  expect(r.status, `${path}: ${r.text}`).to.equal(200);
  return r.json;
};

/**
 * The audit log as an ADMIN lists it (newest first; the test data fits one page), without the
 * retention job's entries: every start runs it (decision 0045), so a restored service has one entry
 * more than the log it was restored from, whenever its run ends.
 */
const auditLog = async (url: string): Promise<unknown> => {
  const log: unknown = await get(url, '/api/v1/audit-logs?limit=200');
  const items: unknown = Reflect.get(Object(log), 'items');
  return Array.isArray(items)
    ? {
        ...Object(log),
        items: items.filter((i: unknown) => Reflect.get(Object(i), 'endpoint') !== 'JOB /retention'),
      }
    : log;
};

/** What the service answers about the record, whole: students, check-ins, both reports. */
const answers = async (url: string, populated: Populated): Promise<Record<string, unknown>> => ({
  students: await get(url, '/api/v1/students?limit=200'),
  checkIns: await Promise.all(
    populated.checkInIds.map((id) => get(url, `/api/v1/check-in/active?checkInId=${id}`, TOKENS.CHAMADOR)),
  ),
  attendance: await get(url, `/api/v1/reports/attendance?from=${DAY}`, TOKENS.RELATORIOS),
  conflicts: await get(url, '/api/v1/reports/conflicts', TOKENS.RELATORIOS),
  photo: await photoOf(url, populated.withPhoto),
});

/** What the comparison covers is not empty: a conflict, marks, check-ins and the audit entries of them. */
const expectSubstantial = (answered: Record<string, unknown>, audit: unknown): void => {
  const text = JSON.stringify(answered);
  expect(text).to.contain('"policy":"ADMIN_PRECEDENCE"');
  expect(text).to.contain('"status":"CHECKED_OUT"');
  expect(text).to.contain('"mark":"PRESENT"');
  expect(JSON.stringify(audit)).to.contain('"action":"CONFLICT_RESOLVED"');
  expect(JSON.stringify(audit)).to.contain('"endpoint":"POST /api/v1/check-out"');
};

export interface Recorded {
  readonly audit: unknown;
  readonly answers: Record<string, unknown>;
}

export interface Source {
  readonly populated: Populated;
  readonly recorded: Recorded;
}

/**
 * On a CouchDB cluster, until every copy holds what was written: the reports and the audit log are
 * range reads, served by one copy of each shard, which may lag a write a moment (decision 0023).
 */
export const copiesAgree = async (svc: TestService): Promise<void> => {
  if (svc.store.backend === 'couchdb') await untilTestCouchCopiesAgree();
};

/**
 * Populates the service, then records what it answers once its pipeline has caught up; the audit log
 * last, so it holds the reads' own entries.
 */
export const populateAndRecord = async (svc: TestService): Promise<Source> => {
  const populated = await populate(svc.url);
  await svc.deps.sync.pipeline.catchUp();
  await copiesAgree(svc);
  const answered = await answers(svc.url, populated);
  // Reads of personal data (the photo's) are audited in the background: stored before the log is read,
  // or the backup, taken later, holds one entry more than what was recorded here.
  await svc.deps.audit.flush();
  await copiesAgree(svc);
  // On a cluster the log's range read asks one copy of each shard, which may lag the flush by a
  // moment (CI's three-node run recorded 17 entries and restored 18): read until the photo read is in.
  const audit = await readUntil(
    () => auditLog(svc.url),
    (log) => JSON.stringify(log).includes('"GET /api/v1/students/{studentId}/photo"'),
    60_000,
  );
  expectSubstantial(answered, audit);
  return { populated, recorded: { audit, answers: answered } };
};

/**
 * Starts a service on a restored store and expects it to answer what the source did once it has
 * replayed the events; the audit log is read first, since the other reads are audited themselves.
 * `also` checks more on the same service.
 */
export const expectRestored = async (
  env: Record<string, string>,
  { populated, recorded }: Source,
  also: (svc: TestService) => Promise<void> = async () => undefined,
): Promise<void> => {
  const svc = await startTestService({ env });
  try {
    await svc.deps.sync.pipeline.catchUp();
    await copiesAgree(svc);
    // Read again for a moment where a cluster's copies may still lag the restore's writes.
    const restored = await readUntil(
      () => auditLog(svc.url),
      (log) => JSON.stringify(log) === JSON.stringify(recorded.audit),
      30_000,
    );
    expect(restored).to.deep.equal(recorded.audit);
    expect(await answers(svc.url, populated)).to.deep.equal(recorded.answers);
    await also(svc);
  } finally {
    await svc.dispose();
  }
};

export interface CliRun {
  readonly status: number;
  readonly stderr: string;
  readonly stdout: string;
}

const collector = () => {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString('utf8'));
      done();
    },
  });
  return { stream, text: () => chunks.join('') };
};

/** Runs the backup command in this process with its own environment and captured output. */
export const cli = async (args: ReadonlyArray<string>, env: CliIo['env']): Promise<CliRun> => {
  const out = collector();
  const err = collector();
  const status = await runCli(args, { env, stdout: out.stream, stderr: err.stream });
  return { status, stdout: out.text(), stderr: err.text() };
};
