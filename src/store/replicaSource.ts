/**
 * The roster database as a replication source (read only): what the `/api/v1/replication/roster`
 * endpoints answer, in CouchDB's shapes, straight from PouchDB. Nothing here writes.
 */
import { waitAtMost } from '../lib/timeouts.js';
import type { Database } from './pouch.js';

export interface ChangesQuery {
  readonly since: string | number;
  readonly limit?: number;
  readonly style?: 'all_docs' | 'main_only';
  readonly docIds?: ReadonlyArray<string>;
  readonly selector?: Record<string, unknown>;
}

export interface ChangesAnswer {
  readonly results: ReadonlyArray<{
    readonly id: string;
    readonly seq: string | number;
    readonly changes: ReadonlyArray<{ readonly rev: string }>;
    readonly deleted?: boolean;
  }>;
  readonly last_seq: string | number;
}

export interface ReplicaSource {
  info(): Promise<{ db_name: string; update_seq: string | number; doc_count: number }>;
  changes(query: ChangesQuery): Promise<ChangesAnswer>;
  /** Resolves when a change after `since` matches, or after `timeoutMs`, or when `signal` aborts. */
  waitForChange(query: ChangesQuery, timeoutMs: number, signal: AbortSignal): Promise<void>;
  bulkGet(
    docs: ReadonlyArray<{ id: string; rev?: string }>,
    options: { revs: boolean; latest: boolean },
  ): Promise<unknown>;
  openRevs(
    id: string,
    openRevs: ReadonlyArray<string> | 'all',
    options: { revs: boolean; latest: boolean },
  ): Promise<unknown>;
  get(id: string, options: { revs: boolean }): Promise<unknown>;
}

const filterOptions = (q: ChangesQuery) => ({
  ...(q.docIds === undefined ? {} : { doc_ids: [...q.docIds] }),
  ...(q.selector === undefined ? {} : { selector: q.selector }),
});

export const replicaSource = (db: Database, name: string): ReplicaSource => ({
  async info() {
    const info = await db.info();
    return { db_name: name, update_seq: info.update_seq, doc_count: info.doc_count };
  },
  async changes(q) {
    const res = await db.changes({
      since: q.since,
      ...(q.limit === undefined ? {} : { limit: q.limit }),
      style: q.style ?? 'main_only',
      ...filterOptions(q),
    });
    return {
      results: res.results.map((c) => ({
        id: c.id,
        seq: c.seq,
        changes: c.changes.map((ch) => ({ rev: ch.rev })),
        ...(c.deleted === true ? { deleted: true } : {}),
      })),
      last_seq: res.last_seq,
    };
  },
  async waitForChange(q, timeoutMs, signal) {
    const feed = db.changes({ since: q.since, live: true, limit: 1, ...filterOptions(q) });
    // A feed that fails ends the wait as a change would: the caller reads the changes again.
    const changed = new Promise<void>((resolve) => {
      feed.on('change', () => resolve());
      feed.on('error', () => resolve());
    });
    try {
      await waitAtMost(changed, timeoutMs, signal);
    } finally {
      feed.cancel();
    }
  },
  // `latest` is a PouchDB option its typings lack; a prepared object passes it through.
  async bulkGet(docs, options) {
    const query = { docs: docs.map((d) => ({ ...d })), revs: options.revs, latest: options.latest };
    return db.bulkGet(query);
  },
  async openRevs(id, openRevs, options) {
    const query = {
      open_revs: openRevs === 'all' ? ('all' as const) : [...openRevs],
      revs: options.revs,
      latest: options.latest,
    };
    return db.get(id, query);
  },
  get: (id, options) => db.get(id, { revs: options.revs }),
});
