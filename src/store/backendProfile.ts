/**
 * What the backend implies for the rest of the service, decided here once instead of at each place
 * that cares (issue #22). The one fact behind every choice: on the embedded store one process holds
 * the LevelDB directory locked, so every write passes through it; on CouchDB other instances write
 * the same databases (decisions 0019, 0023).
 */
import { type DocCache, docCache, noDocCache } from './docCache.js';
import {
  exclusiveIdempotencyLedger,
  type IdempotencyLedger,
  idempotencyLedger,
} from './idempotencyLedger.js';
import type { Database } from './pouch.js';
import type { Store } from './store.js';

export interface BackendProfile {
  readonly backend: Store['backend'];
  /**
   * A read cache of documents: kept in memory where this process is the one writer (its stores
   * forget or remember around each write); none on CouchDB, where a cache fed by the change feed
   * would let a revoked session act for the feed's delay.
   */
  cacheOf<T>(maxEntries: number): DocCache<T>;
  /**
   * A read cache on both backends, for documents where lagging another instance's write by the change
   * feed's delay decides nothing wrongly: their writes are compare-and-swap (a stale revision is a 409
   * and the retry reads the store) and their readers take a value from a moment ago (a class session,
   * a class, the check-in configuration: a check-in then goes as it would have a moment earlier). Kept
   * coherent by this process's write-through and, where other instances write, by the change feed that
   * the caller wires to `forgetChanged` (issue #23); never for sessions and users (decision 0013).
   */
  sharedCacheOf<T>(maxEntries: number): DocCache<T>;
  /**
   * A cache of documents the pipelines of every instance write and requests decide on (check-in
   * records): held on the embedded store, not on CouchDB. Another instance answers a check-in once
   * its pipeline has written, but this process's copy may lag that write by the feed's delay, and a
   * decision taken here on it would go as if the other had not happened: for an aspect, a second
   * check-in of the child allowed on the same base, which the conflict rule then lets win over the
   * one already answered 201 (and its pickup code); a copy lagging the other way refuses wrongly,
   * and a refusal stores no event for the rule to correct. Aspects are cached on CouchDB for the
   * projector's read alone, whose commit is a compare-and-swap and whose audit follows it; every
   * decision on one reads the store (`projectionStore`'s `othersCommit`; decision 0019, thirteenth
   * and fourteenth rounds).
   */
  heldBackCacheOf<T>(maxEntries: number): DocCache<T>;
  /**
   * The idempotency ledger: claims held in memory and only the response written where this process
   * is the one writer (one write per mutation); stored, create-only claims where instances share it.
   */
  ledgerOf(db: Database): IdempotencyLedger;
  /** The database the per-device rate-limit counts are exchanged through; none with no other instance. */
  rateLimitShareOf(db: Database): Database | undefined;
  /**
   * Whether this process's pipeline is the projections' one writer, so its own outcomes name every
   * aspect committed; otherwise the projections' change feed does (other instances commit too).
   */
  readonly oneProjectionWriter: boolean;
}

export const backendProfile = (backend: Store['backend']): BackendProfile => {
  const oneWriter = backend === 'embedded';
  const cacheOf = <T>(maxEntries: number): DocCache<T> =>
    oneWriter ? docCache<T>(maxEntries) : noDocCache<T>();
  return {
    backend,
    cacheOf,
    sharedCacheOf: <T>(maxEntries: number) => docCache<T>(maxEntries),
    // The same as `cacheOf` (see above for why); callers keep naming which is which.
    heldBackCacheOf: cacheOf,
    ledgerOf: (db) => (oneWriter ? exclusiveIdempotencyLedger(db) : idempotencyLedger(db)),
    rateLimitShareOf: (db) => (oneWriter ? undefined : db),
    oneProjectionWriter: oneWriter,
  };
};
