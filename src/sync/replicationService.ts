/**
 * What the tablets' replication (0018) reads and writes, behind the CouchDB-protocol routes: the
 * roster replica (pull only), their checkpoints, and the events they push, each judged like an event
 * of `POST /sync/events`. The routes shape the protocol; the decisions and the stores are here.
 */
import type { Actor } from '../domain/principal.js';
import type { EventStore } from '../store/events.js';
import type { ReplicaSource } from '../store/replicaSource.js';
import type { ReplicationCheckpoints } from '../store/replicationCheckpoints.js';
import type { SyncService } from './syncService.js';

export type { ChangesQuery } from '../store/replicaSource.js';

export type ReplicatedDatabase = 'roster' | 'events';

export interface DatabaseInfo {
  readonly db_name: string;
  readonly update_seq: string | number;
  readonly doc_count: number;
}

/** A pushed document that was not stored, in `_bulk_docs`' shape. */
export interface PushRefusal {
  readonly id: string;
  readonly error: string;
  readonly reason: string;
}

export interface ReplicationServiceDeps {
  /** Stable across restarts and instances: tablets key their checkpoints by it. */
  readonly instanceId: string;
  readonly roster: ReplicaSource;
  readonly eventsInfo: () => Promise<DatabaseInfo>;
  readonly checkpoints: ReplicationCheckpoints;
  readonly events: EventStore;
  readonly sync: SyncService;
}

export interface ReplicationService {
  readonly instanceId: string;
  info(database: ReplicatedDatabase): Promise<DatabaseInfo>;
  readonly checkpoints: ReplicationCheckpoints;
  /** The roster database, read only. */
  readonly roster: ReplicaSource;
  /** Of the pushed revisions, those the server does not hold. */
  revsDiff(
    revs: Readonly<Record<string, ReadonlyArray<string>>>,
  ): Promise<Record<string, { missing: ReadonlyArray<string> }>>;
  /** Stores the pushed events it accepts; answers what was stored and what was refused. */
  push(
    actor: Actor,
    docs: ReadonlyArray<Record<string, unknown>>,
  ): Promise<{ readonly stored: number; readonly refused: ReadonlyArray<PushRefusal> }>;
}

const EVENT_PREFIX = 'event:';

export const replicationService = (deps: ReplicationServiceDeps): ReplicationService => ({
  instanceId: deps.instanceId,
  info: (database) => (database === 'roster' ? deps.roster.info() : deps.eventsInfo()),
  checkpoints: deps.checkpoints,
  roster: deps.roster,

  async revsDiff(revs) {
    const ids = Object.keys(revs)
      .filter((id) => id.startsWith(EVENT_PREFIX))
      .map((id) => id.slice(EVENT_PREFIX.length));
    // Events never change: an event the server holds, under any revision, is not missing. Nor is one
    // retention retired (0045): a tablet that replicates from the start again (after a restore) must
    // not bring back what the periods ended.
    const held = await deps.events.getMany(ids);
    const retired = await deps.events.retiredAmong(ids.filter((id) => !held.has(id)));
    const missing: Record<string, { missing: ReadonlyArray<string> }> = {};
    for (const [id, listed] of Object.entries(revs)) {
      const eventId = id.slice(EVENT_PREFIX.length);
      if (id.startsWith(EVENT_PREFIX) && (held.has(eventId) || retired.has(eventId))) continue;
      missing[id] = { missing: listed };
    }
    return missing;
  },

  async push(actor, docs) {
    const refused: PushRefusal[] = [];
    const events: unknown[] = [];
    const ids: string[] = [];
    for (const doc of docs) {
      const id = typeof doc._id === 'string' ? doc._id : '';
      const { _id: _i, _rev: _r, _revisions: _v, docType: _d, ...event } = doc;
      if (doc._deleted === true) {
        refused.push({ id, error: 'forbidden', reason: 'events are never deleted' });
      } else if (typeof event.eventId !== 'string' || id !== `${EVENT_PREFIX}${event.eventId}`) {
        refused.push({ id, error: 'forbidden', reason: 'the _id must be event:<eventId>' });
      } else {
        events.push(event);
        ids.push(id);
      }
    }
    const result = await deps.sync.sync(actor, events, { settle: false });
    for (const f of result.failed) {
      refused.push({ id: ids[f.index] ?? '', error: 'forbidden', reason: `${f.reason}: ${f.message}` });
    }
    return { stored: result.synced.length, refused };
  },
});
