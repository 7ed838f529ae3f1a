/**
 * A database's change feed as a cold observable. Subscribing opens a live PouchDB feed; unsubscribing
 * cancels it, so a pipeline's teardown closes its feed with it.
 */
import { Observable } from 'rxjs';
import type { Database } from '../store/pouch.js';

export interface Change {
  readonly id: string;
  readonly seq: string | number;
  readonly deleted: boolean;
  /** Undecoded: a consumer decodes it with the codec of the document kind it expects. */
  readonly doc?: unknown;
}

export interface ChangeFeedOptions {
  /** Sequence to resume after; `now` starts at the current end; default `0` replays everything. */
  readonly since?: string | number | 'now';
  readonly includeDocs?: boolean;
}

export const changes$ = (db: Database, options: ChangeFeedOptions = {}): Observable<Change> =>
  new Observable<Change>((subscriber) => {
    const feed = db.changes({
      live: true,
      since: options.since ?? 0,
      include_docs: options.includeDocs ?? false,
    });
    feed.on('change', (c) => {
      subscriber.next({
        id: c.id,
        seq: c.seq,
        deleted: c.deleted === true,
        ...(c.doc === undefined ? {} : { doc: c.doc }),
      });
    });
    feed.on('error', (e: unknown) => subscriber.error(e));
    feed.on('complete', () => subscriber.complete());
    return () => feed.cancel();
  });
