/**
 * The OpenAPI 3.1 document, derived from the route registry and its codecs; nothing here is written
 * by hand beside a codec. A test checks that the router and this document list the same operations.
 */
import type * as t from 'io-ts';
import { BytesType, ObjectType } from '../../domain/codec.js';
import { type ErrorCode, ErrorEnvelope, errorCatalogue } from '../../domain/errors.js';
import { type AuthClass, rolesAllowed } from '../../rules/authorization.js';
import { shouldStore } from '../../rules/idempotency.js';
import { CORRELATION_HEADER } from '../requestContext.js';
import { MUTATING_METHODS, needsIdempotencyKey, type Route } from '../route.js';
import { type JsonSchema, SchemaRegistry } from './jsonSchema.js';

export const API_VERSION = '1.0.0';

const authDescription = (auth: AuthClass): string => {
  if (auth === 'none') return 'Public.';
  if (auth === 'bearer') return "Any authenticated user (a print agent's token is refused, 403).";
  if (auth === 'printAgent') return "A print agent's token only (auth class `printAgent`, decision 0054).";
  return `Roles: ${rolesAllowed[auth].join(', ')} (auth class \`${auth}\`).`;
};

/** Codes every route of an auth class can answer, whatever its handler does. */
export const sharedErrorCodes = (route: Route): ErrorCode[] => {
  // Query strings are always decoded (unknown parameters are refused), so every route can answer 400.
  // And any route can meet a store that is down or out of space (503, see storeErrors.ts).
  const codes: ErrorCode[] = ['VALIDATION_FAILED', 'INTERNAL_ERROR', 'STORE_UNAVAILABLE'];
  // Every authenticated route counts its caller (per principal and device): any of them may answer 429.
  // A token that outlived its session is told apart from a bad one on every authenticated route
  // (`authenticate.ts`), so a client learns there to sign in again rather than refresh.
  if (route.auth !== 'none') codes.push('UNAUTHORIZED', 'SESSION_EXPIRED', 'RATE_LIMITED');
  // Every authenticated route refuses a print agent's token (0054) but the agent's own; `bearer` ones too.
  if (route.auth !== 'none') codes.push('FORBIDDEN_ROLE');
  if (route.body !== undefined) codes.push('PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE');
  if (needsIdempotencyKey(route)) codes.push('IDEMPOTENCY_KEY_REUSED_WITH_DIFFERENT_PAYLOAD', 'CONFLICT');
  // A session's CSRF token, when sent on a mutation, must match (decision 0013), in either mode.
  if (route.auth !== 'none' && MUTATING_METHODS.has(route.method)) codes.push('CSRF_TOKEN_INVALID');
  return codes;
};

const parametersOf = (route: Route, reg: SchemaRegistry): JsonSchema[] => {
  const out: JsonSchema[] = [];
  const fromCodec = (where: 'path' | 'query', codec: Route['params']) => {
    if (codec === undefined) return;
    if (!(codec instanceof ObjectType))
      throw new Error(`${route.operationId}: ${where} codec must be an object codec`);
    const entries: Array<[string, t.Mixed, boolean]> = [
      ...Object.entries<t.Mixed>(codec.required).map(([k, c]): [string, t.Mixed, boolean] => [k, c, true]),
      ...Object.entries<t.Mixed>(codec.optional).map(([k, c]): [string, t.Mixed, boolean] => [k, c, false]),
    ];
    for (const [name, c, required] of entries) {
      out.push({ name, in: where, required: where === 'path' || required, schema: reg.ref(c) });
    }
  };
  fromCodec('path', route.params);
  fromCodec('query', route.query);
  if (route.auth !== 'none') out.push({ $ref: '#/components/parameters/DeviceId' });
  if (needsIdempotencyKey(route)) out.push({ $ref: '#/components/parameters/IdempotencyKey' });
  return out;
};

/** Routes whose answers carry `RateLimit` and `RateLimit-Policy` (decision 0013). */
const isRateLimited = (route: Route): boolean => route.auth !== 'none' || route.rateLimit !== undefined;

/**
 * On every response, so browser clients know what to expect (OWASP API8): the origin echoed when it is
 * one of CORS_ORIGINS (decision 0006), absent otherwise.
 */
const CORS_HEADER = {
  'Access-Control-Allow-Origin': { $ref: '#/components/headers/Access-Control-Allow-Origin' },
};

const RATE_LIMIT_HEADERS = {
  RateLimit: { $ref: '#/components/headers/RateLimit' },
  'RateLimit-Policy': { $ref: '#/components/headers/RateLimitPolicy' },
};

/**
 * `replayable`: an idempotent route's final errors from its handler are stored and replayed like successes.
 * `limited`: the route counts its requests and says so in every answer it counted.
 */
const errorResponses = (
  codes: ReadonlyArray<ErrorCode>,
  replayable: boolean,
  limited: boolean,
): Record<string, JsonSchema> => {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set(codes)) {
    const status = errorCatalogue[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const out: Record<string, JsonSchema> = {};
  for (const [status, list] of [...byStatus.entries()].sort((a, b) => a[0] - b[0])) {
    out[String(status)] = {
      description: `Error envelope; \`error.code\`: ${list.map((c) => `\`${c}\``).join(', ')}.`,
      headers: {
        [CORRELATION_HEADER]: { $ref: '#/components/headers/CorrelationId' },
        ...CORS_HEADER,
        ...(status === 429 ? { 'Retry-After': { $ref: '#/components/headers/RetryAfter' } } : {}),
        ...(status === 503 ? { 'Retry-After': { $ref: '#/components/headers/RetryAfterUnavailable' } } : {}),
        ...(replayable && shouldStore(status)
          ? { 'Idempotent-Replayed': { $ref: '#/components/headers/IdempotentReplayed' } }
          : {}),
        ...(limited ? RATE_LIMIT_HEADERS : {}),
      },
      content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } },
    };
  }
  return out;
};

const operationOf = (route: Route, reg: SchemaRegistry): JsonSchema => {
  const mediaType = route.response.mediaType ?? 'application/json';
  const successHeaders: Record<string, unknown> = {
    [CORRELATION_HEADER]: { $ref: '#/components/headers/CorrelationId' },
    ...CORS_HEADER,
  };
  // A route's own header fields (Location, Set-Cookie): a path or a cookie this service makes, never
  // near a header line's length.
  for (const [name, description] of Object.entries(route.response.headers ?? {})) {
    successHeaders[name] = { description, schema: { type: 'string', maxLength: 4096 } };
  }
  if (route.response.csv !== undefined) {
    const value = `attachment; filename="${route.response.csv.filename}"`;
    successHeaders['Content-Disposition'] = {
      description: `With \`text/csv\`: \`${value}\`.`,
      schema: { type: 'string', const: value },
    };
  }
  if (needsIdempotencyKey(route))
    successHeaders['Idempotent-Replayed'] = { $ref: '#/components/headers/IdempotentReplayed' };
  if (isRateLimited(route)) Object.assign(successHeaders, RATE_LIMIT_HEADERS);
  const parameters = parametersOf(route, reg);
  const body = route.body;
  return {
    operationId: route.operationId,
    summary: route.summary,
    description: [
      route.description,
      authDescription(route.auth),
      route.idempotencyExempt === undefined ? undefined : `No Idempotency-Key: ${route.idempotencyExempt}`,
      route.deadline === undefined
        ? undefined
        : `Deadline: ${route.deadline.ms / 1000} s, or REQUEST_DEADLINE_MS when that is longer: ${route.deadline.why}`,
    ]
      .filter((s) => s !== undefined)
      .join('\n\n'),
    tags: [...route.tags],
    'x-auth-class': route.auth,
    security: route.auth === 'none' ? [] : [{ bearerAuth: [] }],
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(body === undefined
      ? {}
      : {
          requestBody: {
            required: !route.bodyOptional,
            content: Object.fromEntries(
              (body instanceof BytesType ? body.mediaTypes : ['application/json']).map((type) => [
                type,
                { schema: reg.ref(body) },
              ]),
            ),
          },
        }),
    responses: {
      [String(route.response.status)]: {
        description: route.response.description,
        headers: successHeaders,
        content: {
          // Bytes of several types (a card as SVG or PNG) are listed under each.
          ...Object.fromEntries(
            (route.response.codec instanceof BytesType ? route.response.codec.mediaTypes : [mediaType]).map(
              (type) => [type, { schema: reg.ref(route.response.codec) }],
            ),
          ),
          ...(route.response.csv === undefined
            ? {}
            : { 'text/csv': { schema: { type: 'string', description: route.response.csv.description } } }),
        },
      },
      ...errorResponses(
        [...sharedErrorCodes(route), ...route.errors],
        needsIdempotencyKey(route),
        isRateLimited(route),
      ),
    },
  };
};

export const buildOpenApiDocument = (routes: ReadonlyArray<Route>): JsonSchema => {
  const reg = new SchemaRegistry();
  reg.ref(ErrorEnvelope);
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const route of routes) {
    const item = paths[route.path] ?? {};
    if (item[route.method] !== undefined) throw new Error(`duplicate route ${route.method} ${route.path}`);
    item[route.method] = operationOf(route, reg);
    paths[route.path] = item;
  }
  // Shared components are listed only when an operation refers to them (linters flag unused ones).
  const referenced = JSON.stringify(paths);
  const uses = (ref: string): boolean => referenced.includes(`"${ref}"`);
  const tags = [...new Set(routes.flatMap((r) => r.tags))]
    .sort()
    .map((name) => ({ name, description: `${name} endpoints` }));
  return {
    openapi: '3.1.0',
    info: {
      title: 'Chamada attendance service',
      version: API_VERSION,
      description:
        'Offline-first attendance and child check-in / check-out. Every non-2xx response carries the error envelope; ' +
        'every authenticated request needs `Authorization: Bearer` and `X-Device-Id`. Student fields carry ' +
        "`x-classification` (personal, sensitive, none) under Brazil's LGPD.\n\n" +
        'Every request is answered within the deadline the deployment sets (REQUEST_DEADLINE_MS, 6 s by ' +
        'default), whatever the data store does: past it the answer is 503 `STORE_UNAVAILABLE` with ' +
        '`Retry-After`, and a mutation sent again with the same Idempotency-Key takes effect once (the ' +
        'answer it went on to is replayed, or it runs then). An operation with a bound of its own says so.\n\n' +
        'Tablets replicate with PouchDB through `/api/v1/replication/roster` (pull only) and ' +
        '`/api/v1/replication/events` (push only): the part of the CouchDB replication protocol a PouchDB 9 ' +
        'replicator uses, with the same bearer token and `X-Device-Id`, listed under `x-replication` (those ' +
        "endpoints answer CouchDB's shapes, so they are not operations of this document).",
      license: { name: 'Proprietary', identifier: 'LicenseRef-Chamada-Proprietary' },
    },
    // One document for every environment (local, staging, production): the server that serves it.
    servers: [
      {
        url: '/',
        description:
          'The server that serves this document, whichever environment it is (local, staging or production)',
        'x-internal': false,
      },
    ],
    'x-replication': {
      base: '/api/v1/replication',
      roster: {
        direction: 'pull',
        calls: [
          'GET /',
          'GET /roster/',
          'GET|PUT /roster/_local/{id}',
          'GET|POST /roster/_changes (since, limit, style=all_docs, feed=normal|longpoll, filter=_doc_ids|_selector)',
          'POST /roster/_bulk_get?revs=true&latest=true',
          'GET /roster/{docId}?revs=true&open_revs=…&latest=true',
        ],
      },
      events: {
        direction: 'push',
        calls: [
          'GET /events/',
          'GET|PUT /events/_local/{id}',
          'POST /events/_revs_diff',
          'POST /events/_bulk_docs',
        ],
      },
      access:
        'ADMIN, CHAMADOR or a role with `attendance`; errors in the envelope plus CouchDB `name` and `reason`.',
      deadline:
        'Every call is answered within REQUEST_DEADLINE_MS (503 `STORE_UNAVAILABLE`, `name` `service_unavailable`, ' +
        'with `Retry-After`) but `_changes`, whose longpoll waits for a change up to its `timeout` (at most 60 s).',
    },
    tags,
    paths,
    components: {
      schemas: reg.components,
      ...(routes.some((r) => r.auth !== 'none')
        ? {
            securitySchemes: {
              bearerAuth: {
                type: 'http',
                scheme: 'bearer',
                bearerFormat: 'JWT (AUTH_MODE=jwt) or a fixed development token (AUTH_MODE=dev)',
              },
            },
          }
        : {}),
      ...(uses('#/components/parameters/DeviceId')
        ? {
            parameters: {
              DeviceId: {
                name: 'X-Device-Id',
                in: 'header',
                required: true,
                description: 'The calling device (UUID). Missing or malformed: 400 VALIDATION_FAILED.',
                schema: { type: 'string', format: 'uuid', maxLength: 36 },
              },
              ...(uses('#/components/parameters/IdempotencyKey')
                ? {
                    IdempotencyKey: {
                      name: 'Idempotency-Key',
                      in: 'header',
                      required: true,
                      description:
                        'A UUID v4 chosen by the client for this mutation (`X-Idempotency-Key` is accepted too). ' +
                        'A retry with the same key, principal and payload within 24 hours gets the original ' +
                        'response (status, headers, body, correlation id) with `Idempotent-Replayed: true` and ' +
                        'no second effect; the same key with another payload is 409 ' +
                        '`IDEMPOTENCY_KEY_REUSED_WITH_DIFFERENT_PAYLOAD`. Requests refused before the handler ' +
                        '(401, 403, 400) do not use the key up; 429 and 5xx responses are not kept.',
                      schema: { type: 'string', format: 'uuid', maxLength: 36 },
                    },
                  }
                : {}),
            },
          }
        : {}),
      headers: {
        'Access-Control-Allow-Origin': {
          description:
            "The request's `Origin`, echoed when it is one of CORS_ORIGINS (with `Vary: Origin`); absent for any " +
            'other origin and when CORS_ORIGINS is empty (the default): no browser origin may read the answer.',
          schema: { type: 'string', format: 'uri', maxLength: 2048 },
        },
        CorrelationId: {
          description: 'The request correlation id (UUID), also in `error.correlationId`.',
          schema: { type: 'string', format: 'uuid', maxLength: 36 },
        },
        ...(uses('#/components/headers/IdempotentReplayed')
          ? {
              IdempotentReplayed: {
                description:
                  '`true` when this is the stored response of an earlier request with the same key.',
                schema: { type: 'string', enum: ['true'] },
              },
            }
          : {}),
        ...(uses('#/components/headers/RetryAfter')
          ? {
              RetryAfter: {
                description:
                  'Seconds to wait before retrying (at most two windows of the longest policy, 2 hours).',
                schema: { type: 'integer', format: 'int32', minimum: 1, maximum: 7200 },
              },
            }
          : {}),
        ...(uses('#/components/headers/RetryAfterUnavailable')
          ? {
              RetryAfterUnavailable: {
                description:
                  'With `STORE_UNAVAILABLE`: seconds to wait before sending the request again (a mutation with ' +
                  'the same Idempotency-Key, so that it takes effect once).',
                schema: { type: 'integer', format: 'int32', minimum: 1, maximum: 3600 },
              },
            }
          : {}),
        ...(uses('#/components/headers/RateLimit')
          ? {
              RateLimit: {
                description:
                  'IETF RateLimit header field: `"<policy>";r=<requests remaining>;t=<seconds>`: on `device`, until ' +
                  'the counting window ends (on a 429, `Retry-After`); on `login` and `refresh`, until one more is ' +
                  'allowed. Absent when the request could not be counted (the counters failed open).',
                schema: { type: 'string', pattern: '^"[a-z][a-z0-9-]*";r=\\d+;t=\\d+$', maxLength: 100 },
              },
              RateLimitPolicy: {
                description:
                  'IETF RateLimit-Policy header field: `"<policy>";q=<quota>;w=<window in seconds>`. `device`: every ' +
                  'authenticated route, per principal and device (RATE_LIMIT_REQUESTS, RATE_LIMIT_WINDOW_SECONDS); ' +
                  '`login`, `refresh`: per client IP.',
                schema: { type: 'string', pattern: '^"[a-z][a-z0-9-]*";q=\\d+;w=\\d+$', maxLength: 100 },
              },
            }
          : {}),
      },
    },
  };
};

const cache = new WeakMap<ReadonlyArray<Route>, JsonSchema>();

export const openApiDocumentFor = (routes: ReadonlyArray<Route>): JsonSchema => {
  const cached = cache.get(routes);
  if (cached !== undefined) return cached;
  const doc = buildOpenApiDocument(routes);
  cache.set(routes, doc);
  return doc;
};
