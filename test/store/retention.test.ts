/**
 * What retention (decision 0045) does to the stored records, on the embedded store and on a CouchDB
 * server (which runs no guard, decision 0063): events anonymised in place or retired as marked tombstones,
 * projections rewritten or removed with what they derived, check-in records, pages, pickup lists,
 * consents and audit entries.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import type { AuditDoc } from '../../src/domain/audit.js';
import { EventDoc, eventDocId, type NewEvent } from '../../src/domain/event.js';
import { decodeChange } from '../../src/domain/eventTypes.js';
import { ANONYMISED } from '../../src/domain/retention.js';
import { type AspectEventRecord, projectAspect } from '../../src/rules/projections.js';
import {
  anonymisedAuditDetails,
  anonymisedCheckinFields,
  anonymisedConsentFields,
  anonymisedPayload,
} from '../../src/rules/retention.js';
import { auditLog } from '../../src/store/auditLog.js';
import { auditRetention } from '../../src/store/auditRetention.js';
import { checkinStore } from '../../src/store/checkins.js';
import { consentStore } from '../../src/store/consents.js';
import { eventStore } from '../../src/store/events.js';
import { pageStore } from '../../src/store/pages.js';
import { photoStore } from '../../src/store/photos.js';
import { pickupStore } from '../../src/store/pickups.js';
import { projectionStore } from '../../src/store/projections.js';
import { withdrawal } from '../../src/store/quorumWrites.js';
import { openStore, type Store, type StoreLocation } from '../../src/store/store.js';
import { decodeEventChange } from '../../src/sync/eventPipeline.js';
import { type CouchServer, couchServerLabel, startCouchServer } from '../support/couchServer.js';
import { pipelineReading } from '../support/pipelineReading.js';
import { statusOf } from '../support/pouchStatus.js';
import { makeTempDir, removeDir } from '../support/tempDir.js';

interface Backend {
  readonly name: string;
  before(): Promise<void>;
  location(): Promise<StoreLocation>;
  after(): Promise<void>;
}

const embedded = (): Backend => {
  const dirs: string[] = [];
  return {
    name: 'embedded leveldb',
    before: async () => undefined,
    async location() {
      const dir = await makeTempDir('retention');
      dirs.push(dir);
      return { kind: 'embedded', dataDir: dir, prefix: 'chamada_' };
    },
    after: async () => {
      for (const d of dirs) await removeDir(d);
    },
  };
};

const couch = (): Backend => {
  let server: CouchServer | undefined;
  return {
    name: couchServerLabel(),
    async before() {
      server = await startCouchServer();
    },
    async location() {
      if (server === undefined) throw new Error('no server');
      // A prefix per test: every database of the store afresh on the suite's one server.
      return { kind: 'couchdb', url: server.url, prefix: `r${randomUUID().replaceAll('-', '')}_` };
    },
    after: async () => server?.dispose(),
  };
};

const AT = '2026-03-10T12:00:00.000Z';
const SESSION = '11111111-1111-4111-8111-111111111111';
const STUDENT = '22222222-2222-4222-8222-222222222222';
const ASPECT = `checkin:${SESSION}:${STUDENT}`;

const event = (type: string, payload: Record<string, unknown>, extra: Partial<NewEvent> = {}): NewEvent => ({
  eventId: randomUUID(),
  type,
  subjectType: 'STUDENT',
  subjectId: STUDENT,
  payload,
  actor: { userId: 'u-1', role: 'CHAMADOR' },
  deviceId: 'd-1',
  clientTimestamp: '2026-01-05T10:00:00.000Z',
  serverTimestamp: '2026-01-05T10:00:01.000Z',
  ...extra,
});

const recordOf = (e: NewEvent): AspectEventRecord => {
  const change = decodeChange(e.type, e.payload);
  if (change === undefined) throw new Error(`undecodable ${e.type}`);
  return {
    eventId: e.eventId,
    baseVersion: e.baseVersion ?? null,
    subjectId: e.subjectId,
    userId: e.actor.userId,
    role: e.actor.role,
    deviceId: e.deviceId,
    clientTimestamp: e.clientTimestamp,
    serverTimestamp: e.serverTimestamp,
    type: e.type,
    payload: e.payload,
    change,
  };
};

for (const make of [embedded, couch]) {
  const backend = make();
  describe(`retention in the store, on ${backend.name}`, () => {
    let store: Store;
    before(() => backend.before());
    after(() => backend.after());
    beforeEach(async () => {
      store = await openStore(await backend.location());
    });
    afterEach(async () => {
      await store.close();
    });

    /** A child checked in and collected by an adult, and a concurrent check-out that lost to an ADMIN's. */
    const checkedInAndOut = async () => {
      const checkInId = randomUUID();
      const checkIn = event(
        'CHECK_IN',
        { checkInId, sessionId: SESSION, visitor: false },
        { aspect: ASPECT },
      );
      const byAdmin = event(
        'CHECK_OUT',
        { checkInId, sessionId: SESSION, pickupPerson: 'Maria Souza' },
        { aspect: ASPECT, baseVersion: checkIn.eventId, actor: { userId: 'u-2', role: 'ADMIN' } },
      );
      const atTheDoor = event(
        'CHECK_OUT',
        { checkInId, sessionId: SESSION, pickupPerson: 'Tio Zé' },
        { aspect: ASPECT, baseVersion: checkIn.eventId },
      );
      const events = [checkIn, byAdmin, atTheDoor];
      await eventStore(store.db.events).appendMany(events);
      const projection = projectAspect(ASPECT, 'checkin', [], events.map(recordOf));
      expect(projection.conflicts).to.have.length(1);
      const projections = projectionStore(store.db.projections);
      expect(
        await projections.commit({
          aspects: [{ projection, rev: undefined }],
          conflicts: projection.conflicts,
          noConflict: [],
        }),
      ).to.equal('OK');
      return { checkInId, events, projections };
    };

    it("anonymises an event's payload in place: the envelope stays, the event still decodes, and once only", async () => {
      const events = eventStore(store.db.events);
      const field = event('STUDENT_FIELD_SET', { field: 'allergies', value: 'amendoim' });
      const out = event('CHECK_OUT', { checkInId: 'c-1', sessionId: SESSION, pickupPerson: 'Maria' });
      await events.appendMany([field, out]);
      expect(
        await events.anonymise([field.eventId, out.eventId, randomUUID()], anonymisedPayload, AT),
      ).to.equal(2);
      const after = await store.db.events.get(eventDocId(out.eventId));
      expect(EventDoc.is(after)).to.equal(true);
      expect(after).to.deep.include({
        payload: { checkInId: 'c-1', sessionId: SESSION },
        anonymisedAt: AT,
        actor: out.actor,
        serverTimestamp: out.serverTimestamp,
        type: 'CHECK_OUT',
      });
      expect((await events.get(field.eventId))?.payload).to.deep.equal({ field: 'allergies' });
      expect(await events.anonymise([field.eventId, out.eventId], anonymisedPayload, AT)).to.equal(0);
    });

    it('retires an event as a tombstone that holds only its mark, which the pipeline passes over', async () => {
      const events = eventStore(store.db.events);
      const old = event(
        'MARK_PRESENT',
        { actionType: 'MARK_PRESENT' },
        { aspect: `attendance:${STUDENT}:x` },
      );
      const kept = event('MARK_PRESENT', { actionType: 'MARK_PRESENT' });
      const withdrawn = event('MARK_ABSENT', { actionType: 'MARK_ABSENT' });
      await events.appendMany([old, kept, withdrawn]);
      const stored = await store.db.events.get(eventDocId(withdrawn.eventId));
      await store.db.events.bulkDocs([withdrawal(stored._id, stored._rev)]);

      expect(await events.retire([old.eventId, randomUUID()], AT)).to.equal(1);
      expect(await events.retire([old.eventId], AT)).to.equal(0);
      expect(await events.get(old.eventId)).to.equal(undefined);
      const feed = await store.db.events.changes({ include_docs: true, doc_ids: [eventDocId(old.eventId)] });
      const change = feed.results[0];
      expect(change?.deleted).to.equal(true);
      const { _id, _rev, _deleted, ...left } = Object(change?.doc);
      expect(left).to.deep.equal({ retired: 'retention', retiredAt: AT });
      expect(
        decodeEventChange({ id: change?.id ?? '', seq: change?.seq ?? 0, deleted: true, doc: change?.doc })
          .kind,
      ).to.equal('skip');
      // A tombstone that is not a retirement is still what it was: quarantined.
      expect(
        decodeEventChange({ id: 'event:x', seq: 1, deleted: true, doc: { _deleted: true } }).kind,
      ).to.equal('quarantine');
      expect(
        await events.retiredAmong([old.eventId, kept.eventId, withdrawn.eventId, randomUUID()]),
      ).to.deep.equal(new Set([old.eventId]));
    });

    it('rewrites an aspect with anonymised events and its value folded again; a second time writes nothing', async () => {
      const { projections } = await checkedInAndOut();
      expect(await projections.anonymiseAspects([ASPECT, 'checkin:none:none'], anonymisedPayload)).to.equal(
        1,
      );
      const doc = await store.db.projections.get(`aspect:${ASPECT}`);
      expect(JSON.stringify(doc)).not.to.contain('Maria').and.not.to.contain('Tio Zé');
      const [projected] = [...(await projections.project([ASPECT])).values()];
      expect(projected?.state?.kind).to.equal('checkin');
      if (projected?.state?.kind !== 'checkin') return;
      expect(projected.state.checkins.map((c) => [c.status, c.pickupPerson])).to.deep.equal([
        ['CHECKED_OUT', null],
      ]);
      expect(await projections.anonymiseAspects([ASPECT], anonymisedPayload)).to.equal(0);
    });

    it('retires an aspect with its conflict records and admission exceptions, and nothing of another aspect', async () => {
      const { events, projections } = await checkedInAndOut();
      const checkIn = events[0];
      if (checkIn === undefined) throw new Error('no check-in');
      await projections.recordAdmissionExceptions([
        {
          aspect: ASPECT,
          kind: 'checkin',
          subjectId: STUDENT,
          policy: 'ADMISSION_RULE',
          reason: 'ROOM_FULL',
          refusals: [{ reason: 'ROOM_FULL', checkedIn: 10, capacity: 10 }],
          event: {
            eventId: checkIn.eventId,
            userId: 'u-1',
            role: 'CHAMADOR',
            deviceId: 'd-1',
            clientTimestamp: checkIn.clientTimestamp,
            serverTimestamp: checkIn.serverTimestamp,
            change: { type: 'CHECK_IN', checkInId: 'c' },
          },
          detectedAt: checkIn.serverTimestamp,
        },
      ]);
      const other = `attendance:${STUDENT}:${SESSION}`;
      const mark = recordOf(event('MARK_PRESENT', { actionType: 'MARK_PRESENT', sessionId: SESSION }));
      const markProjection = projectAspect(other, 'attendance', [], [mark]);
      await projections.commit({
        aspects: [{ projection: markProjection, rev: undefined }],
        conflicts: [],
        noConflict: [],
      });
      expect((await projections.conflicts({ limit: 10 })).length).to.equal(2);

      expect(await projections.retireAspects([ASPECT])).to.equal(1);
      expect(await projections.retireAspects([ASPECT])).to.equal(0);
      expect([...(await projections.project([ASPECT, other])).keys()]).to.deep.equal([other]);
      expect(await projections.conflicts({ limit: 10 })).to.deep.equal([]);
    });

    it('anonymises and removes check-in records, and removes pages, pickup adults and grants', async () => {
      const checkins = checkinStore(store.db.private);
      const checkInId = randomUUID();
      await checkins.applyProjected({
        checkInId,
        studentId: STUDENT,
        sessionId: SESSION,
        code: 'K7M2QX',
        status: 'CHECKED_OUT',
        checkedInAt: '2026-01-05T10:00:00.000Z',
        checkedInBy: 'u-1',
        checkedOutAt: '2026-01-05T11:00:00.000Z',
        checkedOutBy: 'u-1',
        pickupPerson: 'Maria Souza',
        emergency: true,
        justification: 'A mãe ligou do hospital',
      });
      expect(await checkins.anonymiseRecords([checkInId], anonymisedCheckinFields)).to.equal(1);
      expect(await checkins.get(checkInId)).to.deep.include({
        pickupPerson: null,
        justification: ANONYMISED,
        code: 'K7M2QX',
        status: 'CHECKED_OUT',
      });
      expect(await checkins.anonymiseRecords([checkInId], anonymisedCheckinFields)).to.equal(0);
      expect(
        await checkins.removeRecords([checkInId], [{ sessionId: SESSION, studentId: STUDENT }]),
      ).to.equal(1);
      expect(await checkins.get(checkInId)).to.equal(undefined);

      const pages = pageStore(store.db.private);
      const page = (studentId: string, seq: number) => ({
        seq,
        pageId: randomUUID(),
        checkInId,
        studentId,
        sessionId: SESSION,
        message: 'Venha à sala 3',
        status: 'SENT' as const,
        sentAt: '2026-01-05T10:30:00.000Z',
        sentBy: 'u-1',
        deviceId: null,
        phonesPaged: 1,
        phonesFailed: 0,
      });
      const other = randomUUID();
      await pages.claim(page(STUDENT, 1));
      await pages.claim(page(STUDENT, 2));
      await pages.claim(page(other, 1));
      expect((await pages.listAll()).length).to.equal(3);
      const mine = await pages.ofStudent(STUDENT);
      expect(mine.map((p) => p.seq)).to.have.members([1, 2]);
      expect(await pages.remove(mine.map((p) => p._id))).to.equal(2);
      expect((await pages.listAll()).map((p) => p.studentId)).to.deep.equal([other]);

      const pickups = pickupStore(store.db.private);
      const entry = await pickups.createEntry({
        pickupId: randomUUID(),
        studentId: STUDENT,
        name: 'Tio Zé',
        relationship: 'tio',
        phone: '11912345678',
        status: 'ACTIVE',
        otpHash: null,
        otpExpiresAt: null,
        otpAttempts: 0,
        createdBy: 'u-1',
        createdAt: AT,
        verifiedAt: AT,
      });
      await pickups.createGrant({
        authorizationId: randomUUID(),
        studentId: STUDENT,
        authorized_by_pickup_id: entry.pickupId,
        authorized_by: 'Tio Zé',
        created_by: 'u-1',
        relationship: 'vizinha',
        adultName: 'Dona Lu',
        phone: null,
        valid_from: AT,
        valid_until: AT,
        createdAt: AT,
        revokedAt: null,
        revokedBy: null,
        revocationJustification: null,
      });
      expect(await pickups.removeOfStudent(STUDENT)).to.equal(2);
      expect(await pickups.entriesOf(STUDENT)).to.deep.equal([]);
      expect(await pickups.grantsOf(STUDENT)).to.deep.equal([]);
    });

    it("anonymises a consent's names and keeps what was consented to, when and how", async () => {
      const consents = consentStore(store.db.private);
      const consent = await consents.create({
        consentId: randomUUID(),
        subject_type: 'STUDENT',
        subject_id: STUDENT,
        term_version: 'v1',
        purpose: 'Foto no crachá',
        term_text: 'Autorizo o uso da imagem…',
        granted_by_name: 'Maria Souza',
        granted_by_user_id: null,
        relationship: 'mãe',
        verification_method: 'VERIFIED_GUARDIAN_PRESENT',
        verified_by_user_id: 'u-1',
        granted_at: AT,
        revoked_at: AT,
        revoked_by_user_id: 'u-1',
        revocation_reason: 'A Maria pediu',
      });
      expect(await consents.anonymise([consent.consentId], anonymisedConsentFields)).to.equal(1);
      expect(await consents.get(consent.consentId)).to.deep.include({
        granted_by_name: ANONYMISED,
        revocation_reason: ANONYMISED,
        term_version: 'v1',
        granted_at: AT,
        verification_method: 'VERIFIED_GUARDIAN_PRESENT',
        verified_by_user_id: 'u-1',
      });
      expect(await consents.anonymise([consent.consentId], anonymisedConsentFields)).to.equal(0);
    });

    it('lists the students a photo is stored for, without reading the images', async () => {
      const photos = photoStore(store.db.private);
      const jpeg = new Uint8Array([0xff, 0xd8, 0xff, 0xd9]);
      await photos.put(
        {
          studentId: STUDENT,
          photoRef: `photos/${STUDENT}/a.jpg`,
          width: 1,
          height: 1,
          bytes: 4,
          thumbWidth: 1,
          thumbHeight: 1,
          thumbBytes: 4,
          consentId: randomUUID(),
          uploadedAt: AT,
          uploadedBy: 'u-1',
        },
        { full: jpeg, thumb: jpeg },
      );
      expect(await photos.studentsWithPhotos()).to.deep.equal([STUDENT]);
      await photos.remove(STUDENT);
      expect(await photos.studentsWithPhotos()).to.deep.equal([]);
    });

    it('reads audit entries strictly older than the cutoff, removes their subjects, and next reads from a week before where it got to', async () => {
      const log = auditLog(store.db.audit, { clock: () => new Date(AT) });
      const entry = (subject: string) => ({
        correlation_id: randomUUID(),
        actor_user_id: 'u-1',
        actor_role: 'ADMIN',
        endpoint: 'POST /api/v1/students/{studentId}/delete',
        outcome: 'SUCCESS' as const,
        details: { status: 200, deviceId: randomUUID(), studentId: subject },
        subject_id: subject,
        action: 'MUTATION' as const,
      });
      const at = async (iso: string, subject: string) =>
        log.appendKeyed(entry(subject), { at: iso, auditId: randomUUID() });
      await at('2020-01-01T00:00:00.000Z', 'old-1');
      await at('2020-06-01T00:00:00.000Z', 'old-2');
      await at('2021-01-01T00:00:00.000Z', 'at-the-cutoff');
      await at('2025-01-01T00:00:00.000Z', 'recent');
      await log.flush();
      const retention = auditRetention(store.db.audit);
      const seen = async (before: string): Promise<AuditDoc[]> => {
        const out: AuditDoc[] = [];
        await retention.eachBefore(before, async (page) => {
          out.push(...page);
        });
        return out;
      };
      const cutoff = '2021-01-01T00:00:00.000Z';
      const old = await seen(cutoff);
      expect(old.map((e) => e.subject_id)).to.deep.equal(['old-1', 'old-2']);
      expect(await retention.anonymise(old, (d) => anonymisedAuditDetails(d, AT))).to.equal(2);
      const page = await log.query({ limit: 10 });
      if (page._tag === 'Left') throw new Error('no page');
      // Newest first: the two within the period as they were, the two older without their subject.
      const items = page.right.items;
      expect(items.map((i) => i.subject_id)).to.deep.equal(['recent', 'at-the-cutoff', null, null]);
      expect(items[0]?.details).to.include({ studentId: 'recent', status: 200 });
      expect(items.slice(2).map((i) => i.details)).to.deep.equal([
        { status: 200, anonymisedAt: AT },
        { status: 200, anonymisedAt: AT },
      ]);
      expect(items.slice(2).map((i) => [i.actor_user_id, i.endpoint, i.outcome, i.action])).to.deep.equal([
        ['u-1', 'POST /api/v1/students/{studentId}/delete', 'SUCCESS', 'MUTATION'],
        ['u-1', 'POST /api/v1/students/{studentId}/delete', 'SUCCESS', 'MUTATION'],
      ]);
      await retention.markDone(cutoff);
      // Written late with an older time: within the week before the checkpoint it is read, before it not.
      await at('2020-12-28T00:00:00.000Z', 'late-within-a-week');
      await at('2020-12-01T00:00:00.000Z', 'late-long-before');
      await log.flush();
      expect((await seen('2021-01-02T00:00:00.000Z')).map((e) => e.subject_id)).to.deep.equal([
        'late-within-a-week',
        'at-the-cutoff',
      ]);
      // A checkpoint never moves back.
      await retention.markDone('2020-01-01T00:00:00.000Z');
      expect((await seen('2021-01-02T00:00:00.000Z')).length).to.equal(2);
      await log.close();
    });
  });
}

/**
 * Retention's two marked writes on a CouchDB-protocol server with no guard (decision 0063): the writes
 * are stored, and the pipeline's reading of each (`decodeEventChange` on the feed's change) tells
 * them from any other change of an event, which it reports as a quarantine.
 */
describe(`the pipeline tells retention's two marked writes from any other change of an event, on ${couchServerLabel()}`, () => {
  let server: CouchServer;
  let store: Store;
  before(async () => {
    server = await startCouchServer();
  });
  after(() => server.dispose());
  beforeEach(async () => {
    store = await openStore({
      kind: 'couchdb',
      url: server.url,
      prefix: `g${randomUUID().replaceAll('-', '')}_`,
    });
  });
  afterEach(() => store.close());

  const stored = async () => {
    const e = event(
      'CHECK_OUT',
      { checkInId: 'c-1', sessionId: SESSION, pickupPerson: 'Maria' },
      { aspect: ASPECT, baseVersion: null },
    );
    await eventStore(store.db.events).append(e);
    return store.db.events.get(eventDocId(e.eventId));
  };

  const readByPipeline = (id: string) => pipelineReading(store.db.events, id);

  it('an anonymisation is one of its writes only when marked', async () => {
    const doc = await stored();
    const anonymised = { ...doc, payload: { checkInId: 'c-1', sessionId: SESSION }, anonymisedAt: AT };
    expect(await readByPipeline(doc._id)).to.equal('aspect');
    // Without the mark it is any other change of an event: reported.
    const { anonymisedAt: _a, ...unmarked } = anonymised;
    expect(await statusOf(store.db.events.put(unmarked))).to.equal(200);
    expect(await readByPipeline(doc._id)).to.equal('REWRITTEN');
    const other = await stored();
    expect(
      await statusOf(
        store.db.events.put({
          ...other,
          payload: { checkInId: 'c-1', sessionId: SESSION },
          anonymisedAt: AT,
        }),
      ),
    ).to.equal(200);
    expect(await readByPipeline(other._id)).to.equal('aspect');
    // Marked, but changed again after: one generation past the anonymisation, reported.
    const again = await store.db.events.get(other._id);
    expect(await statusOf(store.db.events.put({ ...again, type: 'CHECK_IN' }))).to.equal(200);
    expect(await readByPipeline(other._id)).to.equal('REWRITTEN');
  });

  it('a deletion is one of its writes only as a retirement', async () => {
    const byHand = await stored();
    expect(await statusOf(store.db.events.remove(byHand._id, byHand._rev))).to.equal(200);
    expect(await readByPipeline(byHand._id)).to.equal('DELETED');
    const markedOtherwise = await stored();
    expect(
      await statusOf(
        store.db.events.put({
          _id: markedOtherwise._id,
          _rev: markedOtherwise._rev,
          _deleted: true,
          retired: 'by hand',
        }),
      ),
    ).to.equal(200);
    expect(await readByPipeline(markedOtherwise._id)).to.equal('DELETED');
    const retired = await stored();
    expect(
      await statusOf(
        store.db.events.put({ _id: retired._id, _rev: retired._rev, _deleted: true, retired: 'retention' }),
      ),
    ).to.equal(200);
    expect(await readByPipeline(retired._id)).to.equal('skip');
  });
});
