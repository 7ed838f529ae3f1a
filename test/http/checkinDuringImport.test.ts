/**
 * A kiosk's check-in while the office imports a file on the embedded store (issue #41, decision 0065):
 * the file waits for the pipeline after each batch, so the pipeline's backlog stays within the batches
 * in flight, and a check-in during the file is answered, and answered right.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import * as t from 'io-ts';
import { ImportReport } from '../../src/domain/studentImport.js';
import { TOKENS } from '../support/harness.js';
import { fixture } from '../support/hooks.js';
import { call, decodeAs, expectEnvelope } from '../support/http.js';
import { rosterFile } from '../support/importFiles.js';
import { mutationHeaders, startTestService, type TestService } from '../support/testService.js';

const ADMIN = TOKENS.ADMIN;
const CHAMADOR = TOKENS.CHAMADOR;
/** Without the import's pauses the backlog reached 9,000 of a 10,000-row file on the embedded store. */
const EMBEDDED_ROWS = 5_000;
/** Three batches of 500 in flight, and a margin for a pause cut at its bound on a loaded machine. */
const EMBEDDED_MOST_BEHIND = 2_500;

const Id = (key: string) => t.type({ [key]: t.string });

describe('a check-in during an import on the embedded store', function () {
  this.timeout(120_000);
  const current = fixture(
    'file',
    () => startTestService({ env: { METRICS_ALLOW: 'loopback' } }),
    (svc: TestService) => svc.dispose(),
  );

  const post = (url: string, path: string, body: unknown, token: string = ADMIN) =>
    call(`${url}${path}`, {
      method: 'POST',
      headers: mutationHeaders(token, randomUUID()),
      body: JSON.stringify(body),
    });
  const behind = async (url: string): Promise<number> => {
    const text = await fetch(`${url}/metrics`).then((r) => r.text());
    return Number(/^chamada_pipeline_pending_events (\d+)/m.exec(text)?.[1] ?? Number.NaN);
  };

  it('keeps the pipeline within the batches in flight, and answers a check-in during the file', async () => {
    const svc = current();
    const made = await post(svc.url, '/api/v1/classes', { name: 'Maternal' });
    expect(made.status, made.text).to.equal(201);
    const classId = decodeAs(Id('classId'), made.json).classId;
    const session = await post(svc.url, '/api/v1/sessions', { classId, date: '2026-03-01' });
    const sessionId = decodeAs(Id('sessionId'), session.json).sessionId;
    const kid = await post(svc.url, '/api/v1/students', {
      displayName: 'Criança da Porta',
      guardianName: 'G',
      phones: [],
      classId,
    });
    const door = decodeAs(Id('studentId'), kid.json).studentId;
    let importing = true;
    const imported = call(`${svc.url}/api/v1/imports/students?dryRun=false`, {
      method: 'POST',
      headers: { ...mutationHeaders(ADMIN), 'Content-Type': 'text/csv' },
      body: rosterFile(EMBEDDED_ROWS, 'da Costa'),
    }).finally(() => {
      importing = false;
    });
    const seen: number[] = [];
    let checkedIn: Awaited<ReturnType<typeof post>> | undefined;
    let again: Awaited<ReturnType<typeof post>> | undefined;
    while (importing) {
      const n = await behind(svc.url);
      seen.push(n);
      if (checkedIn === undefined && n > 0) {
        checkedIn = await post(svc.url, '/api/v1/check-in', { sessionId, studentId: door }, CHAMADOR);
        again = await post(svc.url, '/api/v1/check-in', { sessionId, studentId: door }, CHAMADOR);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    const answer = await imported;
    expect(answer.status, answer.text).to.equal(200);
    expect(decodeAs(ImportReport, answer.json).created).to.equal(EMBEDDED_ROWS);
    expect(Math.max(...seen), 'the pipeline was never behind: the test proves nothing').to.be.above(0);
    expect(Math.max(...seen), `backlog read during the file: ${seen.join(' ')}`).to.be.at.most(
      EMBEDDED_MOST_BEHIND,
    );
    expect(checkedIn?.status, checkedIn?.text).to.equal(201);
    expect(checkedIn?.json).to.deep.include({ status: 'CHECKED_IN' });
    if (again === undefined) throw new Error('no second check-in');
    expect(expectEnvelope(again, 409, 'CONFLICT').details).to.deep.include({ reason: 'ALREADY_CHECKED_IN' });
  });
});
