/**
 * Codec building blocks. Every request, response and stored shape is an io-ts codec built from these,
 * so that validation and the OpenAPI document read the same definition. `SchemaMeta` carries what the
 * JSON Schema needs that io-ts cannot express (formats, bounds, the LGPD classification).
 */
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';

export type Classification = 'personal' | 'sensitive' | 'none';

export interface SchemaMeta {
  readonly title?: string;
  readonly description?: string;
  readonly format?: string;
  readonly pattern?: string;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly minItems?: number;
  readonly maxItems?: number;
  readonly integer?: boolean;
  readonly examples?: ReadonlyArray<unknown>;
  readonly classification?: Classification;
  readonly readOnly?: boolean;
  /** Still accepted, kept for older clients; new clients should not send it. */
  readonly deprecated?: boolean;
}

// Kept outside the codecs so that io-ts' own types stay untouched; only codecs created by the helpers
// below are annotated, never shared primitives such as `t.string`.
const metas = new WeakMap<t.Mixed, SchemaMeta>();

export const annotate = <C extends t.Mixed>(codec: C, meta: SchemaMeta): C => {
  metas.set(codec, { ...metas.get(codec), ...meta });
  return codec;
};

export const metaOf = (codec: t.Mixed): SchemaMeta | undefined => metas.get(codec);

/** A new codec over `base` that also requires `predicate`; the failure message names the rule. */
export const refine = <C extends t.Mixed>(
  base: C,
  predicate: (a: t.TypeOf<C>) => boolean,
  name: string,
  meta: SchemaMeta = {},
): t.RefinementC<C> =>
  annotate(
    new t.RefinementType<C, t.TypeOf<C>, t.OutputOf<C>, t.InputOf<C>>(
      name,
      (u): u is t.TypeOf<C> => base.is(u) && predicate(u),
      (u, c) => {
        const decoded = base.validate(u, c);
        if (E.isLeft(decoded)) return decoded;
        return predicate(decoded.right) ? decoded : t.failure(u, c, `expected ${name}`);
      },
      base.encode,
      base,
      predicate,
    ),
    meta,
  );

export const boundedString = (minLength: number, maxLength: number, meta: SchemaMeta = {}) =>
  refine(
    t.string,
    (s) => s.length >= minLength && s.length <= maxLength,
    `a string of ${minLength} to ${maxLength} characters`,
    {
      minLength,
      maxLength,
      ...meta,
    },
  );

/**
 * Identifiers and short names the service returns or stores (ids, aspects, roles, event types, user
 * ids from a token): far longer than any it makes, short enough that no field can carry a document.
 */
export const ShortText = boundedString(0, 1_000);

/** An id in a path or query: looked up, never stored; a longer one is a 400, not a search. */
export const PathId = boundedString(1, 200);

/** Free text the service returns or stores; the longest any request may send (a consent term) is 20,000. */
export const Text = boundedString(0, 20_000);

/** An array of at most `maxItems`, checked on decode and stated in the document (OWASP API4). */
export const boundedArray = <C extends t.Mixed>(item: C, maxItems: number, meta: SchemaMeta = {}) =>
  refine(t.array(item), (a) => a.length <= maxItems, `at most ${maxItems} items`, { maxItems, ...meta });

/** A whole number from `minimum` to `maximum`. */
export const boundedInt = (minimum: number, maximum: number, meta: SchemaMeta = {}) =>
  refine(
    t.number,
    (n) => Number.isInteger(n) && n >= minimum && n <= maximum,
    `an integer from ${minimum} to ${maximum}`,
    { integer: true, minimum, maximum, ...meta },
  );

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;
const UUID_V4_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

export const isUuid = (s: string): boolean => UUID_RE.test(s);
export const isUuidV4 = (s: string): boolean => UUID_V4_RE.test(s);

// The patterns fix the length; maxLength says so to clients and linters (OWASP API4).
export const Uuid = refine(t.string, isUuid, 'a UUID', { format: 'uuid', maxLength: 36 });

const ISO_INSTANT_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/;

/** A UTC instant in ISO 8601 with the `Z` suffix, as the contract requires for every timestamp. */
export const IsoInstant = refine(
  t.string,
  (s) => ISO_INSTANT_RE.test(s) && !Number.isNaN(Date.parse(s)),
  'a UTC ISO 8601 timestamp ending in Z',
  { format: 'date-time', maxLength: 30 },
);

const isCalendarDate = (s: string): boolean => {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(s)) return false;
  // Date rolls 2026-02-30 over to March; only a date that survives the round trip exists.
  const d = new Date(`${s}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === s;
};

/** A calendar day YYYY-MM-DD that exists (no 2026-02-30). Each use gets its own annotated codec. */
export const calendarDate = (meta: SchemaMeta = {}) =>
  refine(t.string, isCalendarDate, 'a calendar date YYYY-MM-DD', { format: 'date', maxLength: 10, ...meta });

/**
 * A page size in a query string: digits only (query parameters arrive as strings, and the OpenAPI
 * generator maps refinements but not transforming codecs), from 1 to `max`. Callers convert it.
 */
export const pageLimit = (max: number, defaultSize: number) =>
  refine(
    t.string,
    (s) => /^\d{1,4}$/.test(s) && Number(s) >= 1 && Number(s) <= max,
    `an integer from 1 to ${max}`,
    { integer: true, minimum: 1, maximum: max, description: `Page size, default ${defaultSize}.` },
  );

export type Props = Record<string, t.Mixed>;

type RequiredOf<R extends Props> = { [K in keyof R]: t.TypeOf<R[K]> };
type OptionalOf<O extends Props> = { [K in keyof O]?: t.TypeOf<O[K]> };
type RequiredOut<R extends Props> = { [K in keyof R]: t.OutputOf<R[K]> };
type OptionalOut<O extends Props> = { [K in keyof O]?: t.OutputOf<O[K]> };

export const isPlainObject = (u: unknown): u is Record<string, unknown> =>
  typeof u === 'object' && u !== null && !Array.isArray(u);

const hasOwn = (o: object, k: string): boolean => Object.hasOwn(o, k);

/**
 * A closed JSON object: unknown keys are a validation failure on decode (so a typo or a write to a
 * read-only field is reported, never silently dropped) and are stripped on encode (so a response can
 * never leak a field its codec does not name).
 */
export class ObjectType<R extends Props, O extends Props> extends t.Type<
  RequiredOf<R> & OptionalOf<O>,
  RequiredOut<R> & OptionalOut<O>,
  unknown
> {
  readonly _tag = 'ChamadaObjectType' as const;
  constructor(
    name: string,
    readonly required: R,
    readonly optional: O,
  ) {
    type A = RequiredOf<R> & OptionalOf<O>;
    type Out = RequiredOut<R> & OptionalOut<O>;
    const known = new Set([...Object.keys(required), ...Object.keys(optional)]);
    const is = (u: unknown): u is A =>
      isPlainObject(u) &&
      Object.keys(u).every((k) => known.has(k)) &&
      Object.entries(required).every(([k, c]) => hasOwn(u, k) && c.is(u[k])) &&
      Object.entries(optional).every(([k, c]) => u[k] === undefined || c.is(u[k]));
    super(
      name,
      is,
      (u, c) => {
        if (!isPlainObject(u)) return t.failure(u, c, 'expected an object');
        const errors: t.Errors = [];
        const out: Record<string, unknown> = {};
        for (const k of Object.keys(u)) {
          if (!known.has(k)) {
            errors.push({
              value: u[k],
              context: [...c, { key: k, type: t.never, actual: u[k] }],
              message: 'unknown field',
            });
          }
        }
        const decodeProp = (k: string, codec: t.Mixed, present: boolean) => {
          if (!present) return;
          const r = codec.validate(u[k], [...c, { key: k, type: codec, actual: u[k] }]);
          if (E.isLeft(r)) errors.push(...r.left);
          else out[k] = r.right;
        };
        for (const [k, codec] of Object.entries(required)) {
          if (!hasOwn(u, k)) {
            errors.push({
              value: undefined,
              context: [...c, { key: k, type: codec, actual: undefined }],
              message: 'required',
            });
          } else decodeProp(k, codec, true);
        }
        for (const [k, codec] of Object.entries(optional))
          decodeProp(k, codec, hasOwn(u, k) && u[k] !== undefined);
        if (errors.length > 0) return t.failures(errors);
        // Every key of `out` was decoded by the codec of the same name, which is what `A` states.
        return t.success(out as A);
      },
      (a) => {
        const out: Record<string, unknown> = {};
        const source: Record<string, unknown> = a;
        for (const [k, codec] of Object.entries(required)) out[k] = codec.encode(source[k]);
        for (const [k, codec] of Object.entries(optional)) {
          if (source[k] !== undefined) out[k] = codec.encode(source[k]);
        }
        // Same reasoning as decode: each key was produced by its own codec's encoder.
        return out as Out;
      },
    );
  }
}

export const object = <R extends Props, O extends Props = Record<never, never>>(
  name: string,
  required: R,
  optional?: O,
  meta: SchemaMeta = {},
): ObjectType<R, O> =>
  annotate(new ObjectType(name, required, optional ?? ({} as O)), { title: name, ...meta });

/** Like `object` but not registered as a named component in the OpenAPI document. */
export const anonymousObject = <R extends Props, O extends Props = Record<never, never>>(
  required: R,
  optional?: O,
): ObjectType<R, O> => new ObjectType('object', required, optional ?? ({} as O));

export const nullable = <C extends t.Mixed>(codec: C) => t.union([codec, t.null]);

/**
 * A request body kept as its bytes (an uploaded file), for routes that take something other than
 * JSON: the route decodes the bytes itself, since only it knows their encoding. `mediaType` is what
 * the OpenAPI document lists for the request body.
 */
export class BytesType extends t.Type<Uint8Array, Uint8Array, unknown> {
  readonly _tag = 'ChamadaBytesType' as const;
  constructor(
    readonly mediaType: string,
    readonly description: string,
    /** The largest body the route reads (413 beyond), as the document states it. */
    readonly maxBytes: number,
    /** Further media types read as the same bytes (a photo comes as JPEG, PNG or WebP). */
    readonly alsoAccepted: ReadonlyArray<string> = [],
  ) {
    super(
      'Bytes',
      (u): u is Uint8Array => u instanceof Uint8Array,
      (u, c) =>
        u instanceof Uint8Array
          ? t.success(u)
          : t.failure(u, c, `expected a ${[mediaType, ...alsoAccepted].join(' or ')} body`),
      (a) => a,
    );
  }

  /** Every media type the body may come as, the main one first. */
  get mediaTypes(): ReadonlyArray<string> {
    return [this.mediaType, ...this.alsoAccepted];
  }
}

/** The chunks of a response too large to hold in memory, sent as they come. */
export type ByteStream = AsyncIterable<Uint8Array | string>;

export const isByteStream = (u: unknown): u is ByteStream =>
  typeof u === 'object' && u !== null && Symbol.asyncIterator in u;

/**
 * A response body that is a stream: never decoded from a request, only passed through to the
 * response. `description` is what the OpenAPI document says of it.
 */
export class StreamType extends t.Type<ByteStream, ByteStream, unknown> {
  readonly _tag = 'ChamadaStreamType' as const;
  constructor(
    readonly mediaType: string,
    readonly description: string,
  ) {
    super(
      'Stream',
      isByteStream,
      (u, c) => (isByteStream(u) ? t.success(u) : t.failure(u, c, `expected a ${mediaType} stream`)),
      (a) => a,
    );
  }
}
