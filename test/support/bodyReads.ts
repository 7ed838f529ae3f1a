import type { Database } from '../../src/store/pouch.js';

/**
 * `db` with its range reads that carry documents' bodies (`allDocs` with `include_docs`) counted:
 * what a reconcile that trusts a range's revisions must not do.
 */
export const countingBodyReads = (db: Database): { readonly db: Database; count: number } => {
  const counter = { db, count: 0 };
  counter.db = new Proxy(db, {
    get: (target, prop, receiver) =>
      prop === 'allDocs'
        ? (options?: PouchDB.Core.AllDocsOptions) => {
            if (options?.include_docs === true) counter.count += 1;
            return target.allDocs(options);
          }
        : Reflect.get(target, prop, receiver),
  });
  return counter;
};
