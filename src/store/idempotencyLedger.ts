/**
 * The idempotency ledger, one document per (key, principal) in the `requests` database. The document
 * id is derived from both.
 *
 * Two implementations behind one interface:
 * - `idempotencyLedger` (CouchDB, where several instances share the database): creating the document
 *   is the atomic claim. PouchDB and CouchDB accept exactly one create of an id, and every later create
 *   gets a 409. Replacing a document needs its current revision, which makes reclaiming a stale or
 *   expired entry a compare-and-swap. Two writes per mutation: the pending claim, then the response.
 * - `exclusiveIdempotencyLedger` (the embedded store, whose LevelDB directory one process holds
 *   locked): claims are held in this process's memory, and only the response is written. One write
 *   per mutation (decision 0019). A stored pending claim could only tell another process that the
 *   key is taken, and there is no other process; after a crash it would only delay the retry by a
 *   lease. The retry then runs the handler again, and so would a retry after the lease. A check-in
 *   that already happened is refused by the check-in rules either way.
 */
import { createHash, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import * as E from 'fp-ts/lib/Either.js';
import {
  type Claim,
  type ClaimRequest,
  type IdempotencyLedger,
  IdempotencyRecord,
  type LedgerEntry,
  type StoredResponse,
} from '../domain/idempotencyRecord.js';
import { detached } from '../lib/deadline.js';
import { waitAtMost } from '../lib/timeouts.js';
import { putBatched } from './batchedPut.js';
import { indexIn } from './indexes.js';
import type { Database } from './pouch.js';
import { isConflict, isNotFound, isShortOfQuorum } from './storeErrors.js';

export type { Claim, ClaimRequest, IdempotencyLedger, LedgerEntry };

export const ledgerDocId = (key: string, principalId: string): string =>
  `idem:${createHash('sha256').update(`${principalId}\n${key.toLowerCase()}`, 'utf8').digest('hex')}`;

const readStored = async (db: Database, id: string): Promise<IdempotencyRecord | undefined> => {
  const doc: unknown = await db.get(id).catch((e: unknown) => {
    if (isNotFound(e)) return undefined;
    throw e;
  });
  if (doc === undefined) return undefined;
  const decoded = IdempotencyRecord.decode(doc);
  if (E.isLeft(decoded)) throw new Error('undecodable idempotency ledger entry');
  return decoded.right;
};

const pendingEntry = (id: string, request: ClaimRequest, claimId: string, rev: string | undefined) => ({
  _id: id,
  _rev: rev,
  docType: 'idempotency' as const,
  key: request.key,
  principalId: request.principalId,
  fingerprint: request.fingerprint,
  claimId,
  createdAt: request.now,
  expiresAt: request.now + request.retentionMs,
  state: 'pending' as const,
  leaseUntil: request.now + request.leaseMs,
});

const completeDoc = (claim: Claim, request: ClaimRequest, response: StoredResponse, now: number) => ({
  _id: claim.id,
  ...(claim.rev === undefined ? {} : { _rev: claim.rev }),
  docType: 'idempotency' as const,
  key: request.key,
  principalId: request.principalId,
  fingerprint: request.fingerprint,
  claimId: claim.claimId,
  createdAt: request.now,
  // Retention counts from the response, so a replay is possible for the full 24 hours after it.
  expiresAt: now + request.retentionMs,
  state: 'complete' as const,
  response,
});

const purgeExpired = async (
  db: Database,
  now: number,
  batchSize: number,
  onRemoved: (id: string) => void = () => undefined,
): Promise<number> => {
  // Each id once: on a cluster a query may read a copy the last batch's deletions have not reached
  // yet, and find an entry again that is already gone.
  const purged = new Set<string>();
  for (;;) {
    const found = await db.find({
      selector: { docType: 'idempotency', expiresAt: { $lte: now } },
      fields: ['_id', '_rev'],
      limit: batchSize,
      use_index: indexIn(db, 'by-docType-expiresAt'),
    });
    if (found.docs.length === 0) return purged.size;
    const results = await db.bulkDocs(found.docs.map((d) => ({ _id: d._id, _rev: d._rev, _deleted: true })));
    let removed = 0;
    results.forEach((r, i) => {
      const id = found.docs[i]?._id;
      if (!('ok' in r) || r.ok !== true || id === undefined || purged.has(id)) return;
      removed += 1;
      purged.add(id);
      onRemoved(id);
    });
    // A batch that removed nothing (every entry changed meanwhile) must not loop for ever.
    if (found.docs.length < batchSize || removed === 0) return purged.size;
  }
};

/** Stores a completed entry; false when the key's document changed under us (another holder's stands). */
const putCompletion = async (db: Database, doc: Parameters<typeof putBatched>[1]): Promise<boolean> => {
  try {
    await putBatched(db, doc);
    return true;
  } catch (e) {
    if (isConflict(e)) return false;
    throw e;
  }
};

export const idempotencyLedger = (db: Database): IdempotencyLedger => ({
  get: (key, principalId) => readStored(db, ledgerDocId(key, principalId)),

  async claim(request, replacing) {
    const claimId = randomUUID();
    const id = ledgerDocId(request.key, request.principalId);
    const { _rev: _r, ...entry } = pendingEntry(id, request, claimId, undefined);
    try {
      const r = await putBatched(db, {
        ...entry,
        ...(replacing?._rev === undefined ? {} : { _rev: replacing._rev }),
      });
      return { id, rev: r.rev, claimId };
    } catch (e) {
      if (isConflict(e)) return undefined;
      // On a cluster a lost race is a write short of its quorum (decision 0023): lost to the claim
      // that reached it, if one can be read; otherwise the cluster is short of nodes (503).
      if (isShortOfQuorum(e)) {
        const other = await readStored(db, id).catch(() => undefined);
        if (other !== undefined && other.claimId !== claimId) return undefined;
      }
      throw e;
    }
  },

  async renew(claim, request, now) {
    const entry = {
      ...pendingEntry(claim.id, request, claim.claimId, claim.rev),
      leaseUntil: now + request.leaseMs,
    };
    try {
      const r = await putBatched(db, entry);
      return { ...claim, rev: r.rev };
    } catch (e) {
      if (isConflict(e)) return undefined;
      throw e;
    }
  },

  // False when our lease ran out and another request reclaimed the key: its record stands.
  complete: (claim, request, response, now) => putCompletion(db, completeDoc(claim, request, response, now)),

  async release(claim) {
    if (claim.rev === undefined) return;
    await db.remove(claim.id, claim.rev).catch((e: unknown) => {
      if (!isConflict(e) && !isNotFound(e)) throw e;
    });
  },

  changed: (_key, _principalId, ms) => sleep(ms),

  purgeExpired: (now, batchSize = 500) => purgeExpired(db, now, batchSize),
});

/**
 * Which ledger ids the store may hold, so that a fresh key (nearly every mutation) is claimed without
 * a read that would find nothing. Sound only where this process is the ledger's one writer: every
 * create and every purge passes through here. Until the stored ids are loaded (in the background,
 * from the first claim on) every id may be stored.
 *
 * The ids are counted in a table of fixed size (`idCounts`), not one entry per id: the ledger holds
 * every response of the last 24 hours, so a set of its ids grew with the traffic until the purge
 * (about 45 bytes a mutation: 43 MB for a million mutations a day). A bucket shared by several ids
 * costs a read when one of them is claimed, never a wrong answer.
 *
 * Each bucket counts its stored documents: a create adds one, a purged document takes one away, and
 * the load adds one per stored document it finds. A document may be counted twice (created while the
 * load runs), never not at all, so a count is never below what the store holds: no take-away happens
 * before the load is complete, and from then on each take-away is one document gone.
 */
export interface StoredIds {
  /** False only when the store certainly holds no entry `id`. */
  mayHold(id: string): boolean;
  created(id: string): void;
  removed(id: string): void;
  /** Reads the stored ids once (again after a failed attempt); resolves when done or failed. */
  load(): Promise<void>;
  /** Buckets that may hold an id. */
  readonly size: () => number;
  /** Buckets in the table: its memory in bytes, whatever the number of ids. */
  readonly capacity: number;
}

/**
 * Counters of ids by bucket, one byte each. A counter that reaches 255 stays there: it may then
 * count fewer ids than its bucket holds, so it is never taken down again, and its bucket answers
 * "may hold" from then on (a read per claim of an id of that bucket: a cost, never a wrong answer).
 */
export interface IdCounts {
  add(id: string): void;
  /** Only for an id that was added and is gone now. */
  take(id: string): void;
  mayHold(id: string): boolean;
  readonly size: () => number;
  readonly capacity: number;
}

const SATURATED = 255;

/** 52 bits of the id's hash (exact in a number; the id is a SHA-256), then its bucket. */
const bucketOf = (id: string, buckets: number): number =>
  Number.parseInt(id.slice('idem:'.length, 'idem:'.length + 13), 16) % buckets;

export const idCounts = (buckets: number): IdCounts => {
  if (!Number.isSafeInteger(buckets) || buckets < 1) throw new RangeError(`buckets: ${buckets}`);
  const counts = new Uint8Array(buckets);
  let occupied = 0;
  return {
    add(id) {
      const b = bucketOf(id, buckets);
      const n = counts[b] ?? 0;
      if (n === SATURATED) return;
      if (n === 0) occupied += 1;
      counts[b] = n + 1;
    },
    take(id) {
      const b = bucketOf(id, buckets);
      const n = counts[b] ?? 0;
      if (n === SATURATED || n === 0) return;
      if (n === 1) occupied -= 1;
      counts[b] = n - 1;
    },
    mayHold: (id) => (counts[bucketOf(id, buckets)] ?? 0) > 0,
    size: () => occupied,
    capacity: buckets,
  };
};

/**
 * 2^20 buckets, 1 MiB: at ten thousand stored responses a claim reads the store one time in a
 * hundred, at a hundred thousand one time in eleven; a million (the busiest day imaginable for a
 * door) reads on most claims, as every claim did before the table existed.
 */
export const LEDGER_ID_BUCKETS = 2 ** 20;

export interface StoredIdsOptions {
  readonly pageSize?: number;
  /** Awaited before each page of the load: lets a test interleave writes with it at will. */
  readonly beforePage?: () => Promise<void>;
  readonly buckets?: number;
}

export const storedIds = (db: Database, options: StoredIdsOptions = {}): StoredIds => {
  const pageSize = options.pageSize ?? 5_000;
  const counts = idCounts(options.buckets ?? LEDGER_ID_BUCKETS);
  let phase: 'cold' | 'loading' | 'ready' = 'cold';
  let loading: Promise<void> | undefined;
  const readAll = async () => {
    let startkey = 'idem:';
    for (;;) {
      await options.beforePage?.();
      // Keys only: ids and revisions, no document bodies.
      const page = await db.allDocs({ startkey, endkey: 'idem:\ufff0', limit: pageSize });
      for (const row of page.rows) counts.add(row.id);
      const last = page.rows[page.rows.length - 1];
      if (page.rows.length < pageSize || last === undefined) return;
      // The next page starts just after the last id, not at it with `skip: 1`: that id may be purged
      // meanwhile, and `skip` would then pass over the first id of the next page unread.
      startkey = `${last.id}\u0000`;
    }
  };
  return {
    mayHold: (id) => phase !== 'ready' || counts.mayHold(id),
    created: (id) => counts.add(id),
    removed(id) {
      if (phase === 'ready') counts.take(id);
    },
    load() {
      if (phase === 'ready') return Promise.resolve();
      loading ??= (async () => {
        phase = 'loading';
        try {
          await readAll();
          phase = 'ready';
        } catch {
          // The store is closing or failing: keep reading per claim, and try again on a later one.
          phase = 'cold';
        } finally {
          loading = undefined;
        }
      })();
      return loading;
    },
    size: counts.size,
    capacity: counts.capacity,
  };
};

interface Held {
  readonly entry: Extract<LedgerEntry, { state: 'pending' }>;
  /** Resolves when this claim ends or is taken over; waiting duplicates look again then. */
  readonly ended: Promise<void>;
  readonly end: () => void;
}

/**
 * Only for a database that no other process writes (the embedded store). A claim is an entry in
 * `held`, taken and compared synchronously, so of concurrent claims exactly one wins; the claim then
 * reads the stored entry and stands only if it is still the one the decision was made on (none for a
 * fresh key). The stored entry changes only through this ledger, under a claim, so that read cannot
 * be overtaken. The response is written as a create (or over the expired entry it replaces).
 */
export const exclusiveIdempotencyLedger = (
  db: Database,
  stored: StoredIds = storedIds(db),
): IdempotencyLedger => {
  const held = new Map<string, Held>();
  /** The stored entry, or none without reading when the store certainly holds none. */
  const storedEntry = (id: string) => {
    if (stored.mayHold(id)) return readStored(db, id);
    return Promise.resolve(undefined);
  };
  const hold = (entry: Held['entry']): Held => {
    let end: () => void = () => undefined;
    const ended = new Promise<void>((resolve) => {
      end = resolve;
    });
    const h: Held = { entry, ended, end };
    held.get(entry._id)?.end();
    held.set(entry._id, h);
    return h;
  };
  const drop = (id: string, claimId: string) => {
    const h = held.get(id);
    if (h?.entry.claimId !== claimId) return;
    held.delete(id);
    h.end();
  };

  return {
    async get(key, principalId) {
      const id = ledgerDocId(key, principalId);
      return held.get(id)?.entry ?? (await storedEntry(id));
    },

    async claim(request, replacing) {
      const id = ledgerDocId(request.key, request.principalId);
      const current = held.get(id);
      // A held claim is taken over only by a request that saw it (its lease ran out); a request that
      // saw the stored entry, or nothing, lost to whoever holds the key now.
      if (
        current !== undefined &&
        (replacing?.state !== 'pending' || current.entry.claimId !== replacing.claimId)
      )
        return undefined;
      const claimId = randomUUID();
      const rev = replacing?._rev;
      hold(pendingEntry(id, request, claimId, rev));
      // Read once for every later claim: not this request's work, nor bounded by its deadline.
      void detached(() => stored.load());
      let now: IdempotencyRecord | undefined;
      try {
        now = await storedEntry(id);
      } catch (e) {
        drop(id, claimId);
        throw e;
      }
      if (now?._rev !== rev) {
        // The key was completed (or the entry replaced) after the caller's read: it reads again.
        drop(id, claimId);
        return undefined;
      }
      return { id, rev, claimId };
    },

    async complete(claim, request, response, now) {
      // Taken over after our lease ran out: the new holder's response is the one that stands.
      if (held.get(claim.id)?.entry.claimId !== claim.claimId) return false;
      // Counted before the write: a write that fails leaves a count too many, never one too few.
      if (claim.rev === undefined) stored.created(claim.id);
      try {
        return await putCompletion(db, completeDoc(claim, request, response, now));
      } finally {
        // Released only once the response is stored, so a duplicate never finds neither.
        drop(claim.id, claim.claimId);
      }
    },

    async release(claim) {
      drop(claim.id, claim.claimId);
    },

    async renew(claim, request, now) {
      const h = held.get(claim.id);
      if (h?.entry.claimId !== claim.claimId) return undefined;
      // The same `ended`: duplicates waiting on this claim keep waiting for its end, not for a renewal.
      held.set(claim.id, { ...h, entry: { ...h.entry, leaseUntil: now + request.leaseMs } });
      return claim;
    },

    async changed(key, principalId, ms) {
      const h = held.get(ledgerDocId(key, principalId));
      // Nothing held here: the wait is on a stored claim (left by an earlier process), so poll.
      if (h === undefined) return sleep(ms);
      await waitAtMost(h.ended, ms);
    },

    purgeExpired: (now, batchSize = 500) => purgeExpired(db, now, batchSize, (id) => stored.removed(id)),
  };
};
