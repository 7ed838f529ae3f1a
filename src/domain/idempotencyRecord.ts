/** The idempotency ledger's stored document (`requests` database). */
import * as t from 'io-ts';

export const StoredResponse = t.type({
  status: t.number,
  headers: t.record(t.string, t.string),
  contentType: t.string,
  body: t.string,
  /** The correlation id of the request that produced it, replayed with it. */
  correlationId: t.string,
});
export type StoredResponse = t.TypeOf<typeof StoredResponse>;

const Common = {
  _id: t.string,
  _rev: t.string,
  docType: t.literal('idempotency'),
  key: t.string,
  principalId: t.string,
  fingerprint: t.string,
  claimId: t.string,
  createdAt: t.number,
  expiresAt: t.number,
};

export const IdempotencyRecord = t.union([
  t.type({ ...Common, state: t.literal('pending'), leaseUntil: t.number }),
  t.type({ ...Common, state: t.literal('complete'), response: StoredResponse }),
]);
export type IdempotencyRecord = t.TypeOf<typeof IdempotencyRecord>;

/*
 * The ledger as the Idempotency-Key step of the route path sees it (`src/http/idempotency.ts`); its
 * implementations, shared and exclusive, are in `src/store/idempotencyLedger.ts`.
 */

type WithoutRev<R> = R extends unknown ? Omit<R, '_rev'> & { readonly _rev: string | undefined } : never;

/**
 * What the ledger holds for a key: a stored entry (its revision set), or, in the exclusive ledger, a
 * claim held in memory (its `_rev` is that of the stored entry it replaces, if any).
 */
export type LedgerEntry = WithoutRev<IdempotencyRecord>;

export interface Claim {
  readonly id: string;
  /** The revision the response is written over: none for a new entry. */
  readonly rev: string | undefined;
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
  get(key: string, principalId: string): Promise<LedgerEntry | undefined>;
  /** Creates the claim, or replaces `replacing` (a stale or expired entry). `undefined` when another request won. */
  claim(request: ClaimRequest, replacing?: LedgerEntry): Promise<Claim | undefined>;
  /** Stores the response; `false` when the claim was lost meanwhile (its lease ran out and was taken). */
  complete(claim: Claim, request: ClaimRequest, response: StoredResponse, now: number): Promise<boolean>;
  release(claim: Claim): Promise<void>;
  /**
   * Extends the lease of a claim still held to `now + request.leaseMs`, so a handler that runs longer
   * than a lease (a check-in waiting out the pipeline's backlog on a loaded cluster) is not taken over
   * by a duplicate while it runs. The claim to complete with from then on, or `undefined` when it was
   * taken over already.
   */
  renew(claim: Claim, request: ClaimRequest, now: number): Promise<Claim | undefined>;
  /**
   * Resolves when the claim on the key changes hands or ends (at the latest after `ms`), so a waiting
   * duplicate looks again at once rather than on its next poll. The shared ledger cannot know; it waits.
   */
  changed(key: string, principalId: string, ms: number): Promise<void>;
  /**
   * Removes entries whose retention ended; returns how many. On a CouchDB cluster a later run may count
   * an entry again when the first deletion reached one copy only (it is deleted again where it had not
   * arrived, the same revision): the figure is the deletions that succeeded, not distinct entries.
   */
  purgeExpired(now: number, batchSize?: number): Promise<number>;
}
