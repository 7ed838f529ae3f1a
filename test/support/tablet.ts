/**
 * A tablet as the kiosk app would be: PouchDB with the memory adapter, replicating with PouchDB's own
 * replicator against `/api/v1/replication/*`, its token and device id added by the `fetch` option.
 * Two local databases, as the guide recommends: `local` receives the roster (pull only) and `outbox`
 * holds the events the tablet records (push only), so neither direction carries the other's documents.
 */
import { randomUUID } from 'node:crypto';
import MemoryAdapter from 'pouchdb-adapter-memory';
import { PouchDB } from '../../src/store/pouch.js';

PouchDB.plugin(MemoryAdapter);

export interface Tablet {
  readonly local: PouchDB.Database;
  readonly outbox: PouchDB.Database;
  readonly deviceId: string;
  remote(database: 'roster' | 'events', baseUrl?: string): PouchDB.Database;
  pull(baseUrl?: string): Promise<PouchDB.Replication.ReplicationResultComplete<object>>;
  push(baseUrl?: string): Promise<PouchDB.Replication.ReplicationResultComplete<object>>;
  /** The local documents of one docType, by id. */
  docs(docType: string): Promise<Map<string, Record<string, unknown>>>;
  close(): Promise<void>;
}

export const makeTablet = (baseUrl: string, token: string | undefined, deviceId = randomUUID()): Tablet => {
  const local = new PouchDB(`tablet-${randomUUID()}`, { adapter: 'memory' });
  const outbox = new PouchDB(`outbox-${randomUUID()}`, { adapter: 'memory' });
  const remote = (database: 'roster' | 'events', base = baseUrl) =>
    new PouchDB(`${base}/api/v1/replication/${database}`, {
      skip_setup: true,
      fetch: (url, opts) => {
        const headers = new Headers(opts?.headers);
        if (token !== undefined) headers.set('Authorization', `Bearer ${token}`);
        headers.set('X-Device-Id', deviceId);
        return PouchDB.fetch(url, { ...opts, headers });
      },
    });
  return {
    local,
    outbox,
    deviceId,
    remote,
    pull: (base) => local.replicate.from(remote('roster', base), { batch_size: 100 }),
    push: (base) => outbox.replicate.to(remote('events', base), { batch_size: 100 }),
    async docs(docType) {
      const all = await local.allDocs({ include_docs: true });
      const out = new Map<string, Record<string, unknown>>();
      for (const row of all.rows) {
        const doc: Record<string, unknown> | undefined = row.doc === undefined ? undefined : { ...row.doc };
        if (doc !== undefined && doc.docType === docType) out.set(row.id, doc);
      }
      return out;
    },
    async close() {
      await local.destroy();
      await outbox.destroy();
    },
  };
};
