/**
 * Tablet replication with the real PouchDB replicator (pouchdb-node, memory adapter) against the
 * running service: pulls of the minimised roster, pushes of offline events, live sync, access. On the
 * embedded store under `npm test`; on a real CouchDB (one node or a cluster, whose `_changes`
 * sequences are opaque strings) under `npm run test:couchdb`.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import {
  type CouchServer,
  couchServerLabel,
  onRealCouch,
  startCouchServer,
  untilCopiesAgree,
} from '../support/couchServer.js';
import { TOKENS, useService } from '../support/harness.js';
import { call, expectEnvelope } from '../support/http.js';
import { uploadTestPhoto } from '../support/photo.js';
import { createdId, seedSmallRoster } from '../support/seed.js';
import { makeTablet, type Tablet } from '../support/tablet.js';
import { authHeaders, mutationHeaders } from '../support/testService.js';

const today = () => new Date().toISOString().slice(0, 10);

// The service's store: embedded, or the real CouchDB of `npm run test:couchdb` (express-pouchdb adds
// nothing here that the store suites do not cover).
const backends = onRealCouch() ? [couchServerLabel()] : ['the embedded store'];

for (const backend of backends)
  describe(`tablet replication (PouchDB replicator) on ${backend}`, function () {
    this.timeout(120_000);
    let couch: CouchServer | undefined;
    const h = useService(async () => {
      couch = onRealCouch() ? await startCouchServer() : undefined;
      return couch === undefined ? {} : { env: { COUCHDB_URL: couch.url } };
    }, 'test');
    let tablets: Tablet[];
    let classId: string;
    let sessionId: string;
    let ana: string;
    let bruno: string;
    const tablet = (token: string | undefined = TOKENS.CHAMADOR) => {
      const t = makeTablet(h.url, token);
      tablets.push(t);
      return t;
    };
    const send = (method: string, path: string, body: unknown, token: string = TOKENS.ADMIN) =>
      call(`${h.url}${path}`, { method, headers: mutationHeaders(token), body: JSON.stringify(body) });
    /**
     * The pipeline caught up and a full roster pass after it. On a cluster the pass reads its records
     * and projections by range, and a tablet's pull reads the roster's `_changes`: one copy of each
     * shard, which may lag a write a moment (decision 0023). So each reads once every copy agrees.
     */
    const settled = async () => {
      await h.svc.deps.sync.pipeline.catchUp();
      if (couch !== undefined) await untilCopiesAgree(couch);
      await h.svc.deps.replication.reconciler.refresh();
      if (couch !== undefined) await untilCopiesAgree(couch);
    };

    beforeEach(async () => {
      tablets = [];
      const roster = await seedSmallRoster(h.url, ['Ana'], today());
      classId = roster.classId;
      sessionId = roster.sessionId;
      ana = roster.studentIds[0] ?? '';
      bruno = await createdId(
        h.url,
        '/api/v1/students',
        {
          displayName: 'Bruno',
          guardianName: 'Carla Souza',
          phones: [{ number: '+55 11 98765-4321', qualifier: 'mãe' }],
          birthDate: '2019-05-04',
          address: { street: 'Rua das Flores', number: '12', city: 'São Paulo' },
          allergies: 'Amendoim',
          classId,
        },
        'studentId',
      );
      await settled();
    });
    afterEach(async () => {
      // After the service's own stop: the tablets are in memory, the server goes last.
      for (const t of tablets) await t.close();
      await couch?.dispose();
    });

    it('first pull: a minimised roster, and nothing a tablet must not hold', async () => {
      const t = tablet();
      const result = await t.pull();
      expect(result.ok).to.equal(true);
      const students = await t.docs('rosterStudent');
      expect([...students.keys()].sort()).to.deep.equal([`student:${ana}`, `student:${bruno}`].sort());
      const b = students.get(`student:${bruno}`);
      expect(b).to.deep.include({ displayName: 'Bruno', allergies: 'Amendoim', classId, photoRef: null });
      expect(b?.pickup).to.deep.equal([
        { name: 'Carla Souza', level: 'N1', relationship: 'guardian', phoneSuffixes: ['4321'] },
      ]);
      const everything = JSON.stringify((await t.local.allDocs({ include_docs: true })).rows);
      for (const secret of [
        '98765',
        'Rua das Flores',
        '2019-05-04',
        'birthDate',
        'address',
        'phones',
        'passwordHash',
      ]) {
        expect(everything, secret).not.to.contain(secret);
      }
      expect([...(await t.docs('rosterSession')).keys()]).to.deep.equal([`session:${sessionId}`]);
      const keys = (await t.docs('rosterDayKeys')).get('daykeys')?.keys;
      expect(keys).to.have.length(3);
      expect([...(await t.docs('rosterClass')).keys()]).to.deep.equal([`class:${classId}`]);
    });

    it('incremental pull: a change arrives, and a deleted student arrives as a deletion', async () => {
      const t = tablet();
      await t.pull();
      expect((await send('PATCH', `/api/v1/students/${ana}`, { displayName: 'Ana Clara' })).status).to.equal(
        200,
      );
      const del = await send('POST', `/api/v1/students/${bruno}/delete`, {
        justification: 'mudou de cidade',
      });
      expect(del.status, del.text).to.equal(200);
      await settled();
      const second = await t.pull();
      expect(second.docs_read).to.be.greaterThan(0);
      const students = await t.docs('rosterStudent');
      expect([...students.keys()]).to.deep.equal([`student:${ana}`]);
      expect(students.get(`student:${ana}`)?.displayName).to.equal('Ana Clara');
      // The tablet saw the deletion itself, not just an absence.
      const gone = await t.local.get(`student:${bruno}`).catch((e: unknown) => e);
      expect(gone).to.deep.include({ status: 404, reason: 'deleted' });
    });

    it('pushed offline events are stored, decided, and their outcome comes back on the next pull', async () => {
      const t = tablet();
      await t.pull();
      const checkInId = randomUUID();
      const checkIn = {
        _id: '',
        eventId: randomUUID(),
        type: 'CHECK_IN',
        studentId: ana,
        sessionId,
        checkInId,
        clientTimestamp: new Date().toISOString(),
      };
      checkIn._id = `event:${checkIn.eventId}`;
      await t.outbox.put(checkIn);
      const pushed = await t.push();
      expect(pushed.docs_written).to.equal(1);
      expect(pushed.doc_write_failures).to.equal(0);
      await settled();
      await t.pull();
      const state = (await t.docs('rosterCheckin')).get(`checkin:${sessionId}:${ana}`);
      expect(state).to.deep.include({ version: checkIn.eventId });
      expect(state?.checkins).to.deep.equal([
        {
          checkInId,
          status: 'CHECKED_IN',
          checkedInAt: checkIn.clientTimestamp,
          checkedOutAt: null,
          emergency: false,
        },
      ]);
      // The desk sees the tablet's check-in.
      const desk = await call(`${h.url}/api/v1/check-in/active?checkInId=${checkInId}`, {
        headers: authHeaders(TOKENS.CHAMADOR),
      });
      expect(desk.status).to.equal(200);
      // Pushing again sends nothing: the server holds the event.
      expect((await t.push()).docs_written).to.equal(0);
    });

    it('two offline tablets, ADMIN and CHAMADOR, mark the same child: both pull the ADMIN outcome', async () => {
      const admin = tablet(TOKENS.ADMIN);
      const caller = tablet(TOKENS.CHAMADOR);
      const mark = (type: string, at: string) => {
        const eventId = randomUUID();
        return { _id: `event:${eventId}`, eventId, type, studentId: ana, sessionId, clientTimestamp: at };
      };
      const at = (minutes: number) => new Date(Date.now() - minutes * 60_000).toISOString();
      // The ADMIN marked first, offline; the CHAMADOR marked later from the same (no) version.
      await admin.outbox.put(mark('MARK_ABSENT', at(30)));
      await caller.outbox.put(mark('MARK_PRESENT', at(10)));
      await caller.push();
      await admin.push();
      await settled();
      for (const t of [admin, caller]) {
        await t.pull();
        expect((await t.docs('rosterMark')).get(`attendance:${ana}:${sessionId}`)?.mark).to.equal('ABSENT');
      }
    });

    it('a forbidden pushed document fails alone; the rest of the batch goes through', async () => {
      const t = tablet();
      const good = {
        eventId: randomUUID(),
        type: 'MARK_PRESENT',
        studentId: ana,
        sessionId,
        clientTimestamp: new Date().toISOString(),
      };
      const unknown = { ...good, eventId: randomUUID(), studentId: randomUUID() };
      const malformed = { eventId: randomUUID(), type: 'MARK_PRESENT', studentId: 'nope' };
      for (const e of [good, unknown, malformed]) await t.outbox.put({ _id: `event:${e.eventId}`, ...e });
      await t.outbox.put({ _id: 'note:1', text: 'not an event' });
      const pushed = await t.push();
      expect(pushed.docs_written).to.equal(1);
      expect(pushed.doc_write_failures).to.equal(3);
      expect(
        await h.svc.stores.events.getMany([good.eventId, unknown.eventId, malformed.eventId]),
      ).to.have.keys([good.eventId]);
    });

    it('live sync over longpoll delivers a change without a new replication', async () => {
      const t = tablet();
      await t.pull();
      const live = t.local.replicate.from(t.remote('roster'), { live: true, retry: false });
      try {
        expect((await send('PATCH', `/api/v1/students/${ana}`, { displayName: 'Ana Live' })).status).to.equal(
          200,
        );
        await settled();
        const deadline = Date.now() + 15_000;
        let name: unknown;
        while (Date.now() < deadline) {
          name = (await t.docs('rosterStudent')).get(`student:${ana}`)?.displayName;
          if (name === 'Ana Live') break;
          await new Promise((r) => setTimeout(r, 50));
        }
        expect(name).to.equal('Ana Live');
      } finally {
        live.cancel();
      }
    });

    it('photo references reach tablets only while an image consent is active', async () => {
      const consent = await send('POST', '/api/v1/image-consents', {
        subject_type: 'STUDENT',
        subject_id: ana,
        term_version: 'v1',
        purpose: 'crachá',
        term_text: 'Autorizo o uso da imagem no crachá.',
        granted_by_name: 'Mãe da Ana',
        relationship: 'mãe',
        verification_method: 'VERIFIED_GUARDIAN_PRESENT',
      });
      expect(consent.status, consent.text).to.equal(201);
      const photoRef = await uploadTestPhoto(h.url, ana, authHeaders(TOKENS.ADMIN));
      await settled();
      const t = tablet();
      await t.pull();
      expect((await t.docs('rosterStudent')).get(`student:${ana}`)?.photoRef).to.equal(photoRef);
      expect((await t.docs('rosterStudent')).get(`student:${bruno}`)?.photoRef).to.equal(null);
    });

    it('filter=_doc_ids and filter=_selector pull only what they name', async () => {
      const byIds = makeTablet(h.url, TOKENS.CHAMADOR);
      tablets.push(byIds);
      await byIds.local.replicate.from(byIds.remote('roster'), { doc_ids: [`student:${ana}`, 'daykeys'] });
      expect((await byIds.local.allDocs()).rows.map((r) => r.id).sort()).to.deep.equal([
        'daykeys',
        `student:${ana}`,
      ]);
      const bySelector = makeTablet(h.url, TOKENS.CHAMADOR);
      tablets.push(bySelector);
      await bySelector.local.replicate.from(bySelector.remote('roster'), {
        selector: { docType: 'rosterStudent' },
      });
      expect((await bySelector.local.allDocs()).rows.map((r) => r.id).sort()).to.deep.equal(
        [`student:${ana}`, `student:${bruno}`].sort(),
      );
    });

    it('answers the per-document open_revs fallback, and 404 for a document it does not hold', async () => {
      const headers = authHeaders(TOKENS.CHAMADOR);
      const changes = await call(
        `${h.url}/api/v1/replication/roster/_changes?filter=_doc_ids&doc_ids=${encodeURIComponent(JSON.stringify([`student:${ana}`]))}`,
        { headers },
      );
      const rev = JSON.stringify(changes.json).match(/"rev":"([^"]+)"/)?.[1] ?? '';
      expect(rev).to.match(/^\d+-/);
      const open = await call(
        `${h.url}/api/v1/replication/roster/student:${ana}?revs=true&latest=true&open_revs=${encodeURIComponent(JSON.stringify([rev]))}`,
        { headers },
      );
      expect(open.status, open.text).to.equal(200);
      expect(JSON.stringify(open.json))
        .to.contain('"ok"')
        .and.to.contain('"_revisions"')
        .and.to.contain('Ana');
      const missing = await call(`${h.url}/api/v1/replication/roster/student:${randomUUID()}`, { headers });
      expectEnvelope(missing, 404, 'NOT_FOUND');
    });

    it("a desk check-in reaches tablets through the roster's partial pass (no full refresh)", async () => {
      const t = tablet();
      await t.pull();
      const desk = await send('POST', '/api/v1/check-in', { studentId: ana, sessionId }, TOKENS.CHAMADOR);
      expect(desk.status, desk.text).to.equal(201);
      const deadline = Date.now() + 10_000;
      let state: Record<string, unknown> | undefined;
      while (Date.now() < deadline && state === undefined) {
        await t.pull();
        state = (await t.docs('rosterCheckin')).get(`checkin:${sessionId}:${ana}`);
        if (state === undefined) await new Promise((r) => setTimeout(r, 50));
      }
      expect(state?.checkins).to.have.length(1);
      expect(state?.version).to.be.a('string');
    });

    it('checkpoints are kept per user and device', async () => {
      const first = tablet();
      await first.pull();
      const other = makeTablet(h.url, TOKENS.CHAMADOR);
      tablets.push(other);
      // Another device starts from nothing: it reads every document, not the first device's position.
      const result = await other.pull();
      expect(result.docs_read).to.be.greaterThan(3);
    });

    it('401 without a token, 403 for RELATORIOS, in the envelope; nothing else is exposed', async () => {
      const anonymous = await call(`${h.url}/api/v1/replication/roster/_changes`);
      expectEnvelope(anonymous, 401, 'UNAUTHORIZED');
      const reports = await call(`${h.url}/api/v1/replication/roster/_changes`, {
        headers: authHeaders(TOKENS.RELATORIOS),
      });
      expectEnvelope(reports, 403, 'FORBIDDEN_ROLE');
      const noDevice = await call(`${h.url}/api/v1/replication/roster/_changes`, {
        headers: { Authorization: `Bearer ${TOKENS.CHAMADOR}` },
      });
      expectEnvelope(noDevice, 400, 'VALIDATION_FAILED');
      const failed = await tablet(TOKENS.RELATORIOS)
        .pull()
        .catch((e: unknown) => e);
      expect(failed).to.deep.include({ status: 403 });
      const asCaller = authHeaders(TOKENS.CHAMADOR);
      for (const [method, path] of [
        ['GET', '/api/v1/replication/_all_dbs'],
        ['PUT', '/api/v1/replication/newdb'],
        ['DELETE', '/api/v1/replication/roster'],
        ['GET', '/api/v1/replication/events/_changes'],
        ['POST', '/api/v1/replication/roster/_bulk_docs'],
        ['GET', '/api/v1/replication/roster/_design/idx-by-docType'],
        ['GET', '/api/v1/replication/roster/_all_docs'],
        ['GET', '/api/v1/replication/events/some-doc'],
      ] as const) {
        const r = await call(`${h.url}${path}`, {
          method,
          headers: { ...asCaller, 'Content-Type': 'application/json' },
          ...(method === 'GET' ? {} : { body: '{}' }),
        });
        expectEnvelope(r, 404, 'NOT_FOUND');
      }
    });
  });
