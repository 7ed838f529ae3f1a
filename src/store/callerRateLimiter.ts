/**
 * The per-principal-and-device limit of every authenticated route (decision 0013), counted in memory:
 * a request costs a keyed hash and a map update, no store IO. The store-backed limiter
 * (`rateLimiter.ts`, a write and a range read per request) stays for login and refresh, which are
 * rare and must be exact across instances.
 *
 * Each bucket holds its counts of two fixed windows (`decideSlidingWindow`). Buckets live in the one
 * bounded cache, so a flood of distinct callers evicts the oldest buckets rather than growing memory;
 * an evicted caller starts afresh, which errs towards allowing, never towards refusing.
 *
 * Instances sharing a CouchDB share the buckets approximately: every `exchangeEveryMs` each instance
 * reads the other instances' documents (one range read) and writes its own counts (one `bulkDocs`,
 * only when it counted something since), so each decision adds the others' counts of at most one
 * exchange ago. N instances together let through at most the limit plus what the others counted in
 * one exchange period. A failed exchange is reported and the instance goes on counting alone (fail
 * open: an outage of the store must not lock a door out).
 *
 * Bucket keys are an HMAC of scope and client key: user ids are personal data and never stored.
 */
import { createHmac, randomUUID } from 'node:crypto';
import * as t from 'io-ts';
import { boundedCache } from '../lib/boundedCache.js';
import {
  decideSlidingWindow,
  type RateLimitDecision,
  type RateLimitPolicy,
  rollCounts,
  type WindowCounts,
  windowIndex,
} from '../rules/rateLimit.js';
import type { Database } from './pouch.js';

export interface CallerRateLimiterOptions {
  readonly clock: () => Date;
  /** Key of the HMAC naming buckets; instances sharing a store must share it. */
  readonly clientKeySecret: string | Uint8Array;
  /** Buckets held at most (default 50,000: a few MB; far more devices than one deployment has). */
  readonly maxBuckets?: number;
  readonly onExchangeFailure?: (e: unknown) => void;
}

export interface CallerRateLimiter {
  /** Counts the request and decides on it; synchronous, no IO. */
  check(scope: string, clientKey: string, policy: RateLimitPolicy): RateLimitDecision;
  /** One exchange with the other instances: read theirs, write ours. Never rejects (fail open). */
  exchange(): Promise<void>;
  /** Exchanges every `everyMs` until stopped; `stop` waits for a running exchange and removes ours. */
  startExchange(everyMs: number): void;
  stop(): Promise<void>;
}

interface Bucket {
  readonly windowMs: number;
  readonly index: number;
  readonly counts: WindowCounts;
}

/** A bucket of ours, with the name the other instances know it by. */
interface OwnBucket extends Bucket {
  readonly sharedKey: string;
}

const SHARE_PREFIX = 'rl-share:';
// [bucket key, window length, window index, current count, previous count]
const SharedBucket = t.tuple([t.string, t.number, t.number, t.number, t.number]);
const ShareDoc = t.type({
  _id: t.string,
  _rev: t.string,
  at: t.number,
  buckets: t.array(SharedBucket),
});

const emptyCounts: WindowCounts = { current: 0, previous: 0 };

const addCounts = (a: WindowCounts, b: WindowCounts): WindowCounts => ({
  current: a.current + b.current,
  previous: a.previous + b.previous,
});

export const callerRateLimiter = (
  db: Database | undefined,
  options: CallerRateLimiterOptions,
): CallerRateLimiter => {
  // boundedCache has no iteration: the key set mirrors it for the exchange, pruned as buckets go.
  const keys = new Set<string>();
  // Keyed by scope and client key as given; the keyed hash is made once per bucket, not per request.
  const buckets = boundedCache<OwnBucket>({ maxEntries: options.maxBuckets ?? 50_000 }, (key) =>
    keys.delete(key),
  );
  // The other instances' counts as of the last exchange, summed per bucket and window.
  let others = new Map<string, Bucket>();
  // One document per process (not per deployment): two instances never write the same document.
  const shareId = `${SHARE_PREFIX}${randomUUID()}`;
  let shareRev: string | undefined;
  let dirty = false;
  let longestWindowMs = 0;
  const bucketKey = (key: string): string =>
    createHmac('sha256', options.clientKeySecret).update(key, 'utf8').digest('base64url').slice(0, 24);
  const report = (e: unknown): void => {
    try {
      options.onExchangeFailure?.(e);
    } catch {
      // A failing reporter must not break the exchange loop.
    }
  };

  /** A bucket's counts as seen in window `index` (older windows roll forward, others are none). */
  const seenAt = (bucket: Bucket | undefined, windowMs: number, index: number): WindowCounts =>
    bucket === undefined || bucket.windowMs !== windowMs || bucket.index > index
      ? emptyCounts
      : rollCounts(bucket.counts, bucket.index, index);

  function* bucketEntries(): Generator<OwnBucket> {
    for (const key of keys) {
      const bucket = buckets.get(key);
      if (bucket !== undefined) yield bucket;
    }
  }

  // Documents of stopped instances found by the last read, removed with our next write.
  let stale: Array<{ _id: string; _rev: string; _deleted: true }> = [];

  /** Our counts of the current and previous windows, in one write with the stale removals. */
  const writeOurs = async (now: number): Promise<void> => {
    if (!dirty && stale.length === 0) return;
    dirty = false;
    const live: Array<t.TypeOf<typeof SharedBucket>> = [];
    for (const bucket of bucketEntries()) {
      const current = windowIndex(now, bucket.windowMs);
      const counts = seenAt(bucket, bucket.windowMs, current);
      if (counts.current + counts.previous > 0)
        live.push([bucket.sharedKey, bucket.windowMs, current, counts.current, counts.previous]);
    }
    const removing = stale;
    stale = [];
    const written = await db?.bulkDocs([
      {
        _id: shareId,
        ...(shareRev === undefined ? {} : { _rev: shareRev }),
        docType: 'rateShare',
        at: now,
        buckets: live,
      },
      ...removing,
    ]);
    const mine = written?.[0];
    if (mine !== undefined && 'rev' in mine && typeof mine.rev === 'string') shareRev = mine.rev;
    // Not written (a conflict: the read below learns our revision): written again next time.
    else dirty = true;
  };

  /** The other instances' counts, summed per bucket; our own revision; stopped instances' documents. */
  const readTheirs = async (now: number): Promise<void> => {
    if (db === undefined) return;
    const found = await db.allDocs({
      startkey: SHARE_PREFIX,
      endkey: `${SHARE_PREFIX}\ufff0`,
      include_docs: true,
    });
    const next = new Map<string, Bucket>();
    // A document not rewritten for two of the longest windows is of a stopped instance: none of its
    // counts can matter any more.
    const staleBefore = now - 2 * Math.max(longestWindowMs, 60_000);
    for (const row of found.rows) {
      const doc = ShareDoc.decode(row.doc);
      if (doc._tag === 'Left') continue;
      if (doc.right._id === shareId) {
        shareRev = doc.right._rev;
        continue;
      }
      if (doc.right.at < staleBefore) {
        stale.push({ _id: doc.right._id, _rev: doc.right._rev, _deleted: true });
        continue;
      }
      for (const [key, windowMs, index, current, previous] of doc.right.buckets) {
        const have = next.get(key);
        const latest = Math.max(index, have?.index ?? index);
        const theirs = rollCounts({ current, previous }, index, latest);
        next.set(key, { windowMs, index: latest, counts: addCounts(theirs, seenAt(have, windowMs, latest)) });
      }
    }
    others = next;
  };

  // Write first, then read: of two instances exchanging at once, each then likely reads the other's
  // newest counts, not those of a period before.
  const exchange = async (): Promise<void> => {
    if (db === undefined) return;
    try {
      const now = options.clock().getTime();
      await writeOurs(now);
      await readTheirs(now);
    } catch (e) {
      dirty = true;
      report(e);
    }
  };

  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;

  return {
    check(scope, clientKey, policy) {
      const now = options.clock().getTime();
      longestWindowMs = Math.max(longestWindowMs, policy.windowMs);
      const key = `${scope}\u0000${clientKey}`;
      const index = windowIndex(now, policy.windowMs);
      const held = buckets.get(key);
      const own = seenAt(held, policy.windowMs, index);
      // Refused requests count too, so hammering does not reopen the window early.
      const counts = { current: own.current + 1, previous: own.previous };
      const sharedKey = held?.sharedKey ?? bucketKey(key);
      buckets.set(key, { windowMs: policy.windowMs, index, counts, sharedKey });
      keys.add(key);
      dirty = true;
      return decideSlidingWindow({
        counts: addCounts(counts, seenAt(others.get(sharedKey), policy.windowMs, index)),
        elapsedMs: now - index * policy.windowMs,
        policy,
      });
    },
    exchange,
    startExchange(everyMs) {
      if (db === undefined || timer !== undefined) return;
      timer = setInterval(() => {
        // Rounds never overlap: a slow store skips ticks rather than piling reads up.
        running ??= exchange().finally(() => {
          running = undefined;
        });
      }, everyMs);
      timer.unref();
    },
    async stop() {
      if (timer !== undefined) clearInterval(timer);
      timer = undefined;
      await running;
      if (db === undefined || shareRev === undefined) return;
      // Our counts leave with us; the others would otherwise count them until they go stale.
      await db.remove(shareId, shareRev).catch(report);
    },
  };
};
