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
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { DeadlinePassed, deadlineSignal } from '../lib/deadline.js';
import { codeOf, StoreTimeoutError } from './storeErrors.js';

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

/** A live feed (`feed=longpoll` or `feed=continuous`): silent between heartbeats, read as it flows. */
const isFeed = (url: string): boolean => /[?&]feed=(longpoll|continuous)\b/.test(url);

/** The bodies the direct transport sends as they are; anything else (a Blob, a stream) goes by fetch. */
const sendableBody = (body: RequestInit['body']): string | Uint8Array | undefined =>
  body === undefined || body === null
    ? undefined
    : typeof body === 'string' || body instanceof Uint8Array
      ? body
      : body instanceof ArrayBuffer
        ? new Uint8Array(body)
        : undefined;

const hasSendableBody = (init: RequestInit | undefined): boolean =>
  init?.body === undefined || init.body === null || sendableBody(init.body) !== undefined;

const headersOf = (raw: IncomingMessage['headers']): Headers => {
  const headers = new Headers();
  for (const [name, value] of Object.entries(raw)) {
    if (Array.isArray(value)) for (const one of value) headers.append(name, one);
    else if (value !== undefined) headers.append(name, value);
  }
  return headers;
};

/**
 * Kept-alive connections for the process's CouchDB calls, as fetch kept them. A free socket is closed
 * after 4 s (undici's default, which fetch had), or a second before a server's `Keep-Alive: timeout`
 * hint, so a call rarely meets a socket the server has just closed; free sockets never hold the
 * process open (Node unrefs them).
 */
const FREE_SOCKET_MS = 4_000;
const httpAgent = new HttpAgent({ keepAlive: true, timeout: FREE_SOCKET_MS });
const httpsAgent = new HttpsAgent({ keepAlive: true, timeout: FREE_SOCKET_MS });

/**
 * Sends a read by Node's own HTTP client; resolves with the answer once its headers have come. A read
 * sent on a kept-alive socket that the server had closed before the client noticed (a CouchDB node
 * restarted, an idle socket closed as the call went out) fails before any answer, reset; it is sent
 * once more on a new connection, as Node's documentation advises (`request.reusedSocket`). A read only:
 * a write whose socket failed may have landed, and only its caller can tell.
 */
const sendRead = (
  url: URL,
  method: string,
  headers: Record<string, string>,
  body: string | Uint8Array | undefined,
  signal: AbortSignal,
  again = true,
): Promise<IncomingMessage> =>
  new Promise((resolve, reject) => {
    let answered = false;
    const onAnswer = (answer: IncomingMessage) => {
      answered = true;
      resolve(answer);
    };
    const options = { method, headers, signal };
    // Sent again, on a connection of its own: the pool may hold more sockets the server has closed.
    const call =
      url.protocol === 'https:'
        ? httpsRequest(url, { ...options, agent: again ? httpsAgent : false }, onAnswer)
        : httpRequest(url, { ...options, agent: again ? httpAgent : false }, onAnswer);
    // Before the answer, the call's failure; after it, the answer's stream fails too, for its reader.
    call.on('error', (e) => {
      if (again && !answered && call.reusedSocket && codeOf(e) === 'ECONNRESET' && !signal.aborted)
        resolve(sendRead(url, method, headers, body, signal, false));
      else reject(e);
    });
    call.end(body);
  });

/**
 * A CouchDB answer read whole by the direct transport: its body served from memory. PouchDB reads every
 * answer whole at once (`json()`, or `blob()` for an attachment), so nothing is lost by reading it
 * before returning; what is saved is fetch's own machinery and the WHATWG streams a `Response` wraps a
 * body in, and the one a watched body was piped through: a quarter to a third of the service's CPU for a
 * one-child search on CouchDB (decision 0078).
 */
class ReadAnswer extends Response {
  readonly #bytes: Buffer;
  #used = false;
  constructor(bytes: Buffer, init: ResponseInit) {
    super(null, init);
    this.#bytes = bytes;
  }
  #take(): Buffer {
    if (this.#used) throw new TypeError('Body is unusable: Body has already been read');
    this.#used = true;
    return this.#bytes;
  }
  override get bodyUsed(): boolean {
    return this.#used;
  }
  override async text(): Promise<string> {
    return this.#take().toString('utf8');
  }
  override async json(): Promise<unknown> {
    return JSON.parse(this.#take().toString('utf8'));
  }
  override async arrayBuffer(): Promise<ArrayBuffer> {
    return new Uint8Array(this.#take()).buffer;
  }
  override async blob(): Promise<Blob> {
    return new Blob([new Uint8Array(this.#take())], { type: this.headers.get('content-type') ?? '' });
  }
  override clone(): Response {
    if (this.#used) throw new TypeError('Response.clone: Body has already been consumed.');
    return new ReadAnswer(this.#bytes, {
      status: this.status,
      statusText: this.statusText,
      headers: this.headers,
    });
  }
}

/**
 * `base`: the fetch to call instead of the direct transport (a test's CouchDB shaped by hand). Without
 * it, a read (`isReadCall`) whose body is text or bytes goes straight through Node's HTTP client and is
 * read whole under the silence limit; a write, a live feed, or a call with a body of another kind goes
 * through fetch, its body watched as it flows. Writes stay with fetch: how it meets a connection the
 * server closed is what the store's handling of a write's unknown outcome was built and tested on.
 */
export const boundedFetch =
  (silenceMs: number, base?: typeof fetch): typeof fetch =>
  async (input, init) => {
    const url = urlOf(input);
    const silence = silenceMs * (patience.getStore() ?? 1);
    const feed = isFeed(url);
    const limit = feed ? silence + FEED_HEARTBEAT_MS : silence;
    const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
    const timer = new AbortController();
    const timeout = () => new StoreTimeoutError(limit, `${method} ${pathOf(url)}`);
    let pending: NodeJS.Timeout | undefined;
    const arm = () => {
      clearTimeout(pending);
      // unref: a timer left by a body nobody reads must not hold the process open at its stop.
      pending = setTimeout(() => timer.abort(timeout()), limit).unref();
    };
    const disarm = () => clearTimeout(pending);
    // Read when the call starts: a deadline that fired already leaves this call to its own limit.
    const read = isReadCall(method, url);
    const deadline = read ? deadlineSignal() : undefined;
    const signals = [init?.signal, timer.signal, deadline].filter((x): x is AbortSignal => x != null);
    const signal = signals.length === 1 ? timer.signal : AbortSignal.any(signals);
    const stopped = (e: unknown): unknown =>
      deadline?.aborted === true && !timer.signal.aborted && deadline.reason instanceof DeadlinePassed
        ? deadline.reason
        : timer.signal.aborted
          ? timeout()
          : e;
    arm();
    if (base === undefined && read && !feed && !(input instanceof Request) && hasSendableBody(init)) {
      const chunks: Uint8Array[] = [];
      try {
        const answer = await sendRead(
          new URL(url),
          method,
          Object.fromEntries(new Headers(init?.headers)),
          sendableBody(init?.body),
          signal,
        );
        arm();
        for await (const chunk of answer) {
          arm();
          if (chunk instanceof Uint8Array) chunks.push(chunk);
        }
        return new ReadAnswer(Buffer.concat(chunks), {
          status: answer.statusCode ?? 0,
          statusText: answer.statusMessage ?? '',
          headers: headersOf(answer.headers),
        });
      } catch (e) {
        // Node's client fails an aborted call with its own AbortError: the caller's reason is the answer.
        throw init?.signal?.aborted === true && !timer.signal.aborted ? init.signal.reason : stopped(e);
      } finally {
        disarm();
      }
    }
    let response: Response;
    try {
      response = await (base ?? fetch)(input, { ...init, signal });
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
