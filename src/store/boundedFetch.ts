/**
 * The fetch PouchDB's http adapter uses for CouchDB: no request waits for ever. PouchDB 9 sets no
 * timeout of its own, so a CouchDB node that stops answering without closing its sockets (frozen, a
 * disk stall, a long pause) held every request that reached it for as long as the stall lasted, and
 * the requests of ours that made several such calls for twice that (decision 0023).
 *
 * A request fails with `StoreTimeoutError` once its answer has been silent for the limit: no headers
 * yet, or no byte of the body since the last one. Silence, not total time, so a long but flowing
 * answer (a big page, a first index build that streams) is never cut. A live `_changes` feed (a
 * longpoll, or the continuous feed of `changeFeed.ts`) is silent by design between heartbeats (one
 * every 10 s is asked for), so its limit is the heartbeat plus the limit.
 *
 * A read made for a request also stops when that request's deadline passes (`REQUEST_DEADLINE_MS`,
 * decision 0046), with `DeadlinePassed`: it waits at most the silence limit or what is left of the
 * deadline, whichever is shorter. A write is not abandoned at the deadline: whether it landed is
 * known only to whoever waits for its answer, and its writer must learn it to finish its work or undo
 * it (release an idempotency claim, store the final answer for the client's retry). It keeps its
 * silence limit, and the request has been answered at its deadline all the same.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { DeadlinePassed, deadlineSignal } from '../lib/deadline.js';
import { StoreTimeoutError } from './storeErrors.js';

/** How many times the silence limit a call made `patiently` waits. */
export const BULK_WRITE_PATIENCE = 4;

const patience = new AsyncLocalStorage<number>();

/**
 * Runs `work` with its CouchDB calls allowed `BULK_WRITE_PATIENCE` times the store's silence limit:
 * calls that CouchDB answers only once a long piece of work is done, silent meanwhile. A bulk write of
 * create-once documents (an import's students and events, a tablet's events) is answered once every
 * document is written: beside CouchDB's own indexing and compaction during a 10,000-row file, writes
 * of 500 students took 2.6 to 6.5 s (one node, 2 cores); cut at 5 s, each was sent again while
 * CouchDB still wrote the first send, which added to the load that made it slow, and the third cut of
 * one write answered the file 503. A view read that waits for its index (`whenIndexed`) is answered
 * once the index holds every write. A node that is gone is still found, later; the door's calls keep
 * the limit. Decision 0064.
 */
export const patiently = <A>(work: () => A): A => patience.run(BULK_WRITE_PATIENCE, work);

/** The heartbeat of live feeds: PouchDB's (pouchdb-adapter-http's DEFAULT_HEARTBEAT), and ours. */
export const FEED_HEARTBEAT_MS = 10_000;

const urlOf = (input: string | URL | Request): string =>
  typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;

/** A URL's path alone: its query may hold keys of personal data, its authority the credentials. */
const pathOf = (url: string): string => {
  try {
    return new URL(url).pathname;
  } catch {
    return '(a URL that does not parse)';
  }
};

/** The CouchDB endpoints that take a POST to read (a body of keys, ids or a selector), not to write. */
const READ_POSTS = new Set(['_all_docs', '_bulk_get', '_changes', '_revs_diff', '_find', '_explain']);

/** True when the call only reads: abandoning it costs nothing but its answer. */
export const isReadCall = (method: string, url: string): boolean => {
  const verb = method.toUpperCase();
  if (verb === 'GET' || verb === 'HEAD') return true;
  if (verb !== 'POST') return false;
  const path = new URL(url).pathname.split('/').filter((p) => p !== '');
  const last = path[path.length - 1] ?? '';
  return READ_POSTS.has(last) || path[path.length - 2] === '_view';
};

export const boundedFetch =
  (silenceMs: number, base: typeof fetch = fetch): typeof fetch =>
  async (input, init) => {
    const url = urlOf(input);
    const silence = silenceMs * (patience.getStore() ?? 1);
    const limit = /[?&]feed=(longpoll|continuous)\b/.test(url) ? silence + FEED_HEARTBEAT_MS : silence;
    const method = init?.method ?? (input instanceof Request ? input.method : 'GET');
    const timer = new AbortController();
    const timeout = () => new StoreTimeoutError(limit, `${method.toUpperCase()} ${pathOf(url)}`);
    let pending: NodeJS.Timeout | undefined;
    const arm = () => {
      clearTimeout(pending);
      // unref: a timer left by a body nobody reads must not hold the process open at its stop.
      pending = setTimeout(() => timer.abort(timeout()), limit).unref();
    };
    const disarm = () => clearTimeout(pending);
    // Read when the call starts: a deadline that fired already leaves this call to its own limit.
    const deadline = isReadCall(method, url) ? deadlineSignal() : undefined;
    const signals = [init?.signal, timer.signal, deadline].filter((x): x is AbortSignal => x != null);
    const signal = signals.length === 1 ? timer.signal : AbortSignal.any(signals);
    const stopped = (e: unknown): unknown =>
      deadline?.aborted === true && !timer.signal.aborted && deadline.reason instanceof DeadlinePassed
        ? deadline.reason
        : timer.signal.aborted
          ? timeout()
          : e;
    arm();
    let response: Response;
    try {
      response = await base(input, { ...init, signal });
    } catch (e) {
      disarm();
      throw stopped(e);
    }
    if (response.body === null) {
      disarm();
      return response;
    }
    arm();
    const watched = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          arm();
          controller.enqueue(chunk);
        },
        flush: disarm,
      }),
    );
    return new Response(watched, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
