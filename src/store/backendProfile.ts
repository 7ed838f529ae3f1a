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
   * A cache of documents written by the pipelines of every instance (check-in records, aspects): held
   * on the embedded store, not on CouchDB. Another instance answers a check-in once its pipeline has
   * committed the aspect, but this process's copy may lag that commit by the feed's delay: a check-in
   * of the same child decided here on the copy held (absent) is allowed on the same base, and the
   * conflict rule then lets the later one win, superseding a check-in already answered 201 and its
   * pickup code. Read from the store, the commit is there and the second one is refused. A copy
   * lagging the other way refuses wrongly, and a refusal stores no event for the rule to correct.
   * Nor for the projector's read alone, though its commit is a compare-and-swap: it writes records
   * through and audits the conflicts it decides before that commit, so a copy held too long leaves an
   * audit entry for a decision the store never held, and records written from it. (Decision 0019,
   * thirteenth round: both tried on CouchDB, measured, and taken out.)
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
