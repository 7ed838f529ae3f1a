/**
 * Replication checkpoints (`_local/{id}` documents a PouchDB replicator keeps on the server), stored in
 * the private database and scoped to the user and the device that wrote them: one tablet can neither
 * read nor move another's checkpoint. Revisions follow CouchDB's `_local` form, `0-<n>`.
 */
import { createHash } from 'node:crypto';
import * as t from 'io-ts';
import { getDoc } from './docs.js';
import { retryOnConflict, stayedContended } from './docWrites.js';
import type { Database } from './pouch.js';

const CheckpointDoc = t.type({
  _id: t.string,
  _rev: t.string,
  docType: t.literal('replicationCheckpoint'),
  generation: t.number,
  body: t.UnknownRecord,
});

export interface CheckpointScope {
  readonly userId: string;
  readonly deviceId: string;
  readonly database: string;
}

export interface ReplicationCheckpoints {
  get(
    scope: CheckpointScope,
    id: string,
  ): Promise<{ body: Record<string, unknown>; rev: string } | undefined>;
  /** Last write wins; answers the new `0-<n>` revision. */
  put(scope: CheckpointScope, id: string, body: Record<string, unknown>): Promise<string>;
}

/** Every checkpoint's id starts so (a restore leaves them behind: decision 0022). */
export const CHECKPOINT_ID_PREFIX = 'replicationCheckpoint:';

const docId = (scope: CheckpointScope, id: string): string =>
  `${CHECKPOINT_ID_PREFIX}${createHash('sha256')
    .update(JSON.stringify([scope.userId, scope.deviceId, scope.database, id]))
    .digest('hex')}`;

export const replicationCheckpoints = (db: Database): ReplicationCheckpoints => ({
  async get(scope, id) {
    const doc = await getDoc(db, CheckpointDoc, docId(scope, id));
    return doc === undefined ? undefined : { body: doc.body, rev: `0-${doc.generation}` };
  },
  put(scope, id, body) {
    const _id = docId(scope, id);
    return retryOnConflict(
      10,
      async () => {
        const current = await getDoc(db, CheckpointDoc, _id);
        const generation = (current?.generation ?? 0) + 1;
        await db.put({
          _id,
          ...(current === undefined ? {} : { _rev: current._rev }),
          docType: 'replicationCheckpoint',
          generation,
          body,
        });
        return `0-${generation}`;
      },
      stayedContended('the replication checkpoint'),
    );
  },
});
