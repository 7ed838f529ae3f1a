/**
 * Idempotency under a burst: a tablet that retries a check-in 100 times at once (same Idempotency-Key,
 * same body) must check the child in once. Decision 0012 and the product decisions say a concurrent
 * loser waits and replays the winner's response; a 409 "in progress" is only the give-up after two
 * leases (60 s each), so this test accepts no 409 at all.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import * as t from 'io-ts';
import { TOKENS, useService } from '../support/harness.js';
import { call, decodeAs, expectEnvelope, type HttpResult } from '../support/http.js';
import { authHeaders, mutationHeaders } from '../support/testService.js';
import { figure } from './figures.js';
import {
  addStudent,
  auditOf,
  CheckInView,
  classAndSession,
  docsOfType,
  eventsOf,
  type Roster,
  since,
  tallyText,
} from './helpers.js';

const BURST = 100;

const StoredCheckin = t.type({ checkInId: t.string, studentId: t.string, sessionId: t.string });
const ReportRows = t.type({
  rows: t.array(t.type({ studentId: t.string, checkedInAt: t.union([t.string, t.null]) })),
});

describe('reliability: idempotency race on check-in', function () {
  this.timeout(60_000);
  const h = useService({}, 'test');
  let roster: Roster;
  let studentId: string;

  beforeEach(async () => {
    roster = await classAndSession(h.svc);
    studentId = await addStudent(h.svc, roster.classId, { displayName: 'Corrida Idempotente' });
  });

  const post = (headers: Record<string, string>): Promise<HttpResult> =>
    call(`${h.url}/api/v1/check-in`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ studentId, sessionId: roster.sessionId }),
    });

  /** What the store, the pickup desk and the report say about this child's check-ins. */
  const observed = async () => {
    const stored = (await docsOfType(h.svc.store.db.private, 'checkin', StoredCheckin)).filter(
      (c) => c.studentId === studentId,
    );
    const events = (await eventsOf(h.svc, 'CHECK_IN')).filter((e) => e.subjectId === studentId);
    const desk = await call(
      `${h.url}/api/v1/check-in/active?studentId=${studentId}&sessionId=${roster.sessionId}`,
      { headers: authHeaders(TOKENS.CHAMADOR) },
    );
    expect(desk.status, desk.text).to.equal(200);
    const deskId = decodeAs(t.type({ checkIn: t.type({ checkInId: t.string }) }), desk.json).checkIn
      .checkInId;
    const report = await call(
      `${h.url}/api/v1/reports/attendance?from=${roster.date}&to=${roster.date}&sessionId=${roster.sessionId}`,
      { headers: authHeaders(TOKENS.ADMIN) },
    );
    expect(report.status, report.text).to.equal(200);
    const rows = decodeAs(ReportRows, report.json).rows.filter((r) => r.studentId === studentId);
    return { stored, events, deskId, rows };
  };

  it(`${BURST} concurrent identical check-ins (one key) → one check-in, one event, ${BURST} identical responses`, async () => {
    const headers = mutationHeaders(TOKENS.CHAMADOR);
    const started = process.hrtime.bigint();
    const results = await Promise.all(Array.from({ length: BURST }, () => post(headers)));
    const elapsed = since(started);

    // Identical means status, body, Location and the original correlation id; only the replay flag differs.
    expect(tallyText(results.map((r) => r.status)), 'statuses').to.equal(`${BURST}×201`);
    const bodies = new Set(results.map((r) => r.text));
    const locations = new Set(results.map((r) => r.headers.get('location')));
    const correlations = new Set(results.map((r) => r.headers.get('x-correlation-id')));
    expect([bodies.size, locations.size, correlations.size]).to.deep.equal([1, 1, 1]);
    const originals = results.filter((r) => r.headers.get('idempotent-replayed') === null);
    const replays = results.filter((r) => r.headers.get('idempotent-replayed') === 'true');
    expect([originals.length, replays.length]).to.deep.equal([1, BURST - 1]);

    const [first] = results;
    if (first === undefined) throw new Error('no response');
    const answer = decodeAs(CheckInView, first.json);
    const { stored, events, deskId, rows } = await observed();
    expect(stored.map((c) => c.checkInId)).to.deep.equal([answer.checkInId]);
    expect(events).to.have.length(1);
    expect(events[0]?.payload).to.deep.include({ checkInId: answer.checkInId });
    expect(deskId).to.equal(answer.checkInId);
    expect(rows).to.have.length(1);
    expect(rows[0]?.checkedInAt).to.be.a('string');

    // Every attempt is audited (this service saw no other check-in); the replays name the original.
    const audit = await auditOf(h.svc, 'POST /api/v1/check-in');
    const originalId = first.headers.get('x-correlation-id');
    expect(audit).to.have.length(BURST);
    expect(audit.filter((a) => a.details.replayOf === originalId)).to.have.length(BURST - 1);

    figure(
      'idempotency race',
      `${BURST} concurrent → ${stored.length} check-in, ${events.length} CHECK_IN event, ${BURST}×201 ` +
        `(${bodies.size} distinct body, ${replays.length} replays, 0×409 accepted per decision 0012), ` +
        `desk + report agree, ${audit.length} audit entries; ${elapsed} ms`,
    );
  });

  it(`${BURST} concurrent check-ins of one child with distinct keys → one 201, the rest 409, one event`, async () => {
    const started = process.hrtime.bigint();
    const results = await Promise.all(
      Array.from({ length: BURST }, () => post(mutationHeaders(TOKENS.CHAMADOR, randomUUID()))),
    );
    const elapsed = since(started);
    const statuses = tallyText(results.map((r) => r.status));
    expect(statuses).to.equal(`1×201, ${BURST - 1}×409`);
    for (const r of results.filter((x) => x.status === 409)) expectEnvelope(r, 409, 'CONFLICT');
    const winner = results.find((r) => r.status === 201);
    if (winner === undefined) throw new Error('no winner');
    const answer = decodeAs(CheckInView, winner.json);
    const { stored, events, deskId, rows } = await observed();
    expect(stored.map((c) => c.checkInId)).to.deep.equal([answer.checkInId]);
    expect(events).to.have.length(1);
    expect(deskId).to.equal(answer.checkInId);
    expect(rows).to.have.length(1);
    figure(
      'idempotency race (distinct keys)',
      `${BURST} concurrent → ${statuses}; ${stored.length} check-in, ${events.length} CHECK_IN event; ${elapsed} ms`,
    );
  });
});
