/**
 * The sync service on a real embedded store, with an events store that behaves as a CouchDB cluster
 * can while two instances race on one event (decision 0023): the write is refused as a conflict by a
 * copy its writer withdraws a moment later, so the read that follows finds nothing.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { Actor } from '../../src/domain/principal.js';
import { classStore } from '../../src/store/classes.js';
import { type EventStore, eventStore } from '../../src/store/events.js';
import { isStoreUnavailable } from '../../src/store/storeErrors.js';
import { studentStore } from '../../src/store/students.js';
import { syncService } from '../../src/sync/syncService.js';
import { aStudentRecord } from '../support/fixtures.js';
import { embeddedStore } from '../support/storeBackends.js';

const actor: Actor = {
  principal: {
    userId: 'chamador-1',
    roles: ['CHAMADOR'],
    primaryRole: 'CHAMADOR',
    permissions: ['attendance'],
    authMode: 'dev',
  },
  deviceId: randomUUID(),
};

describe('sync service: an event whose stored copy was withdrawn before it could be read back', () => {
  const store = embeddedStore('sync-service', 'test', 't_');

  /** The service over an events store whose first `refusals` writes of each event meet a withdrawn copy. */
  const serviceWith = (refusals: number) => {
    const real = eventStore(store().db.events);
    const refused = new Map<string, number>();
    const events: EventStore = {
      ...real,
      async appendMany(batch) {
        const meets = batch.filter((e) => (refused.get(e.eventId) ?? 0) < refusals);
        for (const e of meets) refused.set(e.eventId, (refused.get(e.eventId) ?? 0) + 1);
        const out = await real.appendMany(batch.filter((e) => !meets.includes(e)));
        for (const e of meets) out.set(e.eventId, 'duplicate');
        return out;
      },
    };
    const students = studentStore(store().db.private);
    return {
      students,
      service: syncService({
        events,
        students,
        classes: classStore(store().db.private),
        pipeline: { settle: async () => new Map() },
        clock: () => new Date('2026-11-27T10:00:00.000Z'),
      }),
    };
  };
  const marks = (studentId: string) =>
    Array.from({ length: 3 }, (_, i) => ({
      eventId: randomUUID(),
      type: 'MARK_PRESENT',
      studentId,
      clientTimestamp: `2026-11-2${i + 1}T09:00:00.000Z`,
    }));

  it('writes it again and answers it stored, never "this eventId belongs to another event"', async () => {
    const { students, service } = serviceWith(2);
    const child = await students.create(aStudentRecord());
    const sent = marks(child.studentId);
    const answer = await service.sync(actor, sent, { settle: false });
    expect(answer.failed).to.deep.equal([]);
    expect(answer.synced.map((s) => [s.eventId, s.duplicate])).to.deep.equal(
      sent.map((e) => [e.eventId, false]),
    );
    const stored = await eventStore(store().db.events).getMany(sent.map((e) => e.eventId));
    expect(stored.size).to.equal(sent.length);
  });

  it('answers 503 (the batch is sent again) when the copy stays unreadable, and stores nothing of it', async () => {
    const { students, service } = serviceWith(100);
    const child = await students.create(aStudentRecord());
    const sent = marks(child.studentId);
    const failure = await service.sync(actor, sent, { settle: false }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isStoreUnavailable(failure), String(failure)).to.equal(true);
    expect((await eventStore(store().db.events).getMany(sent.map((e) => e.eventId))).size).to.equal(0);
  });

  it("keeps an ADMIN's override of a device's check-in in the stored payload, and drops anyone else's", async () => {
    const { students, service } = serviceWith(0);
    const classes = classStore(store().db.private);
    const at = { createdAt: '2026-11-27T09:00:00.000Z', updatedAt: '2026-11-27T09:00:00.000Z' };
    const { classId } = await classes.createClass({ name: 'Turma', nucleusId: null, ...at });
    const none = { nucleusId: null, title: null, startsAt: null, endsAt: null };
    const { sessionId } = await classes.createSession({ classId, date: '2026-11-27', ...none, ...at });
    const admin: Actor = {
      ...actor,
      principal: { ...actor.principal, userId: 'admin-1', roles: ['ADMIN'], primaryRole: 'ADMIN' },
    };
    const storedPayload = async (who: Actor) => {
      const child = await students.create(aStudentRecord());
      const eventId = randomUUID();
      const checkIn = {
        eventId,
        type: 'CHECK_IN',
        studentId: child.studentId,
        sessionId,
        checkInId: randomUUID(),
      };
      const override = { justification: 'A mãe fica na sala com ela.' };
      const answer = await service.sync(who, [{ ...checkIn, clientTimestamp: at.createdAt, override }], {
        settle: false,
      });
      expect(answer.failed).to.deep.equal([]);
      return (await eventStore(store().db.events).getMany([eventId])).get(eventId)?.payload;
    };
    expect(await storedPayload(admin)).to.deep.include({
      override: { justification: 'A mãe fica na sala com ela.' },
    });
    expect(await storedPayload(actor)).not.to.have.property('override');
  });
});
