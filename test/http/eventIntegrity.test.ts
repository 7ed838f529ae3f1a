/**
 * The events database has no guard of its own (decision 0063): an event changed or deleted past the
 * service is reported by the pipeline, black-box through the real app on each kind of store. Embedded:
 * written straight into the store's database under the API; CouchDB: through the server's HTTP API.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { AuditPage } from '../../src/domain/audit.js';
import { EventDoc } from '../../src/domain/event.js';
import { PIPELINE_ENDPOINT } from '../../src/sync/projector.js';
import type { CouchServer } from '../support/couchServer.js';
import { couchFetch, couchServerLabel } from '../support/couchServer.js';
import { type ServiceHarness, useService, useServiceOnCouch } from '../support/harness.js';
import { decodeAs } from '../support/http.js';
import { parseExposition, sampleSum } from '../support/prometheus.js';
import { readUntil } from '../support/readUntil.js';
import { seedRoster } from '../support/seed.js';

const TOKEN = 'metrics-token-0123456789-abcdefghijklmnop';
const env = { METRICS_TOKEN: TOKEN };

type Write = (doc: Record<string, unknown>) => Promise<void>;

const backends: ReadonlyArray<readonly [string, () => { h: ServiceHarness; write: () => Write }]> = [
  [
    'embedded',
    () => {
      const h = useService({ env }, 'test');
      return { h, write: () => async (doc) => void (await h.svc.store.db.events.put(doc)) };
    },
  ],
  [
    couchServerLabel(),
    () => {
      const { h, couch } = useServiceOnCouch({ env }, 'test');
      const write =
        (): Write =>
        async (doc): Promise<void> => {
          const server: CouchServer = couch();
          const prefix = new URL(h.svc.store.db.events.name).pathname.split('/').pop() ?? '';
          const r = await couchFetch(`${server.url}/${prefix}/${encodeURIComponent(String(doc._id))}`, {
            method: 'PUT',
            body: JSON.stringify(doc),
          });
          expect(r.ok, await r.text()).to.equal(true);
        };
      return { h, write };
    },
  ],
];

for (const [backend, setUp] of backends)
  describe(`an event changed past the service, on ${backend}`, function () {
    this.timeout(60_000);
    const { h, write } = setUp();

    const quarantined = async (reason: string) => {
      const r = await fetch(`${h.url}/metrics`, { headers: { Authorization: `Bearer ${TOKEN}` } });
      return sampleSum(parseExposition(await r.text()), 'chamada_pipeline_quarantined_total', { reason });
    };

    /** A student's STUDENT_CREATED event, created through the API. */
    const createdEvent = async () => {
      const { studentIds } = await seedRoster(h.url, {
        className: `Sala ${randomUUID().slice(0, 6)}`,
        students: ['Ana'],
      });
      const [studentId] = studentIds;
      const all = await h.svc.store.db.events.allDocs({ include_docs: true });
      const found = all.rows.flatMap((row) => {
        const doc = EventDoc.decode(row.doc);
        return doc._tag === 'Right' &&
          doc.right.type === 'STUDENT_CREATED' &&
          doc.right.subjectId === studentId
          ? [row.doc]
          : [];
      });
      if (found[0] === undefined) throw new Error('no STUDENT_CREATED event');
      return found[0];
    };

    const pipelineEntries = async () =>
      decodeAs(
        AuditPage,
        (await h.get(`/api/v1/audit-logs?endpoint=${encodeURIComponent(PIPELINE_ENDPOINT)}&limit=200`)).json,
      ).items.filter((e) => e.action === 'QUARANTINE');

    it('a rewritten event: a metric, a log line with its id, and a QUARANTINE entry admins read', async () => {
      const stored = await createdEvent();
      await h.svc.deps.sync.pipeline.catchUp();
      const before = await quarantined('REWRITTEN');
      await write()({ ...stored, payload: { displayName: 'Someone else' } });
      await h.svc.deps.sync.pipeline.catchUp();
      expect((await quarantined('REWRITTEN')) - before).to.equal(1);
      expect(
        h.svc.logLines().filter((l) => l.docId === stored._id && l.reason === 'REWRITTEN'),
        'a log line naming the event',
      ).to.have.length(1);
      const entries = await readUntil(pipelineEntries, (items) => items.length > 0);
      expect(entries.map((e) => e.details)).to.deep.equal([
        { code: 'QUARANTINED', reason: 'REWRITTEN', docId: stored._id },
      ]);
      expect(entries.map((e) => e.outcome)).to.deep.equal(['FAILURE']);
    });

    it('an event deleted without a mark is reported too; the events the service wrote are not', async () => {
      const stored = await createdEvent();
      await h.svc.deps.sync.pipeline.catchUp();
      await write()({ _id: stored._id, _rev: stored._rev, _deleted: true });
      await h.svc.deps.sync.pipeline.catchUp();
      const entries = await readUntil(pipelineEntries, (items) => items.length > 0);
      expect(entries.map((e) => e.details)).to.deep.equal([
        { code: 'QUARANTINED', reason: 'DELETED', docId: stored._id },
      ]);
      expect(await quarantined('REWRITTEN')).to.equal(0);
    });
  });
