/**
 * A database's change feed as a cold observable. Subscribing opens a live feed; unsubscribing cancels
 * it, so a pipeline's teardown closes its feed with it.
 *
 * On CouchDB the feed is one continuous `_changes` request (`feed=continuous`, a change per line and
 * a newline every heartbeat), as CouchDB's own replicator reads a source. PouchDB's live feed over
 * HTTP is a longpoll: one request per burst of changes, and the service follows three databases that
 * every check-in writes, so the longpolls were about 2 of the 9 requests a check-in cost CouchDB
 * (decision 0019, twelfth round).
 */
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import { asyncScheduler, defer, Observable, retry, type SchedulerLike, tap, timer } from 'rxjs';
import { FEED_HEARTBEAT_MS } from '../store/boundedFetch.js';
import { isRemote } from '../store/docs.js';
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

/** A row of `_changes` as PouchDB and CouchDB write it. */
interface ChangeRow {
  readonly id: string;
  readonly seq: string | number;
  readonly deleted?: boolean;
  readonly changes: ReadonlyArray<{ readonly rev: string }>;
  readonly doc?: unknown;
}

const changeOf = (c: ChangeRow, options: ChangeFeedOptions): Change => {
  // The winning revision first (CouchDB's `doc_info` order), the others after it with `style=all_docs`.
  const rev = c.changes[0]?.rev;
  return {
    id: c.id,
    seq: c.seq,
    deleted: c.deleted === true,
    ...(rev === undefined ? {} : { rev }),
    ...(options.allLeaves === true ? { leaves: c.changes.length } : {}),
    ...(c.doc === undefined ? {} : { doc: c.doc }),
  };
};

export const changes$ = (db: Database, options: ChangeFeedOptions = {}): Observable<Change> =>
  isRemote(db) ? continuousChanges$(db, options) : localChanges$(db, options);

const localChanges$ = (db: Database, options: ChangeFeedOptions): Observable<Change> =>
  new Observable<Change>((subscriber) => {
    const feed = db.changes({
      live: true,
      since: options.since ?? 0,
      include_docs: options.includeDocs ?? false,
      ...(options.allLeaves === true ? { style: 'all_docs' as const } : {}),
    });
    feed.on('change', (c) => {
      subscriber.next(changeOf(c, options));
    });
    feed.on('error', (e: unknown) => subscriber.error(e));
    feed.on('complete', () => subscriber.complete());
    return () => feed.cancel();
  });

/** One line of a continuous feed: a change, or the feed's end (`last_seq`). */
const ChangeLine = t.intersection([
  t.type({
    seq: t.union([t.string, t.number]),
    id: t.string,
    changes: t.array(t.type({ rev: t.string })),
  }),
  t.partial({ deleted: t.boolean, doc: t.unknown }),
]);
const EndLine = t.type({ last_seq: t.union([t.string, t.number]) });

/** A continuous feed that ended, or answered other than 200: the follower reconnects. */
export class ChangeFeedEndedError extends Error {
  constructor(
    readonly database: string,
    readonly reason: string,
  ) {
    super(`the change feed of ${database} ended: ${reason}`);
    this.name = 'ChangeFeedEndedError';
  }
}

/** A CouchDB database's address as PouchDB names it, less the password `COUCHDB_URL` may carry. */
const withoutCredentials = (address: string): string => {
  if (!URL.canParse(address)) return address;
  const url = new URL(address);
  url.username = '';
  url.password = '';
  return url.toString();
};

/** PouchDB's http adapter's `fetch` (its credentials, our `boundedFetch`), which its types leave out. */
interface FetchingDatabase {
  fetch(path: string, init: RequestInit): Promise<unknown>;
}
const canFetch = (db: object): db is FetchingDatabase => 'fetch' in db && typeof db.fetch === 'function';

/**
 * What the adapter's fetch answers: a WHATWG response (the service's `boundedFetch`), or node-fetch's
 * (PouchDB's default), whose body is a Node stream; both bodies are async iterables of bytes.
 */
interface StreamingResponse {
  readonly ok: boolean;
  readonly status: number;
  readonly body: AsyncIterable<Uint8Array | string> | null;
}
const isAsyncIterable = (v: unknown): v is AsyncIterable<Uint8Array | string> =>
  typeof v === 'object' && v !== null && Symbol.asyncIterator in v;
const isStreamingResponse = (v: unknown): v is StreamingResponse =>
  typeof v === 'object' &&
  v !== null &&
  'ok' in v &&
  typeof v.ok === 'boolean' &&
  'status' in v &&
  typeof v.status === 'number' &&
  'body' in v &&
  (v.body === null || isAsyncIterable(v.body));

const continuousChanges$ = (db: Database, options: ChangeFeedOptions): Observable<Change> =>
  new Observable<Change>((subscriber) => {
    const cancel = new AbortController();
    const params = new URLSearchParams({
      feed: 'continuous',
      heartbeat: String(FEED_HEARTBEAT_MS),
      since: String(options.since ?? 0),
    });
    if (options.includeDocs === true) params.set('include_docs', 'true');
    if (options.allLeaves === true) params.set('style', 'all_docs');
    const ended = (reason: string) => new ChangeFeedEndedError(withoutCredentials(db.name), reason);
    const line = (text: string) => {
      // A heartbeat.
      if (text.trim() === '') return;
      const parsed: unknown = JSON.parse(text);
      const change = ChangeLine.decode(parsed);
      if (E.isLeft(change)) {
        // CouchDB ends a continuous feed only when asked to (a `timeout`, which this one does not send).
        throw ended(
          EndLine.is(parsed) ? 'the server closed it' : `an unreadable line: ${text.slice(0, 120)}`,
        );
      }
      subscriber.next(changeOf(change.right, options));
    };
    const read = async () => {
      if (!canFetch(db)) throw ended('no HTTP adapter');
      const response = await db.fetch(`_changes?${params.toString()}`, {
        signal: cancel.signal,
        // A compressed answer (express-pouchdb gzips) is held back until a compressor's block fills:
        // a line must arrive when its change does. CouchDB does not compress `_changes` anyway.
        headers: new Headers({ 'accept-encoding': 'identity' }),
      });
      if (!isStreamingResponse(response)) throw ended('no HTTP response');
      if (!response.ok || response.body === null) throw ended(`HTTP ${response.status}`);
      const decoder = new TextDecoder();
      let held = '';
      for await (const chunk of response.body) {
        held += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
        for (let end = held.indexOf('\n'); end >= 0; end = held.indexOf('\n')) {
          const text = held.slice(0, end);
          held = held.slice(end + 1);
          line(text);
          if (subscriber.closed) return;
        }
      }
      throw ended('the connection closed');
    };
    read().catch((e: unknown) => {
      if (!cancel.signal.aborted) subscriber.error(e);
    });
    return () => cancel.abort();
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
