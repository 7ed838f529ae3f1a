import type { Database } from './pouch.js';

/** Copies per document of a CouchDB database (`cluster.n` of its info); 1 for a single node or PouchDB. */
export const copiesOf = async (db: Database): Promise<number> => {
  const cluster: unknown = Reflect.get(await db.info(), 'cluster');
  const n: unknown = typeof cluster === 'object' && cluster !== null ? Reflect.get(cluster, 'n') : undefined;
  return typeof n === 'number' ? n : 1;
};
