/**
 * What to do with an Idempotency-Key, given what the ledger holds for (key, principal):
 * - nothing, or an entry past its retention → claim it (a key reused after retention is new);
 * - a pending claim whose lease ran out (its owner died) → claim it again;
 * - a different request fingerprint → reject (409, no side effect);
 * - a completed response → replay it;
 * - a live pending claim with the same fingerprint → wait for it, then replay.
 */
export type LedgerEntryState =
  | {
      readonly state: 'pending';
      readonly fingerprint: string;
      readonly leaseUntil: number;
      readonly expiresAt: number;
    }
  | { readonly state: 'complete'; readonly fingerprint: string; readonly expiresAt: number };

export type ClaimDecision = 'claim' | 'reclaim' | 'replay' | 'reject-different-payload' | 'wait';

export const decideClaim = (
  existing: LedgerEntryState | undefined,
  fingerprint: string,
  now: number,
): ClaimDecision => {
  if (existing === undefined) return 'claim';
  if (existing.expiresAt <= now) return 'reclaim';
  if (existing.state === 'pending' && existing.leaseUntil <= now) return 'reclaim';
  if (existing.fingerprint !== fingerprint) return 'reject-different-payload';
  return existing.state === 'complete' ? 'replay' : 'wait';
};

/**
 * Responses worth keeping: the handler's final answers. Not a 5xx, and not a 429: both say "not now",
 * and a client that waits for Retry-After and retries with the same key must be served, not handed
 * the refusal again for the ledger's whole retention.
 */
export const shouldStore = (status: number): boolean => status < 500 && status !== 429;
