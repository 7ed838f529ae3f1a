/**
 * The server's replication identity: a UUID made once and kept in the private database, so that a
 * tablet's replication checkpoints (keyed by it) survive restarts and apply to every instance.
 */
import { randomUUID } from 'node:crypto';
import * as t from 'io-ts';
import { getDoc } from './docs.js';
import type { Database } from './pouch.js';
import { isConflict } from './storeErrors.js';

const INSTANCE_ID = 'replication-instance';
const InstanceDoc = t.type({ _id: t.string, _rev: t.string, uuid: t.string });

export const replicationInstanceId = async (db: Database): Promise<string> => {
  const found = await getDoc(db, InstanceDoc, INSTANCE_ID);
  if (found !== undefined) return found.uuid;
  try {
    await db.put({
      _id: INSTANCE_ID,
      docType: 'replicationInstance',
      uuid: randomUUID().replaceAll('-', ''),
    });
  } catch (e) {
    if (!isConflict(e)) throw e;
  }
  const made = await getDoc(db, InstanceDoc, INSTANCE_ID);
  if (made === undefined) throw new Error('the replication instance id vanished');
  return made.uuid;
};
