/**
 * A database's change feed as a cold observable. Subscribing opens a live PouchDB feed; unsubscribing
 * cancels it, so a pipeline's teardown closes its feed with it.
 */
import { asyncScheduler, defer, Observable, retry, type SchedulerLike, tap, timer } from 'rxjs';
import type { Database } from '../store/pouch.js';

export interface Change {
  readonly id: string;
  readonly seq: string | number;
  readonly deleted: boolean;
  /** The revision the change made (a cache that holds it has nothing to forget). */
  readonly rev?: string;
  /** Undecoded: a consumer decodes it with the codec of the document kind it expects. */
  readonly doc?: unknown;
  /** The copy the feed showed was withdrawn since (`settledCopies.ts`): its own change comes later. */
  readonly superseded?: boolean;
  /**
   * With `allLeaves`: how many leaf revisions the document has, deleted ones included. More than one
   * on a projection document means two writers forked it on a cluster, or once did (decision 0038).
   */
  readonly leaves?: number;
}

export interface ChangeFeedOptions {
  /** Sequence to resume after; `now` starts at the current end; default `0` replays everything. */
  readonly since?: string | number | 'now';
  readonly includeDocs?: boolean;
  /** Name every leaf revision of each change (`style=all_docs`), counted in `leaves`. */
  readonly allLeaves?: boolean;
}

export const changes$ = (db: Database, options: ChangeFeedOptions = {}): Observable<Change> =>
  new Observable<Change>((subscriber) => {
    const feed = db.changes({
      live: true,
      since: options.since ?? 0,
      include_docs: options.includeDocs ?? false,
      ...(options.allLeaves === true ? { style: 'all_docs' as const } : {}),
    });
    feed.on('change', (c) => {
      const rev = c.changes[0]?.rev;
      subscriber.next({
        id: c.id,
        seq: c.seq,
        deleted: c.deleted === true,
        ...(rev === undefined ? {} : { rev }),
        ...(options.allLeaves === true ? { leaves: c.changes.length } : {}),
        ...(c.doc === undefined ? {} : { doc: c.doc }),
      });
    });
    feed.on('error', (e: unknown) => subscriber.error(e));
    feed.on('complete', () => subscriber.complete());
    return () => feed.cancel();
  });

export interface FollowOptions extends ChangeFeedOptions {
  /** Longest pause between reconnection attempts. */
  readonly maxBackoffMs?: number;
  readonly scheduler?: SchedulerLike;
  readonly onRetry?: (attempt: number, error: unknown) => void;
}

/**
 * A change feed that outlives its store's outages: when the feed fails (a CouchDB restart, a network
 * cut) it reconnects with exponential backoff from the last sequence it delivered, so nothing is
 * missed and little is replayed. It never errors; it completes only when unsubscribed.
 */
export const followChanges$ = (db: Database, options: FollowOptions = {}): Observable<Change> => {
  let since: string | number | 'now' = options.since ?? 0;
  const maxBackoffMs = options.maxBackoffMs ?? 30_000;
  return defer(() => changes$(db, { ...options, since })).pipe(
    tap((change) => {
      since = change.seq;
    }),
    retry({
      resetOnSuccess: true,
      delay: (error: unknown, attempt: number) => {
        options.onRetry?.(attempt, error);
        return timer(
          Math.min(maxBackoffMs, 250 * 2 ** Math.min(attempt, 10)),
          options.scheduler ?? asyncScheduler,
        );
      },
    }),
  );
};
