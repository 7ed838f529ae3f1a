/**
 * Rate-limit counters kept in the `requests` database, so every app instance on one CouchDB counts the
 * same requests. Insert-only, so there is nothing to conflict on: each request writes one hit whose id
 * sorts by client and time, then reads the newest hits of its window down from its own id with one
 * range read; their count is its rank for the pure rule. Refused requests are hits too.
 *
 * The client key (an IP address) is personal data: only its SHA-256 appears in stored ids.
 *
 * Ranking by id is exact when the hits sort in the order they are written: a process numbers its own
 * hits of one millisecond, and the embedded store runs writes and reads in the order issued. A hit that
 * sorts before ours but is written after our read (another instance, or HTTP requests overtaking each
 * other) is missed, so racing requests may let one or two more through than the limit. Never fewer: a
 * refusal always rests on hits that exist.
 *
 * A store failure lets the request through (fail open) and is reported: an outage of the counters
 * must not lock every user out.
 */
import { createHmac, randomUUID } from 'node:crypto';
import { decideRateLimit, type RateLimitDecision, type RateLimitPolicy } from '../rules/rateLimit.js';
import { putBatched } from './batchedPut.js';
import { indexIn } from './indexes.js';
import type { Database } from './pouch.js';

export interface RateLimiterOptions {
  readonly clock: () => Date;
  /**
   * Key of the HMAC that turns a client IP into its counter id. A plain hash of an IPv4 address can be
   * reversed by trying all 2^32 of them; a keyed one cannot without the key. Instances sharing a store
   * must share the key.
   */
  readonly clientKeySecret: string | Uint8Array;
  readonly onStoreFailure?: (e: unknown) => void;
  /** Expired hits are deleted in the background once every this many checks (default 100). */
  readonly cleanupEvery?: number;
}

export interface RateLimiter {
  check(scope: string, clientKey: string, policy: RateLimitPolicy): Promise<RateLimitDecision>;
}

const TIME_DIGITS = 15;
const SEQUENCE_DIGITS = 12;
const MIN_RETENTION_MS = 60_000;
const CLEANUP_BATCH = 500;
// Scopes are constants of the code; a `:` in one would let its ids fall into another scope's range.
const SCOPE_FORMAT = /^[a-z][a-z0-9-]*$/;

const padded = (n: number, digits: number): string =>
  String(Math.max(0, Math.floor(n))).padStart(digits, '0');

/** The time a hit id carries right after its prefix, or undefined if the id is not one of ours. */
const hitTime = (id: string, prefix: string): number | undefined => {
  const digits = id.slice(prefix.length, prefix.length + TIME_DIGITS);
  return id.startsWith(prefix) && /^\d+$/.test(digits) && digits.length === TIME_DIGITS
    ? Number(digits)
    : undefined;
};

export const rateLimiter = (db: Database, options: RateLimiterOptions): RateLimiter => {
  const clientHash = (clientKey: string): string =>
    createHmac('sha256', options.clientKeySecret).update(clientKey, 'utf8').digest('hex');
  const hitPrefix = (scope: string, clientKey: string): string => `rl:${scope}:${clientHash(clientKey)}:`;
  const cleanupEvery = options.cleanupEvery ?? 100;
  const report = (e: unknown): void => {
    try {
      options.onStoreFailure?.(e);
    } catch {
      // A failing reporter must not turn fail-open into a rejected check.
    }
  };
  let checks = 0;
  let sequence = 0;
  let longestWindowMs = MIN_RETENTION_MS;

  const deleteExpired = async (cutoff: number): Promise<void> => {
    const found = await db.find({
      selector: { docType: 'rateHit', at: { $lt: cutoff } },
      fields: ['_id', '_rev'],
      limit: CLEANUP_BATCH,
      use_index: indexIn(db, 'by-docType-at'),
    });
    if (found.docs.length === 0) return;
    await db.bulkDocs(found.docs.map((d) => ({ _id: d._id, _rev: d._rev, _deleted: true })));
  };

  // A cleanup asked for while one runs is remembered and run after it, with the newer cutoff, so the
  // cleanups never overlap and none is lost.
  let cleaning = false;
  let nextCutoff: number | undefined;
  const cleanUp = (cutoff: number): void => {
    if (cleaning) {
      nextCutoff = cutoff;
      return;
    }
    cleaning = true;
    deleteExpired(cutoff)
      .catch(report)
      .finally(() => {
        cleaning = false;
        const pending = nextCutoff;
        nextCutoff = undefined;
        if (pending !== undefined) cleanUp(pending);
      });
  };

  const maybeCleanUp = (now: number): void => {
    checks += 1;
    if (checks % cleanupEvery === 0) cleanUp(now - longestWindowMs);
  };

  return {
    async check(scope, clientKey, policy) {
      if (!SCOPE_FORMAT.test(scope)) throw new TypeError(`invalid rate-limit scope: ${scope}`);
      const now = options.clock().getTime();
      longestWindowMs = Math.max(longestWindowMs, policy.windowMs);
      const prefix = hitPrefix(scope, clientKey);
      sequence = (sequence + 1) % 10 ** SEQUENCE_DIGITS;
      // The sequence orders this process's hits of one millisecond as written; the UUID keeps ids of
      // different instances apart.
      const id = `${prefix}${padded(now, TIME_DIGITS)}:${padded(sequence, SEQUENCE_DIGITS)}:${randomUUID()}`;
      try {
        await putBatched(db, { _id: id, docType: 'rateHit', scope, at: now });
        // Newest first from our own hit: the `limit + 1` newest say both whether we are within the limit
        // and which hit's departure frees a place (the oldest of them within it, the limit-th over it).
        const read = await db.allDocs({
          startkey: id,
          endkey: `${prefix}${padded(now - policy.windowMs + 1, TIME_DIGITS)}`,
          descending: true,
          limit: policy.limit + 1,
        });
        // On a cluster the range read is one copy of the shard, which may not hold the hit just written
        // to a quorum of others: our own hit is counted whether or not the copy listed it.
        const newest =
          read.rows[0]?.id === id ? read.rows : [{ id }, ...read.rows].slice(0, policy.limit + 1);
        const rank = newest.length;
        const frees = rank <= policy.limit ? newest[rank - 1] : newest[policy.limit - 1];
        return decideRateLimit({
          rank,
          freesPlaceAt: frees === undefined ? undefined : hitTime(frees.id, prefix),
          now,
          policy,
        });
      } catch (e) {
        report(e);
        return { allowed: true, quota: null };
      } finally {
        maybeCleanUp(now);
      }
    },
  };
};
