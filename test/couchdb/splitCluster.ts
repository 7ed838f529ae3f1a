/**
 * What the split tests share (`casSplit.couchdb.ts`, `eventSplit.couchdb.ts`): a cluster of three
 * whose nodes this run controls, two stores through nodes 1 and 2, node 3 killed for the split and
 * started again after it, and every live leaf of a document read back. Everything is closed after
 * the suite, node 3 started again if a test left it down.
 */
import type { Database } from '../../src/store/pouch.js';
import { openStore, type Store } from '../../src/store/store.js';
import {
  type CouchServer,
  isRealCouch,
  type RealCouchServer,
  startCouchServer,
  untilCopiesAgree,
} from '../support/couchServer.js';

export interface SplitCluster {
  readonly server: RealCouchServer;
  /** The store through node 1, and the one through node 2. */
  readonly a: Store;
  readonly b: Store;
  readonly split: () => Promise<void>;
  /** Node 3 back, once the copies agree. */
  readonly heal: () => Promise<void>;
}

/** Call inside a `describe`: registers the suite's `after`, and returns what opens the cluster. */
export const splitCluster = (prefix: string): (() => Promise<SplitCluster>) => {
  let couch: CouchServer | undefined;
  const stores: Store[] = [];
  let node3Down = false;
  after(async () => {
    for (const s of stores) await s.close();
    if (node3Down && couch !== undefined && isRealCouch(couch)) await couch.startNode(3);
    await couch?.dispose();
  });
  return async () => {
    couch = await startCouchServer();
    const server = couch;
    if (!isRealCouch(server)) throw new Error('not a controlled cluster');
    for (const url of server.nodeUrls.slice(0, 2))
      stores.push(await openStore({ kind: 'couchdb', url, prefix }));
    const [a, b] = stores;
    if (a === undefined || b === undefined) throw new Error('two stores expected');
    return {
      server,
      a,
      b,
      split: async () => {
        await server.killNode(3);
        node3Down = true;
      },
      heal: async () => {
        await server.startNode(3);
        node3Down = false;
        await untilCopiesAgree(server);
      },
    };
  };
};

/** Every live leaf of `id` as the copies that answer hold them (`open_revs=all`). */
export const liveLeaves = async (db: Database, id: string): Promise<unknown[]> => {
  const leaves: unknown = await db.get(id, { open_revs: 'all' });
  if (!Array.isArray(leaves)) return [];
  return leaves.flatMap((l: unknown) => {
    const doc: unknown = typeof l === 'object' && l !== null ? Reflect.get(l, 'ok') : undefined;
    return typeof doc === 'object' && doc !== null && Reflect.get(doc, '_deleted') !== true ? [doc] : [];
  });
};
