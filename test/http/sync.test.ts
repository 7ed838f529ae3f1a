/** POST /api/v1/sync/events, black-box against the running service. */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { TOKENS, useService } from '../support/harness.js';
import { call, expectEnvelope } from '../support/http.js';
import { syncEvents } from '../support/seed.js';

describe('sync of offline events', function () {
  this.timeout(60_000);
  const h = useService({}, 'test');
  let studentId: string;
  let sessionId: string;
  const { post: send } = h.as(TOKENS.ADMIN);
  const sync = (events: unknown[], token: string = TOKENS.CHAMADOR) => syncEvents(h.url, events, token);
  const mark = (over: Record<string, unknown> = {}) => ({
    eventId: randomUUID(),
    type: 'MARK_PRESENT',
    studentId,
    sessionId,
    clientTimestamp: '2026-11-26T10:00:00.000Z',
    ...over,
  });

  beforeEach(async () => {
    ({
      sessionId,
      studentIds: [studentId = ''],
    } = await h.seedRoster({ students: ['Ana'] }));
  });

  it('stores a batch and answers each event with its server timestamp and standing (read-your-writes)', async () => {
    const checkInId = randomUUID();
    const checkIn = {
      eventId: randomUUID(),
      type: 'CHECK_IN',
      studentId,
      sessionId,
      checkInId,
      clientTimestamp: '2026-11-26T09:00:00.000Z',
    };
    const checkOut = {
      eventId: randomUUID(),
      type: 'CHECK_OUT',
      studentId,
      sessionId,
      checkInId,
      pickupPerson: 'Maria',
      baseVersion: checkIn.eventId,
      clientTimestamp: '2026-11-26T11:00:00.000Z',
    };
    // The check-out arrives first in the batch: it waits for its base, and both apply.
    const r = await sync([checkOut, checkIn, mark()]);
    expect(r.failed).to.deep.equal([]);
    expect(r.conflicts).to.deep.equal([]);
    expect(r.synced.map((s) => s.status)).to.deep.equal(['APPLIED', 'APPLIED', 'APPLIED']);
    expect(r.synced.every((s) => !s.duplicate && s.serverTimestamp.endsWith('Z'))).to.equal(true);
    const aspect = (await h.svc.stores.projections.loadAspects([`checkin:${sessionId}:${studentId}`])).get(
      `checkin:${sessionId}:${studentId}`,
    );
    expect(aspect?.events.map((e) => e.eventId).sort()).to.deep.equal(
      [checkIn.eventId, checkOut.eventId].sort(),
    );
  });

  it('an event applied in order that changes nothing is reported NO_EFFECT', async () => {
    const checkIn = {
      eventId: randomUUID(),
      type: 'CHECK_IN',
      studentId,
      sessionId,
      checkInId: randomUUID(),
      clientTimestamp: '2026-11-26T09:00:00.000Z',
    };
    const secondCheckIn = {
      ...checkIn,
      eventId: randomUUID(),
      checkInId: randomUUID(),
      baseVersion: checkIn.eventId,
    };
    const strayCheckOut = {
      eventId: randomUUID(),
      type: 'CHECK_OUT',
      studentId,
      sessionId,
      checkInId: randomUUID(),
      pickupPerson: 'Maria',
      baseVersion: secondCheckIn.eventId,
      clientTimestamp: '2026-11-26T11:00:00.000Z',
    };
    const r = await sync([checkIn, secondCheckIn, strayCheckOut]);
    expect(r.synced.map((s) => s.status)).to.deep.equal(['APPLIED', 'NO_EFFECT', 'NO_EFFECT']);
  });

  it('the same events resent in a new batch with a new key are stored once and reported as duplicates', async () => {
    const events = [mark(), mark({ studentId, type: 'MARK_ABSENT', sessionId: undefined })];
    const first = await sync(events);
    const second = await sync(events);
    expect(second.synced.map((s) => s.duplicate)).to.deep.equal([true, true]);
    expect(second.synced.map((s) => s.serverTimestamp)).to.deep.equal(
      first.synced.map((s) => s.serverTimestamp),
    );
    for (const e of events) {
      expect((await h.svc.store.db.events.find({ selector: { eventId: e.eventId } })).docs).to.have.length(1);
    }
  });

  it('reports an ADMIN-precedence conflict with both ids; the CHAMADOR event is kept but superseded', async () => {
    const admin = mark({ type: 'MARK_ABSENT', clientTimestamp: '2026-11-26T09:00:00.000Z' });
    const caller = mark({ clientTimestamp: '2026-11-26T10:00:00.000Z' });
    const a = await sync([admin], TOKENS.ADMIN);
    expect(a.synced[0]?.status).to.equal('APPLIED');
    const c = await sync([caller]);
    expect(c.synced[0]?.status).to.equal('CONFLICT_SUPERSEDED');
    expect(c.conflicts).to.deep.equal([
      {
        aspect: `attendance:${studentId}:${sessionId}`,
        policy: 'ADMIN_PRECEDENCE',
        winnerEventId: admin.eventId,
        loserEventId: caller.eventId,
      },
    ]);
    expect((await h.svc.store.db.events.find({ selector: { eventId: caller.eventId } })).docs).to.have.length(
      1,
    );
  });

  it('one bad event fails alone, with a machine-readable reason and its position', async () => {
    const good = mark();
    const other = mark();
    const r = await sync([
      good,
      { ...mark(), clientTimestamp: 'yesterday' },
      { ...mark(), type: 'TELEPORT' },
      mark({ studentId: randomUUID() }),
      mark({ sessionId: randomUUID() }),
      { ...other, type: 'MARK_ABSENT' },
      other,
      {
        eventId: randomUUID(),
        type: 'STUDENT_FIELD_SET',
        studentId,
        field: 'allergies',
        value: 'amendoim',
        clientTimestamp: '2026-11-26T10:00:00.000Z',
      },
      'not an object',
    ]);
    expect(r.synced.map((s) => s.eventId)).to.deep.equal([good.eventId, other.eventId]);
    expect(r.failed.map((f) => [f.index, f.reason])).to.deep.equal([
      [1, 'VALIDATION_FAILED'],
      [2, 'UNKNOWN_TYPE'],
      [3, 'UNKNOWN_SUBJECT'],
      [4, 'UNKNOWN_SESSION'],
      [6, 'EVENT_ID_TAKEN'],
      [7, 'FORBIDDEN_ROLE'],
      [8, 'UNKNOWN_TYPE'],
    ]);
    expect(r.failed[0]?.issues).to.deep.equal([
      { path: 'body.events.1.clientTimestamp', message: 'expected a UTC ISO 8601 timestamp ending in Z' },
    ]);
  });

  it('an event with many bad fields names the first 20 and counts the rest', async () => {
    const extra = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`stray${i}`, i]));
    const r = await sync([mark(extra), mark()]);
    expect(r.synced).to.have.length(1);
    const failure = r.failed[0];
    expect(failure?.reason).to.equal('VALIDATION_FAILED');
    expect(failure?.issues?.map((i) => i.path)).to.deep.equal(
      Array.from({ length: 20 }, (_, i) => `body.events.0.stray${i}`),
    );
    expect(failure?.issuesOmitted).to.equal(30);
  });

  it('a CADASTRO may set a student field; a bad value fails with the field path', async () => {
    const field = (value: unknown) => ({
      eventId: randomUUID(),
      type: 'STUDENT_FIELD_SET',
      studentId,
      field: 'allergies',
      value,
      clientTimestamp: '2026-11-26T10:00:00.000Z',
    });
    const r = await sync([field('amendoim'), field('')], TOKENS.CADASTRO);
    expect(r.synced.map((s) => s.status)).to.deep.equal(['APPLIED']);
    expect(r.failed.map((f) => [f.index, f.reason, f.issues?.[0]?.path])).to.deep.equal([
      [1, 'VALIDATION_FAILED', 'body.events.1.value'],
    ]);
  });

  it('a deleted student takes no events', async () => {
    const del = await send(`/api/v1/students/${studentId}/delete`, { justification: 'saiu da igreja' });
    expect(del.status, del.text).to.equal(200);
    const r = await sync([mark()]);
    expect(r.failed.map((f) => f.reason)).to.deep.equal(['SUBJECT_DELETED']);
  });

  it('a resend after the child was deleted is still answered stored, in the order sent', async () => {
    const before = mark();
    const first = await sync([before]);
    const del = await send(`/api/v1/students/${studentId}/delete`, { justification: 'saiu da igreja' });
    expect(del.status, del.text).to.equal(200);
    // Another user's event under a stored id is a clash, not a resend.
    const other = mark({ eventId: before.eventId });
    const fresh = mark();
    const r = await sync([fresh, before]);
    expect(r.synced.map((s) => [s.eventId, s.duplicate, s.serverTimestamp])).to.deep.equal([
      [before.eventId, true, first.synced[0]?.serverTimestamp],
    ]);
    expect(r.failed.map((f) => [f.index, f.reason])).to.deep.equal([[0, 'SUBJECT_DELETED']]);
    const clash = await sync([other], TOKENS.ADMIN);
    expect(clash.failed.map((f) => f.reason)).to.deep.equal(['EVENT_ID_TAKEN']);
  });

  it('new events and resends mixed in one batch are answered in the order sent', async () => {
    const old = [mark(), mark({ type: 'MARK_ABSENT', sessionId: undefined })];
    await sync(old);
    const fresh = [mark({ studentId: randomUUID() }), mark({ clientTimestamp: '2026-11-26T11:00:00.000Z' })];
    const r = await sync([fresh[1], old[0], fresh[0], old[1]]);
    expect(r.synced.map((s) => [s.eventId, s.duplicate])).to.deep.equal([
      [fresh[1]?.eventId, false],
      [old[0]?.eventId, true],
      [old[1]?.eventId, true],
    ]);
    expect(r.failed.map((f) => [f.index, f.reason])).to.deep.equal([[2, 'UNKNOWN_SUBJECT']]);
  });

  it('more than 1,000 events → 413 in the envelope; 1,000 pass', async function () {
    this.timeout(120_000);
    const tooMany = await send('/api/v1/sync/events', { events: Array.from({ length: 1001 }, () => mark()) });
    const envelope = expectEnvelope(tooMany, 413, 'PAYLOAD_TOO_LARGE');
    expect(envelope.details).to.deep.include({ maxEvents: 1000, received: 1001 });
    const ok = await sync(
      Array.from({ length: 1000 }, (_, i) =>
        mark({
          clientTimestamp: `2026-11-26T10:00:${String(i % 60).padStart(2, '0')}.${String(i).padStart(3, '0')}Z`,
        }),
      ),
    );
    expect(ok.synced).to.have.length(1000);
    expect(ok.failed).to.deep.equal([]);
  });

  it('needs authentication, an Idempotency-Key, and a list of events', async () => {
    expectEnvelope(
      await call(`${h.url}/api/v1/sync/events`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"events":[]}',
      }),
      401,
      'UNAUTHORIZED',
    );
    expectEnvelope(await send('/api/v1/sync/events', { events: 'many' }), 400, 'VALIDATION_FAILED');
    const empty = await sync([]);
    expect(empty).to.deep.equal({ synced: [], conflicts: [], failed: [] });
  });
});
