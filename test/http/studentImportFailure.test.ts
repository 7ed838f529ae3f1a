/**
 * A student import that fails part way (decision 0057): the file sent again stores every row, each
 * student with exactly one STUDENT_CREATED event and audited, whatever the failed attempt left. On a
 * CouchDB-protocol server behind a proxy that refuses one write of events.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import * as t from 'io-ts';
import { ImportReport } from '../../src/domain/studentImport.js';
import { BULK_WRITE_PATIENCE } from '../../src/store/boundedFetch.js';
import { PouchDB } from '../../src/store/pouch.js';
import { type CouchServer, couchServerLabel, startCouchServer } from '../support/couchServer.js';
import { type FailingProxy, failingProxy } from '../support/failingProxy.js';
import { TOKENS } from '../support/harness.js';
import { fixture } from '../support/hooks.js';
import { call, decodeAs } from '../support/http.js';
import { rosterFile } from '../support/importFiles.js';
import { mutationHeaders, startTestService, type TestService } from '../support/testService.js';

const ADMIN = TOKENS.ADMIN;
/** More than two batches of the import (500 rows), so that batches run at once when one fails. */
const ROWS = 1_600;

const file = rosterFile(ROWS, 'da Silva');

const EventRow = t.type({ doc: t.type({ type: t.string, subjectId: t.string }) });
const AuditRow = t.type({ doc: t.type({ subject_id: t.union([t.string, t.null]), endpoint: t.string }) });

const StudentRow = t.type({ id: t.string });

/** A CouchDB-protocol server, a proxy in front of it and the service behind the proxy, for the file. */
const serviceBehindProxy = (prefix: string, env: Record<string, string> = {}) =>
  fixture(
    'file',
    async () => {
      const couch = await startCouchServer();
      const proxy = await failingProxy(couch.url);
      const svc = await startTestService({ env: { COUCHDB_URL: proxy.url, DB_PREFIX: prefix, ...env } });
      return { couch, proxy, svc };
    },
    async ({ couch, proxy, svc }: { couch: CouchServer; proxy: FailingProxy; svc: TestService }) => {
      await svc.dispose();
      await proxy.close();
      await couch.dispose();
    },
  );

const createClass = async (url: string): Promise<void> => {
  const made = await call(`${url}/api/v1/classes`, {
    method: 'POST',
    headers: mutationHeaders(ADMIN),
    body: JSON.stringify({ name: 'Maternal' }),
  });
  expect(made.status, made.text).to.equal(201);
};

const upload = (url: string) =>
  call(`${url}/api/v1/imports/students?dryRun=false`, {
    method: 'POST',
    headers: { ...mutationHeaders(ADMIN), 'Content-Type': 'text/csv' },
    body: file,
  });

/** Every document of one of the service's databases, read straight from the server. */
const docsOf = async (couch: CouchServer, prefix: string, db: string): Promise<unknown[]> => {
  const d = new PouchDB(`${couch.url}/${prefix}${db}`);
  try {
    return (await d.allDocs({ include_docs: true })).rows;
  } finally {
    await d.close();
  }
};

/** How many student records the server holds. */
const studentsStored = async (couch: CouchServer, prefix: string): Promise<number> =>
  (await docsOf(couch, prefix, 'private')).filter((r) => /^student:/.test(StudentRow.is(r) ? r.id : ''))
    .length;

/** Each imported student's STUDENT_CREATED events, and its import's audit entries, counted. */
const perStudent = async (couch: CouchServer, prefix: string) => {
  const created = new Map<string, number>();
  for (const row of await docsOf(couch, prefix, 'events')) {
    if (!EventRow.is(row) || row.doc.type !== 'STUDENT_CREATED') continue;
    created.set(row.doc.subjectId, (created.get(row.doc.subjectId) ?? 0) + 1);
  }
  const audits = new Map<string, number>();
  for (const row of await docsOf(couch, prefix, 'audit'))
    if (
      AuditRow.is(row) &&
      row.doc.endpoint === 'POST /api/v1/imports/students' &&
      row.doc.subject_id !== null
    )
      audits.set(row.doc.subject_id, (audits.get(row.doc.subject_id) ?? 0) + 1);
  return { created, audits };
};

/** `ROWS` students counted, each once. */
const expectOneEach = (counts: ReadonlyMap<string, number>, what: string): void => {
  expect(counts.size, `students with a ${what}`).to.equal(ROWS);
  expect(
    [...counts.values()].every((n) => n === 1),
    `one ${what} each`,
  ).to.equal(true);
};

describe(`student import on ${couchServerLabel()}, sent again after a failed write of events`, function () {
  this.timeout(180_000);
  const prefix = `importfail${randomUUID().slice(0, 8)}_`;
  const current = serviceBehindProxy(prefix);

  it('stores every row once, with one creation event and an audit entry each', async () => {
    const { couch, proxy, svc } = current();
    await createClass(svc.url);
    // The fifth write of events refused: two batches' events are under way at once by then.
    let writesOfEvents = 0;
    proxy.fail((method, path) => {
      if (method !== 'POST' || !path.startsWith(`/${prefix}events/_bulk_docs`)) return false;
      writesOfEvents += 1;
      return writesOfEvents === 5;
    });
    const failed = await upload(svc.url);
    proxy.failNone();
    expect(proxy.refused(), 'the proxy refused a write').to.equal(1);
    expect(failed.status, failed.text).to.be.at.least(500);
    const partly = await studentsStored(couch, prefix);
    expect(partly, 'the failed attempt stored part of the file').to.be.below(ROWS);

    const again = await upload(svc.url);
    expect(again.status, again.text).to.equal(200);
    const report = decodeAs(ImportReport, again.json);
    expect(report.errors).to.deep.equal([]);
    expect(report.created + report.unchanged).to.equal(ROWS);
    expect(report.created, 'the rows the failed attempt did not store').to.equal(ROWS - partly);
    const studentIds = report.outcomes.map((o) => o.studentId);
    expect(new Set(studentIds).size).to.equal(ROWS);

    const { created, audits } = await perStudent(couch, prefix);
    expectOneEach(created, 'creation event');
    for (const id of studentIds) expect(created.get(id ?? ''), `the event of ${id}`).to.equal(1);
    for (const id of studentIds) expect(audits.has(id ?? ''), `an audit entry for ${id}`).to.equal(true);
  });
});

describe(`student import on ${couchServerLabel()}, a write whose answer outlasts the store's silence limit`, function () {
  this.timeout(180_000);
  const prefix = `importslow${randomUUID().slice(0, 8)}_`;
  /** The store's silence limit of this service; the held answers outlast it. */
  const LIMIT_MS = 3_000;
  const current = serviceBehindProxy(prefix, { STORE_TIMEOUT_MS: String(LIMIT_MS) });

  it('is sent again: the file answers 200 and every row is stored once, with one creation event and an audit entry', async () => {
    const { couch, proxy, svc } = current();
    await createClass(svc.url);
    // The third write of events and the second of students reach the server; their answers come
    // after the limit these writes wait (BULK_WRITE_PATIENCE times the service's), which cuts them
    // (decision 0064).
    const seen = { events: 0, students: 0 };
    proxy.holdAnswers(
      (method, path) => {
        if (method !== 'POST') return false;
        if (path.startsWith(`/${prefix}events/_bulk_docs`)) return ++seen.events === 3;
        if (path.startsWith(`/${prefix}private/_bulk_docs`)) return ++seen.students === 2;
        return false;
      },
      LIMIT_MS * BULK_WRITE_PATIENCE + 1_500,
    );
    const r = await upload(svc.url);
    proxy.holdNone();
    expect(proxy.held(), 'answers held').to.equal(2);
    // What the service logged at warn and above, to say why when it did not answer 200.
    const warnings = svc
      .logLines()
      .filter((l) => typeof l.level === 'number' && l.level >= 40)
      .map((l) => JSON.stringify(l).slice(0, 600));
    expect(r.status, `${r.text}\n${warnings.join('\n')}`).to.equal(200);
    const report = decodeAs(ImportReport, r.json);
    expect(report.errors).to.deep.equal([]);
    expect(report.created).to.equal(ROWS);
    expect(await studentsStored(couch, prefix)).to.equal(ROWS);
    const { created, audits } = await perStudent(couch, prefix);
    expectOneEach(created, 'creation event');
    expectOneEach(audits, 'audit entry');
  });
});
