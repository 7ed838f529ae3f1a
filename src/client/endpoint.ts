/**
 * An endpoint as the browser client declares it: method, path and the `src/domain` codecs of its
 * query, body and answer, the same codec values the server's route declares (a test holds each
 * declaration to its route in the registry). From one declaration come the call's argument types and
 * the call itself: a page says which endpoint and with what, never a URL, a header or a decode.
 */
import type * as E from 'fp-ts/lib/Either.js';
import type * as t from 'io-ts';
import { BytesType } from '../domain/codec.js';
import {
  type Body,
  type Bytes,
  bytes,
  type Call,
  type Failure,
  json,
  type Method,
  text,
} from './transport.js';

export interface Endpoint {
  readonly method: Method;
  /** The route's path in the OpenAPI form: `/api/v1/students/{studentId}`. */
  readonly path: string;
  readonly query?: t.Mixed;
  /** A JSON body's codec, or the BytesType of a body sent as it is (a photo, a CSV file). */
  readonly body?: t.Mixed;
  /** The 2xx answer's codec (a BytesType for an image). */
  readonly response: t.Mixed;
  /** An answer read as text in this media type instead of JSON (a report as CSV). */
  readonly accept?: string;
}

type ParamNames<P extends string> = P extends `${string}{${infer N}}${infer Rest}`
  ? N | ParamNames<Rest>
  : never;

type ParamsArg<E extends Endpoint> = [ParamNames<E['path']>] extends [never]
  ? unknown
  : { readonly params: { readonly [K in ParamNames<E['path']>]: string } };

type QueryArg<E extends Endpoint> = E['query'] extends t.Mixed
  ? { readonly query?: t.TypeOf<E['query']> }
  : unknown;

/** A blob sent as it is, in one of the media types the route takes. */
export interface BytesBody {
  readonly bytes: Blob;
  readonly type: string;
}

type BodyArg<E extends Endpoint> = E['body'] extends BytesType
  ? { readonly body: BytesBody }
  : E['body'] extends t.Mixed
    ? { readonly body: t.TypeOf<E['body']> }
    : unknown;

export type Args<E extends Endpoint> = ParamsArg<E> & QueryArg<E> & BodyArg<E>;

export type Answer<E extends Endpoint> = E['accept'] extends string
  ? string
  : E['response'] extends BytesType
    ? Bytes
    : t.TypeOf<E['response']>;

const hasKey = <K extends string>(u: unknown, key: K): u is Readonly<Record<K, unknown>> =>
  typeof u === 'object' && u !== null && key in u;

const isStringRecord = (u: unknown): u is Readonly<Record<string, string>> =>
  typeof u === 'object' && u !== null && Object.values(u).every((v) => typeof v === 'string');

const isBytesBody = (u: unknown): u is BytesBody =>
  hasKey(u, 'bytes') && hasKey(u, 'type') && u.bytes instanceof Blob && typeof u.type === 'string';

/** The path with each `{name}` replaced by its value, encoded. */
export const pathOf = (template: string, params: Readonly<Record<string, string>>): string =>
  template.replace(/\{(\w+)\}/g, (_whole, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`${template}: no value for {${name}}`);
    return encodeURIComponent(value);
  });

/** The query as the route's codec writes it; absent fields are left out. */
const queryString = (codec: t.Mixed, query: unknown): string => {
  const encoded: unknown = codec.encode(query);
  const search = new URLSearchParams();
  if (typeof encoded === 'object' && encoded !== null)
    for (const [name, value] of Object.entries(encoded))
      if (typeof value === 'string') search.set(name, value);
  const written = search.toString();
  return written === '' ? '' : `?${written}`;
};

/**
 * The transport's call for an endpoint and its arguments. The arguments' types come from the
 * declaration (`Args`); they are read back here without it, hence the checks.
 */
export const callOf = <E extends Endpoint>(endpoint: E, args: Args<E>): Call<Answer<E>> => {
  const params = hasKey(args, 'params') && isStringRecord(args.params) ? args.params : {};
  const query =
    endpoint.query !== undefined && hasKey(args, 'query') && args.query !== undefined
      ? queryString(endpoint.query, args.query)
      : '';
  let body: Body | undefined;
  if (endpoint.body instanceof BytesType) {
    if (hasKey(args, 'body') && isBytesBody(args.body)) body = args.body;
  } else if (endpoint.body !== undefined && hasKey(args, 'body'))
    body = { json: endpoint.body.encode(args.body) };
  const read =
    endpoint.accept !== undefined
      ? text
      : endpoint.response instanceof BytesType
        ? bytes
        : json(endpoint.response);
  return {
    method: endpoint.method,
    path: `${pathOf(endpoint.path, params)}${query}`,
    ...(body === undefined ? {} : { body }),
    ...(endpoint.accept === undefined ? {} : { accept: endpoint.accept }),
    // The reader matches `Answer<E>` by the same tests as its type; TypeScript cannot follow them.
    read: read as Call<Answer<E>>['read'],
  };
};

/** An endpoint's function: its arguments may be left out when it takes none. */
export type EndpointFn<E extends Endpoint> =
  unknown extends Args<E>
    ? (args?: Args<E>) => Promise<E.Either<Failure, Answer<E>>>
    : (args: Args<E>) => Promise<E.Either<Failure, Answer<E>>>;

export type Client<Table extends Readonly<Record<string, Endpoint>>> = {
  readonly [K in keyof Table]: EndpointFn<Table[K]>;
};

/** The endpoints of `table` as functions over one transport's `send`. */
export const clientOf = <Table extends Readonly<Record<string, Endpoint>>>(
  table: Table,
  send: <A>(call: Call<A>) => Promise<E.Either<Failure, A>>,
): Client<Table> => {
  const entries = Object.entries(table).map(([name, endpoint]) => [
    name,
    (args?: Args<typeof endpoint>) => send(callOf(endpoint, args ?? {})),
  ]);
  // One function per key of `table`, each typed by its own endpoint as `Client` says.
  return Object.fromEntries(entries) as Client<Table>;
};
