/**
 * The roster database as a replication source (read only): what the `/api/v1/replication/roster`
 * endpoints answer, in CouchDB's shapes, straight from PouchDB. Nothing here writes.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import * as t from 'io-ts';
import { waitAtMost } from '../lib/timeouts.js';
import { isRemote } from './docs.js';
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

/**
 * The pauses before reading named revisions again while one is missing (1.5 s in all). On a CouchDB
 * cluster `_changes` is served by one copy of each shard and a keyed read by a quorum of copies: a
 * revision the feed named may be on one copy only for a moment (a write acknowledged 202, internal
 * replication behind), and a replicator that asks for it a moment later would be told it is missing.
 * A revision that is really gone (compacted, never stored) costs its reader the 1.5 s once.
 */
export const READ_AGAIN_MS: ReadonlyArray<number> = [100, 200, 400, 800];

const Rows = t.array(t.UnknownRecord);
const BulkGetAnswer = t.type({ results: t.array(t.type({ docs: Rows })) });

/** `open_revs` answers `{ missing: rev }` for a revision no copy asked holds. */
const openRevsMissing = (answer: unknown): boolean =>
  Rows.is(answer) && answer.some((row) => typeof row.missing === 'string');

/** `_bulk_get` answers `{ error: { error: 'not_found', … } }` for one (PouchDB's server: `{ missing: rev }`). */
const bulkGetMissing = (answer: unknown): boolean =>
  BulkGetAnswer.is(answer) &&
  answer.results.some((r) =>
    r.docs.some(
      (d) => typeof d.missing === 'string' || (t.UnknownRecord.is(d.error) && d.error.error === 'not_found'),
    ),
  );

const readUntilHeld = async (
  remote: boolean,
  read: () => Promise<unknown>,
  missing: (answer: unknown) => boolean,
): Promise<unknown> => {
  let answer = await read();
  // The embedded store is one copy: what it lacks it does not have.
  if (!remote) return answer;
  for (const ms of READ_AGAIN_MS) {
    if (!missing(answer)) break;
    await sleep(ms);
    answer = await read();
  }
  return answer;
};

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
    // Only a request that names revisions can find one missing that is coming.
    const named = docs.some((d) => d.rev !== undefined);
    return readUntilHeld(isRemote(db) && named, () => db.bulkGet(query), bulkGetMissing);
  },
  async openRevs(id, openRevs, options) {
    const query = {
      open_revs: openRevs === 'all' ? ('all' as const) : [...openRevs],
      revs: options.revs,
      latest: options.latest,
    };
    return readUntilHeld(isRemote(db) && openRevs !== 'all', () => db.get(id, query), openRevsMissing);
  },
  get: (id, options) => db.get(id, { revs: options.revs }),
});
