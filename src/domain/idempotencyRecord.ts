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
