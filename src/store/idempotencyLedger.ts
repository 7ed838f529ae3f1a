/**
 * The idempotency ledger, one document per (key, principal) in the private database. The document id
 * is derived from both, so creating it is the atomic claim: PouchDB and CouchDB accept exactly one
 * create of an id, and every later create gets a 409. Replacing a document needs its current revision,
 * which makes reclaiming a stale or expired entry a compare-and-swap.
 */
import { createHash, randomUUID } from 'node:crypto';
import * as E from 'fp-ts/lib/Either.js';
import { IdempotencyRecord, type StoredResponse } from '../domain/idempotencyRecord.js';
import { putBatched } from './batchedPut.js';
import type { Database } from './pouch.js';
import { isConflict, isNotFound } from './storeErrors.js';

export const ledgerDocId = (key: string, principalId: string): string =>
  `idem:${createHash('sha256').update(`${principalId}\n${key.toLowerCase()}`, 'utf8').digest('hex')}`;

export interface Claim {
  readonly id: string;
  readonly rev: string;
  readonly claimId: string;
}

export interface ClaimRequest {
  readonly key: string;
  readonly principalId: string;
  readonly fingerprint: string;
  readonly now: number;
  readonly leaseMs: number;
  readonly retentionMs: number;
}

export interface IdempotencyLedger {
  get(key: string, principalId: string): Promise<IdempotencyRecord | undefined>;
  /** Creates the claim, or replaces `replacing` (a stale or expired entry). `undefined` when another request won. */
  claim(request: ClaimRequest, replacing?: IdempotencyRecord): Promise<Claim | undefined>;
  complete(claim: Claim, request: ClaimRequest, response: StoredResponse, now: number): Promise<boolean>;
  release(claim: Claim): Promise<void>;
  /** Removes entries whose retention ended; returns how many. */
  purgeExpired(now: number, batchSize?: number): Promise<number>;
}

export const idempotencyLedger = (db: Database): IdempotencyLedger => ({
  async get(key, principalId) {
    const doc: unknown = await db.get(ledgerDocId(key, principalId)).catch((e: unknown) => {
      if (isNotFound(e)) return undefined;
      throw e;
    });
    if (doc === undefined) return undefined;
    const decoded = IdempotencyRecord.decode(doc);
    if (E.isLeft(decoded)) throw new Error('undecodable idempotency ledger entry');
    return decoded.right;
  },

  async claim(request, replacing) {
    const claimId = randomUUID();
    const id = ledgerDocId(request.key, request.principalId);
    const doc = {
      _id: id,
      ...(replacing === undefined ? {} : { _rev: replacing._rev }),
      docType: 'idempotency' as const,
      key: request.key,
      principalId: request.principalId,
      fingerprint: request.fingerprint,
      claimId,
      createdAt: request.now,
      expiresAt: request.now + request.retentionMs,
      state: 'pending' as const,
      leaseUntil: request.now + request.leaseMs,
    };
    try {
      const r = await putBatched(db, doc);
      return { id, rev: r.rev, claimId };
    } catch (e) {
      if (isConflict(e)) return undefined;
      throw e;
    }
  },

  async complete(claim, request, response, now) {
    try {
      await putBatched(db, {
        _id: claim.id,
        _rev: claim.rev,
        docType: 'idempotency',
        key: request.key,
        principalId: request.principalId,
        fingerprint: request.fingerprint,
        claimId: claim.claimId,
        createdAt: request.now,
        // Retention counts from the response, so a replay is possible for the full 24 hours after it.
        expiresAt: now + request.retentionMs,
        state: 'complete',
        response,
      });
      return true;
    } catch (e) {
      // Our lease ran out and another request reclaimed the key; its record stands.
      if (isConflict(e)) return false;
      throw e;
    }
  },

  async release(claim) {
    await db.remove(claim.id, claim.rev).catch((e: unknown) => {
      if (!isConflict(e) && !isNotFound(e)) throw e;
    });
  },

  async purgeExpired(now, batchSize = 500) {
    let purged = 0;
    for (;;) {
      const found = await db.find({
        selector: { docType: 'idempotency', expiresAt: { $lte: now } },
        fields: ['_id', '_rev'],
        limit: batchSize,
        use_index: 'idx-by-docType-expiresAt',
      });
      if (found.docs.length === 0) return purged;
      const results = await db.bulkDocs(
        found.docs.map((d) => ({ _id: d._id, _rev: d._rev, _deleted: true })),
      );
      const removed = results.filter((r) => 'ok' in r && r.ok === true).length;
      purged += removed;
      // A batch that removed nothing (every entry changed meanwhile) must not loop for ever.
      if (found.docs.length < batchSize || removed === 0) return purged;
    }
  },
});
