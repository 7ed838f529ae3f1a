/**
 * A change feed that starts over. On a CouchDB cluster `_changes` sequences are opaque, and after a
 * node fails a feed may resume from an earlier point than the one it had reached: every consumer must
 * take events it has already seen without a second effect (decision 0023). The harshest form of it: the
 * pipeline's checkpoint is gone and a new process reads the whole feed again.
 */
import { randomUUID } from 'node:crypto';
import canonicalize from 'canonicalize';
import { expect } from 'chai';
import type { Database } from '../../src/store/pouch.js';
import { PouchDB } from '../../src/store/pouch.js';
import { couchServerLabel, startCouchServer } from '../support/couchServer.js';
import { call } from '../support/http.js';
import { seedSmallRoster, syncEvents } from '../support/seed.js';
import { snapshot } from '../support/snapshot.js';
import { DEV_TOKENS, mutationHeaders, startTestService, type TestService } from '../support/testService.js';

const today = () => new Date().toISOString().slice(0, 10);

/** Reads until two reads 200 ms apart agree: a range read on a cluster may lag a write by a moment. */
const settled = async (read: () => Promise<unknown>): Promise<string> => {
  let last = canonicalize(await read()) ?? '';
  for (const deadline = Date.now() + 10_000; Date.now() < deadline; ) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    const again = canonicalize(await read()) ?? '';
    if (again === last) return last;
    last = again;
  }
  return last;
};

const ids = async (db: Database, prefix: string): Promise<string[]> =>
  (await db.allDocs({ startkey: prefix, endkey: `${prefix}\ufff0` })).rows.map((r) => r.id);

/**
 * The audit entries the replay could have written. Every start runs the retention job, which audits
 * its run (decision 0045): the second process adds that one entry whatever the feed does.
 */
const auditIds = async (db: Database): Promise<string[]> =>
  (await db.allDocs({ startkey: 'audit:', endkey: 'audit:\ufff0', include_docs: true })).rows
    .filter((r) => Reflect.get(Object(r.doc), 'endpoint') !== 'JOB /retention')
    .map((r) => r.id);

describe(`a change feed that starts over, on ${couchServerLabel()}`, function () {
  this.timeout(240_000);

  it('reading every event again from the start changes no projection, no check-in record and no audit entry', async () => {
    const couch = await startCouchServer();
    let svc: TestService | undefined;
    try {
      svc = await startTestService({ env: { COUCHDB_URL: couch.url } });
      const url = svc.url;
      const { sessionId, studentIds } = await seedSmallRoster(url, ['Ana', 'Bia', 'Caio', 'Davi'], today());
      // Desk check-ins, then two tablets marking the same children: ADMIN and CHAMADOR conflicts.
      for (const studentId of studentIds.slice(0, 2)) {
        const r = await call(`${url}/api/v1/check-in`, {
          method: 'POST',
          headers: mutationHeaders(DEV_TOKENS.DEV_CALLER_TOKEN),
          body: JSON.stringify({ sessionId, studentId }),
        });
        expect(r.status, r.text).to.equal(201);
      }
      const mark = (type: string, studentId: string, minute: number) => ({
        eventId: randomUUID(),
        type,
        studentId,
        sessionId,
        clientTimestamp: `${today()}T09:${String(minute).padStart(2, '0')}:00.000Z`,
      });
      await syncEvents(
        url,
        studentIds.map((s, i) => mark('MARK_PRESENT', s, 10 + i)),
        DEV_TOKENS.DEV_CALLER_TOKEN,
      );
      const answer = await syncEvents(
        url,
        studentIds.map((s, i) => mark('MARK_ABSENT', s, i)),
        DEV_TOKENS.DEV_ADMIN_TOKEN,
      );
      expect(answer.conflicts.length, 'the two tablets disagreed').to.be.greaterThan(0);
      await svc.deps.sync.pipeline.catchUp();
      const { store } = svc;
      const before = {
        projections: await settled(() => snapshot(store.db.projections)),
        checkins: await settled(() => ids(store.db.private, 'checkin:')),
        audit: await settled(() => auditIds(store.db.audit)),
      };
      expect(before.projections, 'conflict records to replay').to.include('"docType":"conflict"');
      await svc.dispose();
      svc = undefined;

      // The checkpoint is gone: the next process starts the feed from its beginning.
      const projections = new PouchDB(`${couch.url}/chamada_projections`);
      await projections.remove(await projections.get('_local/event-pipeline'));
      await projections.close();

      svc = await startTestService({ env: { COUCHDB_URL: couch.url } });
      await svc.deps.sync.pipeline.catchUp();
      const again = svc.store;
      expect(await settled(() => snapshot(again.db.projections)), 'projections').to.equal(before.projections);
      expect(await settled(() => ids(again.db.private, 'checkin:')), 'check-in records').to.equal(
        before.checkins,
      );
      expect(await settled(() => auditIds(again.db.audit)), 'audit entries').to.equal(before.audit);
    } finally {
      await svc?.dispose();
      await couch.dispose();
    }
  });
});
