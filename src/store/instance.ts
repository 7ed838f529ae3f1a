/**
 * The server's replication identity: a UUID made once and kept in the private database, so that a
 * tablet's replication checkpoints (keyed by it) survive restarts and apply to every instance.
 */
import { randomUUID } from 'node:crypto';
import * as t from 'io-ts';
import { createOnce } from './docWrites.js';
import type { Database } from './pouch.js';

const INSTANCE_ID = 'replication-instance';
const InstanceDoc = t.type({ _id: t.string, _rev: t.string, uuid: t.string });

export const replicationInstanceId = async (db: Database): Promise<string> =>
  (
    await createOnce(db, InstanceDoc, INSTANCE_ID, () => ({
      docType: 'replicationInstance',
      uuid: randomUUID().replaceAll('-', ''),
    }))
  ).uuid;
