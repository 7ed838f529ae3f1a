/**
 * The one way the kiosk and the office reach the API, in the shape of openapi-fetch: one core fetch
 * with the cross-cutting concerns around it, so a caller says what it wants and never how to fetch it.
 *
 * - Every call carries the signed-in user's bearer token and this browser's `X-Device-Id`.
 * - Every mutation carries an `Idempotency-Key`, made once per call: the retry after a refresh sends
 *   the same one, so a first attempt that did reach the server is never done twice.
 * - A 401 refreshes the tokens once for every call that met it (single flight: a refresh token
 *   presented twice is taken for a stolen one and ends every session of the user, 0013), then the call
 *   is sent again. A call that meets a 401 after another one has refreshed is sent again with the new
 *   token, without a refresh of its own.
 * - A refresh the server refuses (401: used, revoked, past its end) signs out: nothing more can be sent
 *   with those tokens. What "signed out" keeps is the app's choice (`refused`): the office forgets the
 *   user, the kiosk keeps them marked expired so its outbox waits for the same user (0020). A refresh
 *   that finds no network, or a busy or failing server, changes nothing; a later call tries again.
 * - Every answer outside 2xx is read as the contract's error envelope into a `Failure`; a 2xx answer
 *   is read by the call's reader (a `src/domain` codec, text or bytes), leniently (`lenient.ts`).
 *
 * No DOM and no Web Storage here: each app hands in its fetch, device id and where it keeps the
 * sign-in, which is also how the tests drive it with a fake fetch.
 */
import * as E from 'fp-ts/lib/Either.js';
import type * as t from 'io-ts';
import { ErrorEnvelope } from '../domain/errors.js';
import { ValidationDetails } from '../domain/issues.js';
import { TokenPair } from '../domain/session.js';
import { decodeLenient } from './lenient.js';

export type Failure =
  /** No answer: offline, or the server could not be reached. */
  | { readonly kind: 'network' }
  /** No usable sign-in: nothing was sent. */
  | { readonly kind: 'signed-out' }
  /** The server said no, in the contract's envelope. */
  | { readonly kind: 'refused'; readonly status: number; readonly error: ErrorEnvelope['error'] }
  /** An answer the contract does not describe: not the envelope, or a body its codec refuses. */
  | { readonly kind: 'unexpected'; readonly status: number };

/** The status a failure stands for: 0 without an answer, 401 without a sign-in. */
export const statusOf = (f: Failure): number =>
  f.kind === 'network' ? 0 : f.kind === 'signed-out' ? 401 : f.status;

/** The server's own words when it gave them, else the status. */
export const failureMessage = (f: Failure): string =>
  f.kind === 'refused' ? f.error.message : `HTTP ${statusOf(f)}`;

/** A refusal's `details` as `codec` reads them; undefined for any other failure, or details it refuses. */
export const detailsOf = <A, O>(f: Failure, codec: t.Type<A, O, unknown>): A | undefined => {
  if (f.kind !== 'refused') return undefined;
  const details = codec.decode(f.error.details);
  return E.isRight(details) ? details.right : undefined;
};

/** What a VALIDATION_FAILED says is wrong, when that is the failure. */
export const validationDetails = (f: Failure): ValidationDetails | undefined =>
  f.kind === 'refused' && f.error.code === 'VALIDATION_FAILED' ? detailsOf(f, ValidationDetails) : undefined;

export type Reader<A> = (answer: Response) => Promise<E.Either<Failure, A>>;

const NETWORK: Failure = { kind: 'network' };
const SIGNED_OUT: Failure = { kind: 'signed-out' };

const bodyJson = async (answer: Response): Promise<unknown> => {
  try {
    return JSON.parse(await answer.text());
  } catch {
    return undefined;
  }
};

/** A JSON answer decoded by `codec` (a `src/domain` codec), unknown fields read past. */
export const json =
  <A, O>(codec: t.Type<A, O, unknown>): Reader<A> =>
  async (answer) => {
    const decoded = decodeLenient(codec, await bodyJson(answer));
    return E.isRight(decoded)
      ? E.right(decoded.right)
      : E.left({ kind: 'unexpected', status: answer.status });
  };

/** A text answer (a report's CSV), handed over as it came. */
export const text: Reader<string> = async (answer) => {
  try {
    return E.right(await answer.text());
  } catch {
    return E.left(NETWORK);
  }
};

export interface Bytes {
  readonly bytes: Uint8Array<ArrayBuffer>;
  readonly type: string;
}

/** A binary answer (a photo). */
export const bytes: Reader<Bytes> = async (answer) => {
  try {
    return E.right({
      bytes: new Uint8Array(await answer.arrayBuffer()),
      type: answer.headers.get('content-type') ?? '',
    });
  } catch {
    return E.left(NETWORK);
  }
};

/** What an answer outside 2xx says: the envelope, or that it is not one. */
export const failureOf = async (answer: Response): Promise<Failure> => {
  const envelope = decodeLenient(ErrorEnvelope, await bodyJson(answer));
  return E.isRight(envelope)
    ? { kind: 'refused', status: answer.status, error: envelope.right.error }
    : { kind: 'unexpected', status: answer.status };
};

/** An answer read as a call wants it: 2xx by `read`, anything else as a failure. */
export const readAnswer = async <A>(answer: Response, read: Reader<A>): Promise<E.Either<Failure, A>> =>
  answer.ok ? read(answer) : E.left(await failureOf(answer));

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

const MUTATIONS: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export type Body =
  | { readonly json: unknown }
  /** Bytes of a media type of their own (a photo, a CSV file). */
  | { readonly bytes: Blob; readonly type: string };

export interface Call<A> {
  readonly method: Method;
  /** The path with its query string. */
  readonly path: string;
  readonly body?: Body;
  /** The media type asked for, when the route answers more than JSON (a report as CSV). */
  readonly accept?: string;
  readonly read: Reader<A>;
}

/** What the transport needs of a kept sign-in; each app keeps what else it wants beside. */
export interface Tokens {
  readonly accessToken: string;
  readonly refreshToken: string;
}

/** A login or refresh answer in bearer mode, which always carries the refresh token. */
export type TokenAnswer = TokenPair & { readonly refreshToken: string };

/**
 * What a kept sign-in allows now: `use` it; `refresh-first` (its access token is about to expire);
 * it has `ended` (no refresh can help: it is signed out as a refused refresh would sign it out); or it
 * is `unusable` already (signed out, kept for its user).
 */
export type SignInPlan = 'use' | 'refresh-first' | 'ended' | 'unusable';

export interface TransportOptions<S extends Tokens> {
  readonly fetch: typeof fetch;
  readonly deviceId: string;
  /** Where the sign-in is kept (read once, at the start). */
  readonly load: () => S | undefined;
  readonly save: (signIn: S | undefined) => void;
  /** What is kept of a login or refresh answer. */
  readonly keep: (answer: TokenAnswer) => S;
  /** What is left of a sign-in once signed out by a refused refresh: nothing, unless the app says. */
  readonly refused?: (signIn: S) => S | undefined;
  readonly plan?: (signIn: S, nowMs: number) => SignInPlan;
  readonly now?: () => number;
  readonly newKey?: () => string;
}

/** The user's answer to a sign-in the app would not take (the kiosk: another user's records wait). */
export type SignInFailure = Failure | { readonly kind: 'not-accepted' };

export interface Transport<S extends Tokens> {
  readonly deviceId: string;
  current(): S | undefined;
  /** `accept` may refuse the user signed in (their new session is then revoked at once). */
  signIn(email: string, password: string, accept?: (next: S) => boolean): Promise<E.Either<SignInFailure, S>>;
  signOut(): Promise<void>;
  send<A>(call: Call<A>): Promise<E.Either<Failure, A>>;
  /**
   * The same, as a `fetch` for what speaks its own protocol over it (PouchDB's replication, a queue
   * that keeps its own Idempotency-Key across tries): without a usable sign-in it answers 401 itself.
   */
  readonly fetch: typeof fetch;
  onChange(listener: () => void): void;
}

const headersOf = (init: RequestInit | undefined, extra: Readonly<Record<string, string>>): Headers => {
  const headers = new Headers(init?.headers);
  for (const [name, value] of Object.entries(extra)) headers.set(name, value);
  return headers;
};

export const createTransport = <S extends Tokens>(options: TransportOptions<S>): Transport<S> => {
  const {
    deviceId,
    keep,
    refused = () => undefined,
    plan = () => 'use',
    now = Date.now,
    newKey = () => crypto.randomUUID(),
  } = options;
  const base = options.fetch;
  let signIn = options.load();
  const listeners: Array<() => void> = [];
  const set = (next: S | undefined): void => {
    signIn = next;
    options.save(next);
    for (const listener of listeners) listener();
  };
  const usable = (s: S | undefined): S | undefined =>
    s === undefined || plan(s, now()) === 'unusable' ? undefined : s;

  /** A login or refresh: public routes, no token, the device id for the session it opens. */
  const tokens = async (path: string, body: unknown): Promise<E.Either<Failure, TokenAnswer>> => {
    let answer: Response;
    try {
      answer = await base(path, {
        method: 'POST',
        cache: 'no-store',
        headers: { 'Content-Type': 'application/json', 'X-Device-Id': deviceId },
        body: JSON.stringify(body),
      });
    } catch {
      return E.left(NETWORK);
    }
    const read = await readAnswer(answer, json(TokenPair));
    if (E.isLeft(read)) return read;
    const { refreshToken } = read.right;
    // Cookie mode keeps the refresh token from scripts: a client that holds its tokens cannot use it.
    return refreshToken === undefined
      ? E.left({ kind: 'unexpected', status: answer.status })
      : E.right({ ...read.right, refreshToken });
  };

  let refreshing: Promise<boolean> | undefined;
  const refreshShared = (): Promise<boolean> => {
    refreshing ??= (async () => {
      const before = usable(signIn);
      if (before === undefined) return false;
      const answer = await tokens('/api/v1/auth/refresh', { refreshToken: before.refreshToken });
      // A sign-in made meanwhile (another user at the same tablet) is not this refresh's to change.
      if (signIn !== before) return false;
      if (E.isRight(answer)) {
        set(keep(answer.right));
        return true;
      }
      if (answer.left.kind === 'refused' && answer.left.status === 401) set(refused(before));
      return false;
    })().finally(() => {
      refreshing = undefined;
    });
    return refreshing;
  };

  /**
   * Sends with the sign-in's token and, after a 401, once more with a renewed one. Undefined when no
   * usable sign-in is kept: nothing was sent. A failure to reach the server is thrown, as fetch does.
   */
  const authorised = async (
    input: RequestInfo | URL,
    init: RequestInit | undefined,
  ): Promise<Response | undefined> => {
    const before = usable(signIn);
    if (before === undefined) return undefined;
    const planned = plan(before, now());
    if (planned === 'ended') {
      set(refused(before));
      return undefined;
    }
    if (planned === 'refresh-first') await refreshShared();
    const token = () => usable(signIn)?.accessToken;
    const attempt = (bearer: string) =>
      base(input, {
        ...init,
        headers: headersOf(init, { Authorization: `Bearer ${bearer}`, 'X-Device-Id': deviceId }),
      });
    // A refresh-first the server refused leaves no token: the old one is sent, and its 401 answered.
    const sentWith = token() ?? before.accessToken;
    const first = await attempt(sentWith);
    if (first.status !== 401) return first;
    // Unless another call renewed the tokens while this one was out, refresh (or join its refresh).
    if (token() === sentWith) await refreshShared();
    const retryWith = token();
    return retryWith !== undefined && retryWith !== sentWith ? attempt(retryWith) : first;
  };

  /** The key travels in `init`, so the retry of `authorised` sends the same one. */
  const keyed = (input: RequestInfo | URL, init: RequestInit | undefined): RequestInit | undefined => {
    const method = (init?.method ?? (input instanceof Request ? input.method : 'GET')).toUpperCase();
    if (!MUTATIONS.has(method)) return init;
    const headers = new Headers(init?.headers);
    if (!headers.has('Idempotency-Key')) headers.set('Idempotency-Key', newKey());
    return { ...init, headers };
  };

  const authedFetch: typeof fetch = async (input, init) => {
    const answer = await authorised(input, keyed(input, init));
    return (
      answer ??
      new Response(JSON.stringify({ error: 'unauthorized', reason: 'not signed in' }), {
        status: 401,
        headers: { 'Content-Type': 'application/json' },
      })
    );
  };

  const revoke = async (s: S): Promise<void> => {
    try {
      await base('/api/v1/auth/revoke', {
        method: 'POST',
        cache: 'no-store',
        headers: {
          Authorization: `Bearer ${s.accessToken}`,
          'X-Device-Id': deviceId,
          'Idempotency-Key': newKey(),
        },
      });
    } catch {
      // Offline: the session ends on its own at its expiry; the tokens are forgotten here either way.
    }
  };

  return {
    deviceId,
    current: () => signIn,
    async signIn(email, password, accept = () => true) {
      const answer = await tokens('/api/v1/auth/login', { email, password });
      if (E.isLeft(answer)) return answer;
      const next = keep(answer.right);
      if (!accept(next)) {
        await revoke(next);
        return E.left({ kind: 'not-accepted' });
      }
      set(next);
      return E.right(next);
    },
    async signOut() {
      const before = usable(signIn);
      if (before !== undefined) await revoke(before);
      set(undefined);
    },
    async send<A>(call: Call<A>) {
      const headers: Record<string, string> = {};
      if (call.accept !== undefined) headers.Accept = call.accept;
      let body: RequestInit['body'];
      if (call.body !== undefined && 'json' in call.body) {
        headers['Content-Type'] = 'application/json';
        body = JSON.stringify(call.body.json);
      } else if (call.body !== undefined) {
        headers['Content-Type'] = call.body.type;
        body = call.body.bytes;
      }
      const init = keyed(call.path, {
        method: call.method,
        cache: 'no-store',
        headers,
        ...(body === undefined ? {} : { body }),
      });
      let answer: Response | undefined;
      try {
        answer = await authorised(call.path, init);
      } catch {
        return E.left(NETWORK);
      }
      return answer === undefined ? E.left(SIGNED_OUT) : readAnswer(answer, call.read);
    },
    fetch: authedFetch,
    onChange(listener) {
      listeners.push(listener);
    },
  };
};
