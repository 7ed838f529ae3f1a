/**
 * Reliability row "fuzz": every route of the registry, driven by the registry (method, path, auth
 * class, codecs), gets at least 1,000 hostile inputs: wrong types, missing and extra fields, 1 MiB
 * strings, deep nesting, prototype keys, invalid UTF-8, bad JSON, bad headers, bad paths and queries.
 * The service runs as its real process (`src/main.ts`, two copies sharing the routes), so a crash
 * ends it visibly instead of taking the test runner down. Criterion: no answer ≥ 500, every error in the envelope, no transport error,
 * and the process still answers /api/v1/health afterwards.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import fc from 'fast-check';
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import { routes } from '../../src/http/registry.js';
import { MUTATING_METHODS, type Route } from '../../src/http/route.js';
import { figure } from '../reliability/figures.js';
import {
  type ChildService,
  CLASS_ROLES,
  DEV_TOKEN_OF,
  envelopeProblem,
  exampleOf,
  fieldsOf,
  fillPath,
  fillPathRaw,
  pathParamsOf,
  type Role,
  routeName,
  runPool,
  SYSTEM_ROLES,
  send,
  spawnService,
  type Target,
  targetOf,
  thousands,
  type WireBody,
  type WireRequest,
  type WireResponse,
} from '../reliability/securitySupport.js';
import { call, decodeAs } from '../support/http.js';
import { seedSmallRoster } from '../support/seed.js';
import { DEV_TOKENS, DEVICE_ID, mutationHeaders } from '../support/testService.js';

const INPUTS_PER_ROUTE = 1_000;
const CONCURRENCY = 16;
const SHARDS = 2;
const SEED = 20_261_126;
const MIB = 1024 * 1024;
// Node's default limit for the request line plus headers is 16 KiB; one huge header stays under it.
const HUGE_HEADER = 12_000;
// PBKDF2 costs ~200 ms by design (decision 0013): inputs that would reach it are capped per route.
const PASSWORD_ROUTE_VALID_CAP = 6;
const EXHAUSTED_IP = '203.0.113.9';

type Segment = string | number;
type ValuePath = ReadonlyArray<Segment>;

const isRecord = (u: unknown): u is Record<string, unknown> =>
  typeof u === 'object' && u !== null && !Array.isArray(u);

/** Every node below the root of a JSON value, as paths (bounded depth: examples are shallow). */
const pathsOf = (v: unknown, prefix: ValuePath = [], depth = 0): ValuePath[] => {
  if (depth > 6) return [];
  const entries: Array<[Segment, unknown]> = Array.isArray(v)
    ? v.map((x, i): [Segment, unknown] => [i, x])
    : isRecord(v)
      ? Object.entries(v)
      : [];
  return entries.flatMap(([k, x]) => [[...prefix, k], ...pathsOf(x, [...prefix, k], depth + 1)]);
};

const REMOVE = Symbol('remove');

/** A copy of `v` with the node at `path` replaced (or removed). */
const setAt = (v: unknown, path: ValuePath, replacement: unknown): unknown => {
  const [head, ...rest] = path;
  if (head === undefined) return replacement;
  if (Array.isArray(v) && typeof head === 'number') {
    const copy = [...v];
    if (rest.length === 0 && replacement === REMOVE) copy.splice(head, 1);
    else copy[head] = setAt(v[head], rest, replacement);
    return copy;
  }
  if (isRecord(v) && typeof head === 'string') {
    const copy = { ...v };
    if (rest.length === 0 && replacement === REMOVE) delete copy[head];
    else copy[head] = setAt(v[head], rest, replacement);
    return copy;
  }
  return v;
};

const MARK = '@@fuzz-raw-value@@';

/** JSON text of `example` with the node at `path` replaced by raw JSON text (which JSON.stringify could not write). */
const withRaw = (example: unknown, path: ValuePath, raw: string): string =>
  JSON.stringify(setAt(example, path, MARK)).replace(`"${MARK}"`, () => raw);

const deepArray = (depth: number): string => `${'['.repeat(depth)}${']'.repeat(depth)}`;
const deepObject = (depth: number): string => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

/** Raw JSON values put where each field of a valid body goes. */
const WRONG_VALUES: ReadonlyArray<string> = [
  'null',
  'true',
  'false',
  '0',
  '-1',
  '1.5',
  '-0',
  '1e308',
  '123456789012345678901234567890',
  '9007199254740993',
  '""',
  '" "',
  '"x"',
  '"\\u0000"',
  '"\\ud800"',
  '"\\udfff\\ud800"',
  '"💥👨‍👩‍👧"',
  '"<script>alert(1)</script>"',
  '"../../../etc/passwd"',
  // Template-injection probes, built so the source holds no template placeholder.
  `"${'$'}{7*7}{{7*7}}"`,
  '"\'; DROP TABLE students; --"',
  '"9999-12-31T23:59:59.999999999Z"',
  '"0000-01-01T00:00:00Z"',
  '"2026-02-29"',
  '"9999-12-31"',
  '"ffffffff-ffff-4fff-bfff-ffffffffffff"',
  '[]',
  '[null]',
  '[[]]',
  '{}',
  '{"$gt":null}',
  '{"$ne":""}',
  '{"$regex":".*"}',
  '{"$where":"sleep(1000)"}',
  '{"__proto__":{"polluted":true}}',
  '{"constructor":{"prototype":{"polluted":true}}}',
  deepArray(200),
  `"${'0'.repeat(10_000)}"`,
];

/** Keys added next to a valid body's fields. */
const EXTRA_KEYS: ReadonlyArray<[string, string]> = [
  ['__proto__', '{"isAdmin":true,"roles":["ADMIN"]}'],
  ['constructor', '{"prototype":{"isAdmin":true}}'],
  ['prototype', '{"isAdmin":true}'],
  ['_id', '"student:forged"'],
  ['_rev', '"1-forged"'],
  ['_deleted', 'true'],
  ['docType', '"user"'],
  ['$where', '"true"'],
  ['hasOwnProperty', '"x"'],
  ['toString', '1'],
  ['valueOf', '{}'],
  ['__defineGetter__', '"x"'],
  ['roles', '["ADMIN"]'],
  ['unknownField', '"x"'],
];

const BAD_JSON: ReadonlyArray<string> = [
  '{',
  '}',
  '{"a":}',
  "{'a':1}",
  '{"a":1,}',
  '[1,2',
  'undefined',
  'NaN',
  '{"a":NaN}',
  '{"a":Infinity}',
  '{"a":1e999}',
  '{"a":01}',
  '{"a":.5}',
  '{"a":"\u0001"}',
  '{"a":1}{"b":2}',
  '{"a":1} trailing',
  ' ',
  '"',
  'tru',
  '/* comment */ {}',
  '\ufeff{}',
  '{"a":"\\x41"}',
  '{"a":"\\u12"}',
  '\u0000',
];

/** Bytes that are not UTF-8, inside a JSON string and as a whole body. */
const INVALID_UTF8: ReadonlyArray<Uint8Array> = [
  new Uint8Array([0xc3, 0x28]),
  new Uint8Array([0xff, 0xfe, 0xfd]),
  new Uint8Array([0x80]),
  new Uint8Array([0xc0, 0xaf]),
  new Uint8Array([0xed, 0xa0, 0x80]),
  new Uint8Array([0xe2, 0x82]),
  new Uint8Array([0xf8, 0x88, 0x80, 0x80, 0x80]),
];

/** Content-Type and Content-Encoding variants sent with an otherwise valid body. */
const CONTENT_HEADERS: ReadonlyArray<Readonly<Record<string, string | undefined>>> = [
  { 'Content-Type': undefined },
  { 'Content-Type': 'text/plain' },
  { 'Content-Type': 'application/x-www-form-urlencoded' },
  { 'Content-Type': 'multipart/form-data; boundary=x' },
  { 'Content-Type': 'application/json; charset=latin1' },
  { 'Content-Type': 'application/json; charset=utf-16' },
  { 'Content-Type': 'application/json; charset=utf-8' },
  { 'Content-Type': 'application/json; charset="bogus"' },
  { 'Content-Type': 'application/json; charset=' },
  { 'Content-Type': 'application/json;;;' },
  { 'Content-Type': 'application/merge-patch+json' },
  { 'Content-Type': 'application/xml' },
  { 'Content-Type': '*/*' },
  { 'Content-Type': `application/json; x=${'y'.repeat(HUGE_HEADER)}` },
  { 'Content-Encoding': 'gzip' },
  { 'Content-Encoding': 'deflate' },
  { 'Content-Encoding': 'br' },
  { 'Content-Encoding': 'identity' },
  { 'Content-Encoding': 'x-unknown' },
  { 'Content-Encoding': 'gzip, gzip' },
];

/** Raw (already percent-encoded or deliberately broken) path parameter values. */
const PATH_VALUES: ReadonlyArray<string> = [
  '%20',
  '%00',
  '%ff',
  '%zz',
  '%',
  '%E0%A4%A',
  '..',
  '%2e%2e',
  '%2F',
  '..%2F..%2Fusers',
  'a'.repeat(8_000),
  '.*',
  '%24gt',
  '%7B%22%24gt%22%3Anull%7D',
  '__proto__',
  'constructor',
  'prototype',
  '_all_docs',
  '_design%2Fidx',
  '_local%2Fx',
  '%F0%9F%92%A5',
  'null',
  'undefined',
  'student%3Ax',
  '-1',
  '00000000-0000-0000-0000-000000000000',
];

/** Raw query strings (after the `?`) for every route, whatever its query codec. */
const QUERY_STRINGS: ReadonlyArray<string> = [
  'unknown=1',
  '__proto__=1',
  '__proto__[isAdmin]=1',
  'constructor[prototype][isAdmin]=1',
  'a=%zz',
  'a=%ff%fe',
  '%ff=1',
  'a=1&a=2',
  '&&&&',
  '=',
  '==x',
  `a=${'b'.repeat(HUGE_HEADER)}`,
  'q[$regex]=.*',
  'limit[$gt]=0',
];

/** Raw values for each query parameter a route's codec names. */
const QUERY_VALUES: ReadonlyArray<string> = [
  '',
  '%00',
  '%ff',
  '%zz',
  '-1',
  '0',
  '99999',
  '1e3',
  '1.5',
  'NaN',
  'true',
  '[]',
  '%7B%7D',
  '%7B%22%24gt%22%3Anull%7D',
  '.*',
  '%5E',
  '(',
  '%5C',
  '%5B',
  'a'.repeat(5_000),
  '0000-01-01',
  '9999-12-31',
  '2026-02-30',
  '0000-01-01T00:00:00Z',
  '9999-12-31T23:59:59.999Z',
  '00000000-0000-0000-0000-000000000000',
  'POST%20%2F',
  'eyJrIjoiIiwicyI6IkRFTEVURUQiLCJxIjoiIn0',
];

/** A request as the fuzzer thinks of it; headers set to undefined are left out. */
interface Draft {
  readonly role: Role | null;
  readonly path: string;
  readonly query: string;
  readonly body: WireBody | undefined;
  readonly headers: Readonly<Record<string, string | undefined>>;
  readonly method?: string;
}

interface FuzzCase {
  readonly kind: string;
  readonly draft: () => Draft;
}

/** Roles whose valid token passes the route's auth class (none for public routes). */
const rolesFor = (route: Route): ReadonlyArray<Role> =>
  route.auth === 'none' ? [] : route.auth === 'bearer' ? SYSTEM_ROLES : (CLASS_ROLES[route.auth] ?? []);

/** Draws one of `items` from a fast-check natural number. */
const pick = <T>(items: ReadonlyArray<T>, n: number): T | undefined =>
  items.length === 0 ? undefined : items[n % items.length];

const latin1Char = fc.integer({ min: 0x21, max: 0xff }).filter((c) => c !== 0x7f);
const headerString = fc
  .array(latin1Char, { minLength: 1, maxLength: 200 })
  .map((codes) => String.fromCharCode(...codes));

const randomSpec = fc.oneof(
  fc.record({
    kind: fc.constant('random field value' as const),
    at: fc.nat(),
    value: fc.jsonValue({ maxDepth: 3 }),
  }),
  fc.record({
    kind: fc.constant('random field string' as const),
    at: fc.nat(),
    value: fc.string({ unit: 'binary', maxLength: 120 }),
  }),
  fc.record({ kind: fc.constant('random body' as const), value: fc.jsonValue({ maxDepth: 4 }) }),
  fc.record({ kind: fc.constant('random bytes body' as const), bytes: fc.uint8Array({ maxLength: 300 }) }),
  fc.record({
    kind: fc.constant('random query' as const),
    at: fc.nat(),
    key: fc.string({ unit: 'binary', maxLength: 20 }),
    value: fc.string({ unit: 'binary', maxLength: 200 }),
  }),
  fc.record({
    kind: fc.constant('random path value' as const),
    at: fc.nat(),
    value: fc.string({ unit: 'binary', minLength: 1, maxLength: 120 }),
  }),
  fc.record({ kind: fc.constant('random header' as const), at: fc.nat(), value: headerString }),
  fc.record({ kind: fc.constant('random anonymous body' as const), value: fc.jsonValue({ maxDepth: 2 }) }),
);
type SpecOf<A> = A extends fc.Arbitrary<infer T> ? T : never;

const RANDOM_HEADERS = [
  'X-Device-Id',
  'Idempotency-Key',
  'Authorization',
  'Content-Type',
  'Accept',
  'X-CSRF-Token',
];

interface RouteOutcome {
  readonly route: Route;
  readonly inputs: number;
  readonly statuses: Map<number, number>;
  readonly failures: string[];
  serverErrors: number;
  nonEnvelope: number;
  transport: number;
}

/** One copy of the service and the ids of what was created in it. */
interface Shard {
  readonly svc: ChildService;
  readonly target: Target;
  readonly ids: Readonly<Record<string, string>>;
}

/** Creates one of every resource a path names, so part of the inputs reach the handlers. */
const createResources = async (url: string): Promise<Record<string, string>> => {
  const ids: Record<string, string> = {};
  const roster = await seedSmallRoster(url, ['Ana Souza', 'Bruno Lima']);
  ids.classId = roster.classId;
  ids.sessionId = roster.sessionId;
  const studentId = roster.studentIds[0] ?? randomUUID();
  ids.studentId = studentId;
  const post = async (path: string, body: unknown, key: string): Promise<string> => {
    const r = await call(`${url}${path}`, {
      method: 'POST',
      headers: mutationHeaders(DEV_TOKENS.DEV_ADMIN_TOKEN),
      body: JSON.stringify(body),
    });
    expect(r.status, `${path}: ${r.text}`).to.equal(201);
    return decodeAs(t.type({ [key]: t.string }), r.json)[key] ?? '';
  };
  ids.nucleusId = await post('/api/v1/nuclei', { name: 'Núcleo' }, 'nucleusId');
  ids.userId = await post(
    '/api/v1/users',
    { email: 'fuzz@chamada.test', displayName: 'Fuzz', roles: ['CHAMADOR'], password: 'fuzz password 123' },
    'userId',
  );
  ids.name = await post(
    '/api/v1/roles',
    { name: 'FUZZ_ROLE', display_name: 'Fuzz', permissions: ['attendance'] },
    'name',
  );
  ids.consentId = await post(
    '/api/v1/image-consents',
    {
      subject_type: 'STUDENT',
      subject_id: studentId,
      term_version: 'v1',
      purpose: 'fotos',
      term_text: 'Autorizo.',
      granted_by_name: 'Guardião',
      relationship: 'mãe',
      verification_method: 'VERIFIED_GUARDIAN_PRESENT',
    },
    'consentId',
  );
  ids.pickupId = await post(
    `/api/v1/students/${studentId}/pickup-list`,
    { name: 'Tia Marta', relationship: 'tia', phone: '+55 11 5555-0199' },
    'pickupId',
  );
  return ids;
};

describe('reliability: fuzz every registered route', function () {
  // The budget is ~60 s on two cores; the timeout leaves room for a busy machine.
  this.timeout(300_000);
  const shards: Shard[] = [];
  let ipCounter = 0;

  before(async () => {
    // Two copies of the service, half the routes each: one process is the bottleneck, and a
    // second lets the fuzz use both cores while the client takes what is left.
    const started = await Promise.all(
      Array.from({ length: SHARDS }, (_, i) =>
        spawnService(`fuzz${i}`, {
          AUTH_MODE: 'dev',
          ...DEV_TOKENS,
          // Rate-limited routes are counted per client IP; a trusted loopback proxy lets the fuzzer
          // give most inputs their own address, so login and refresh see more than 429s.
          TRUST_PROXY: 'loopback',
          // Tens of thousands of requests a minute through one principal and device: the per-device
          // limit would answer nearly all of them 429 instead of the handlers under test.
          RATE_LIMIT_REQUESTS: '0',
        }),
      ),
    );
    for (const svc of started) {
      shards.push({
        svc,
        target: targetOf(svc.url, CONCURRENCY / SHARDS),
        ids: await createResources(svc.url),
      });
    }
  });

  after(async () => {
    for (const shard of shards) {
      shard.target.agent.destroy();
      await shard.svc.stop();
    }
  });

  /** Every fuzz input of one route, fixed cases first, then seeded random ones up to the quota. */
  const casesFor = (route: Route, routeIndex: number, ids: Readonly<Record<string, string>>): FuzzCase[] => {
    const roles = rolesFor(route);
    const params = pathParamsOf(route.path);
    const example = route.body === undefined ? undefined : (exampleOf(route.body) ?? {});
    const validBody = example === undefined ? undefined : JSON.stringify(example);
    const queryFields = fieldsOf(route.query);
    const queryExample = route.query === undefined ? undefined : exampleOf(route.query);
    // Only the required query parameters: an optional one (a cursor, say) would fail every input.
    const requiredQuery = (queryFields?.required ?? [])
      .map((k) => {
        const v = isRecord(queryExample) ? queryExample[k] : undefined;
        return typeof v === 'string' ? `${encodeURIComponent(k)}=${encodeURIComponent(v)}` : '';
      })
      .filter((s) => s !== '')
      .join('&');
    const realPath = fillPath(route.path, (p) => ids[p] ?? randomUUID());
    // Existing ids in one input of four reach the handlers; unknown ones exercise the 404 paths.
    const somePath = (n: number) => (n % 4 === 0 ? realPath : fillPath(route.path, () => randomUUID()));
    const bodyPaths = example === undefined ? [] : pathsOf(example);
    const queryKeys = [...(queryFields?.required ?? []), ...(queryFields?.optional ?? [])];
    const usesPassword =
      route.body !== undefined && [...(fieldsOf(route.body)?.required ?? [])].includes('password');

    let caseNo = 0;
    const base = (over: Partial<Draft> = {}): Draft => {
      caseNo += 1;
      // Mostly the class's least privileged role, sometimes another allowed one; public routes get none.
      const role = roles.length === 0 ? null : (roles[caseNo % roles.length] ?? null);
      return {
        role,
        path: somePath(caseNo),
        query: requiredQuery,
        body: validBody,
        headers: {},
        ...over,
      };
    };
    const at = (kind: string, make: () => Draft): FuzzCase => ({ kind, draft: make });
    const cases: FuzzCase[] = [];

    if (validBody !== undefined) cases.push(at('valid example', () => base()));
    const bodies: Array<[string, WireBody | undefined]> = [
      ['no body', undefined],
      ['empty object', '{}'],
      ['null body', 'null'],
      ['array body', '[]'],
      ['string body', '"x"'],
      ['number body', '0'],
      ['true body', 'true'],
      ['wrapped example', `[${validBody ?? '{}'}]`],
      ['deep array body', deepArray(10_000)],
      ['deep object body', deepObject(10_000)],
      ['1 MiB string body (over the limit)', JSON.stringify({ a: 'a'.repeat(MIB) })],
      [
        '10,000 keys',
        JSON.stringify(Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`k${i}`, i]))),
      ],
      ['20,000 numbers', JSON.stringify(Array.from({ length: 20_000 }, (_, i) => i))],
    ];
    for (const [kind, body] of bodies) cases.push(at(kind, () => base({ body })));
    for (const text of BAD_JSON) cases.push(at('bad JSON', () => base({ body: text })));
    for (const bytes of INVALID_UTF8) {
      cases.push(at('invalid UTF-8 body', () => base({ body: bytes })));
      const utf8 = new TextEncoder();
      const inString = new Uint8Array([...utf8.encode('{"a":"'), ...bytes, ...utf8.encode('"}')]);
      cases.push(at('invalid UTF-8 in a string', () => base({ body: inString })));
    }
    for (const headers of CONTENT_HEADERS) cases.push(at('content headers', () => base({ headers })));

    for (const path of bodyPaths) {
      if (path.length === 1 || typeof path[path.length - 1] === 'string') {
        cases.push(at('missing field', () => base({ body: JSON.stringify(setAt(example, path, REMOVE)) })));
      }
      for (const raw of WRONG_VALUES)
        cases.push(at('wrong value', () => base({ body: withRaw(example, path, raw) })));
    }
    const [firstPath] = bodyPaths;
    if (firstPath !== undefined) {
      cases.push(
        at('1 MiB string field (over the limit)', () =>
          base({ body: withRaw(example, firstPath, `"${'a'.repeat(MIB)}"`) }),
        ),
      );
      cases.push(
        at('string field just under 1 MiB', () =>
          base({ body: withRaw(example, firstPath, `"${'é'.repeat(Math.floor((MIB - 4096) / 2))}"`) }),
        ),
      );
    }
    for (const path of bodyPaths.slice(0, 4)) {
      cases.push(
        at('deep nesting in a field', () => base({ body: withRaw(example, path, deepArray(5_000)) })),
      );
    }
    if (isRecord(example)) {
      for (const [key, raw] of EXTRA_KEYS) {
        const rest = JSON.stringify(example).slice(1);
        const text = `{${JSON.stringify(key)}:${raw}${rest === '}' ? '' : ','}${rest}`;
        cases.push(at('extra key', () => base({ body: text })));
      }
      const [first] = Object.keys(example);
      if (first !== undefined) {
        const dup = JSON.stringify(example).replace(/\}$/, () => `,${JSON.stringify(first)}:{"$gt":null}}`);
        cases.push(at('duplicate key', () => base({ body: dup })));
      }
    }

    const token = (r: Role | null) => (r === null ? 'none' : DEV_TOKEN_OF[r]);
    const headerCases: Array<(r: Role | null) => Readonly<Record<string, string | undefined>>> = [
      () => ({ Authorization: undefined }),
      () => ({ Authorization: 'Bearer' }),
      () => ({ Authorization: 'Bearer ' }),
      (r) => ({ Authorization: `bearer ${token(r)}` }),
      (r) => ({ Authorization: `Bearer  ${token(r)}` }),
      () => ({ Authorization: 'Basic YWRtaW46YWRtaW4=' }),
      (r) => ({ Authorization: `Bearer ${token(r)}x` }),
      () => ({ Authorization: `Bearer ${'A'.repeat(9_000)}` }),
      () => ({ Authorization: `Bearer ${'A'.repeat(HUGE_HEADER)}` }),
      (r) => ({ Authorization: `Bearer ${token(r)}, Bearer ${token(r)}` }),
      () => ({ Authorization: 'Bearer \u00e9\u00ff\u00c3' }),
      () => ({ Authorization: 'Bearer eyJhbGciOiJub25lIn0.eyJ1c2VySWQiOiJkZXYtYWRtaW4ifQ.' }),
      () => ({ 'X-Device-Id': undefined }),
      () => ({ 'X-Device-Id': '' }),
      () => ({ 'X-Device-Id': 'not-a-uuid' }),
      () => ({ 'X-Device-Id': DEVICE_ID.toUpperCase() }),
      () => ({ 'X-Device-Id': `{${DEVICE_ID}}` }),
      () => ({ 'X-Device-Id': 'f'.repeat(HUGE_HEADER) }),
      () => ({ 'X-Device-Id': '\u00e9'.repeat(36) }),
      () => ({ 'X-Device-Id': '00000000-0000-0000-0000-000000000000' }),
      () => ({ 'Idempotency-Key': undefined }),
      () => ({ 'Idempotency-Key': '' }),
      () => ({ 'Idempotency-Key': 'key-1' }),
      () => ({ 'Idempotency-Key': 'c232ab00-9414-11ec-b3c8-9f6bdeced846' }),
      () => ({ 'Idempotency-Key': 'a'.repeat(HUGE_HEADER) }),
      () => ({ 'Idempotency-Key': '\u00e9'.repeat(36) }),
      () => ({ 'Idempotency-Key': undefined, 'X-Idempotency-Key': randomUUID() }),
      () => ({ 'X-Idempotency-Key': randomUUID() }),
      () => ({ 'X-CSRF-Token': randomUUID() }),
      () => ({ 'X-CSRF-Token': 'c'.repeat(HUGE_HEADER) }),
      () => ({ Accept: 'text/csv' }),
      () => ({ Accept: ';;;,,,q=x' }),
      () => ({ Accept: 'text/html,'.repeat(1_200) }),
      () => ({ 'X-Filler': 'x'.repeat(HUGE_HEADER) }),
      () => ({ Cookie: `chamada_refresh=${'b'.repeat(HUGE_HEADER)}` }),
      () => ({ 'X-Forwarded-For': 'not-an-ip, ::::, 999.999.999.999' }),
      () => ({ 'X-Forwarded-For': '10.0.0.1, '.repeat(1_100) }),
      () => ({ Origin: 'null' }),
      () => ({ Origin: 'https://evil.example' }),
      () => ({ 'X-Correlation-Id': 'not-a-uuid-\u00e9' }),
      () => ({ 'X-Correlation-Id': randomUUID().toUpperCase() }),
    ];
    for (const headers of headerCases) {
      cases.push(
        at('bad header', () => {
          const d = base();
          return { ...d, headers: headers(d.role) };
        }),
      );
    }
    cases.push(at('method OPTIONS', () => base({ method: 'OPTIONS' })));
    if (MUTATING_METHODS.has(route.method)) {
      // One key for three different payloads: the ledger must answer, never fall over.
      const reused = randomUUID();
      for (const body of [validBody, '{}', '{"other":1}']) {
        cases.push(
          at('reused Idempotency-Key', () => base({ body, headers: { 'Idempotency-Key': reused } })),
        );
      }
    }

    for (const q of QUERY_STRINGS) {
      cases.push(at('bad query', () => base({ query: requiredQuery === '' ? q : `${requiredQuery}&${q}` })));
    }
    for (const key of queryKeys) {
      for (const value of QUERY_VALUES) {
        const others = requiredQuery
          .split('&')
          .filter((kv) => kv !== '' && !kv.startsWith(`${encodeURIComponent(key)}=`));
        cases.push(
          at('query value', () =>
            base({ query: [...others, `${encodeURIComponent(key)}=${value}`].join('&') }),
          ),
        );
      }
      cases.push(at('repeated query parameter', () => base({ query: `${key}=a&${key}=b` })));
      cases.push(at('bracketed query parameter', () => base({ query: `${key}[$gt]=` })));
    }
    for (const param of params) {
      for (const raw of PATH_VALUES) {
        cases.push(
          at('bad path value', () =>
            base({
              path: fillPathRaw(route.path, (p) =>
                p === param ? raw : encodeURIComponent(ids[p] ?? randomUUID()),
              ),
            }),
          ),
        );
      }
      cases.push(
        at('unknown id', () =>
          base({
            path: fillPath(route.path, (p) => (p === param ? randomUUID() : (ids[p] ?? randomUUID()))),
          }),
        ),
      );
    }
    for (const [i, role] of SYSTEM_ROLES.entries()) {
      cases.push(at('any role', () => ({ ...base(), role: pick(SYSTEM_ROLES, i) ?? role })));
    }

    const needed = Math.max(0, INPUTS_PER_ROUTE - cases.length);
    const specs = fc.sample(randomSpec, { seed: SEED + routeIndex, numRuns: needed });
    for (const spec of specs) cases.push(randomCase(spec));

    function randomCase(spec: SpecOf<typeof randomSpec>): FuzzCase {
      switch (spec.kind) {
        case 'random field value': {
          const path = pick(bodyPaths, spec.at);
          const body =
            path === undefined
              ? JSON.stringify(spec.value)
              : JSON.stringify(setAt(example, path, spec.value));
          return at(spec.kind, () => base({ body }));
        }
        case 'random field string': {
          const path = pick(bodyPaths, spec.at);
          const body = JSON.stringify(
            path === undefined ? { value: spec.value } : setAt(example, path, spec.value),
          );
          return at(spec.kind, () => base({ body }));
        }
        case 'random body':
          return at(spec.kind, () => base({ body: JSON.stringify(spec.value) }));
        case 'random bytes body':
          return at(spec.kind, () => base({ body: spec.bytes }));
        case 'random query': {
          const key = pick(queryKeys, spec.at) ?? spec.key.toWellFormed();
          const value = encodeURIComponent(spec.value.toWellFormed());
          const q = `${encodeURIComponent(key)}=${value}`;
          return at(spec.kind, () => base({ query: requiredQuery === '' ? q : `${requiredQuery}&${q}` }));
        }
        case 'random path value': {
          const param = pick(params, spec.at);
          if (param === undefined) {
            return at(spec.kind, () =>
              base({ path: `${realPath}/${encodeURIComponent(spec.value.toWellFormed())}` }),
            );
          }
          const path = fillPath(route.path, (p) =>
            p === param ? spec.value.toWellFormed() : (ids[p] ?? randomUUID()),
          );
          return at(spec.kind, () => base({ path }));
        }
        case 'random header': {
          const name = pick(RANDOM_HEADERS, spec.at) ?? 'X-Device-Id';
          const value = name === 'Authorization' ? `Bearer ${spec.value}` : spec.value;
          return at(spec.kind, () => base({ headers: { [name]: value } }));
        }
        case 'random anonymous body':
          return at(spec.kind, () => ({ ...base({ body: JSON.stringify(spec.value) }), role: null }));
      }
    }

    // Inputs that would reach PBKDF2 are capped: past the cap an unknown field makes them invalid.
    if (usesPassword && route.body !== undefined) {
      const codec = route.body;
      let valid = 0;
      return cases.map((c) => ({
        kind: c.kind,
        draft: () => {
          const d = c.draft();
          if (typeof d.body !== 'string') return d;
          let parsed: unknown;
          try {
            parsed = JSON.parse(d.body);
          } catch {
            return d;
          }
          if (E.isLeft(codec.decode(parsed))) return d;
          valid += 1;
          if (valid <= PASSWORD_ROUTE_VALID_CAP || !isRecord(parsed)) return d;
          return { ...d, body: JSON.stringify({ ...parsed, pbkdf2CapExceeded: true }) };
        },
      }));
    }
    return cases;
  };

  /** The wire form of a draft: a valid token for its role, a fresh key, a fresh client address. */
  const toWire = (route: Route, d: Draft, index: number): WireRequest => {
    const headers: Record<string, string> = {};
    if (d.role !== null) {
      headers.Authorization = `Bearer ${DEV_TOKEN_OF[d.role]}`;
      headers['X-Device-Id'] = DEVICE_ID;
    }
    if (MUTATING_METHODS.has(route.method)) headers['Idempotency-Key'] = randomUUID();
    if (d.body !== undefined) headers['Content-Type'] = 'application/json';
    if (route.rateLimit !== undefined) {
      ipCounter += 1;
      // One input in eight comes from an address that is already over the limit, so 429s are fuzzed too.
      headers['X-Forwarded-For'] =
        index % 8 === 0
          ? EXHAUSTED_IP
          : `10.${(ipCounter >> 16) & 255}.${(ipCounter >> 8) & 255}.${ipCounter & 255}`;
    }
    for (const [k, v] of Object.entries(d.headers)) {
      const existing = Object.keys(headers).find((h) => h.toLowerCase() === k.toLowerCase());
      if (existing !== undefined) delete headers[existing];
      if (v !== undefined) headers[k] = v;
    }
    return {
      method: d.method ?? route.method.toUpperCase(),
      path: d.query === '' ? d.path : `${d.path}?${d.query}`,
      headers,
      ...(d.body === undefined ? {} : { body: d.body }),
    };
  };

  /**
   * Routes that scan the audit log go first (one per copy of the service), while it is small: each of their requests costs time
   * in proportion to the log (tens of thousands of entries once every other route has been fuzzed),
   * which would make the run unbounded, not less robust.
   */
  const readsAuditLog = (r: Route) => r.auditRead === 'EXPORT' || r.operationId === 'listAuditLogs';
  const fuzzOrder = [...routes.filter(readsAuditLog), ...routes.filter((r) => !readsAuditLog(r))];

  it('answers every input of every route below 500, errors in the envelope, and stays up', async () => {
    const started = Date.now();
    const outcomes: RouteOutcome[] = [];
    const fuzzShard = async (shard: Shard, share: ReadonlyArray<Route>): Promise<void> => {
      for (const route of share) {
        const cases = casesFor(route, routes.indexOf(route), shard.ids);
        const outcome: RouteOutcome = {
          route,
          inputs: cases.length,
          statuses: new Map(),
          failures: [],
          serverErrors: 0,
          nonEnvelope: 0,
          transport: 0,
        };
        outcomes.push(outcome);
        await runPool(cases, CONCURRENCY / SHARDS, async (c, i) => {
          const wire = toWire(route, c.draft(), i);
          const describeInput = () =>
            `${routeName(route)} [${c.kind}] ${wire.method} ${wire.path.slice(0, 160)} body=${
              wire.body === undefined
                ? '-'
                : typeof wire.body === 'string'
                  ? wire.body.slice(0, 160)
                  : `${wire.body.length} bytes`
            } headers=${JSON.stringify(wire.headers).slice(0, 300)}`;
          let r: WireResponse;
          try {
            r = await send(shard.target, wire);
          } catch (e) {
            outcome.transport += 1;
            if (outcome.failures.length < 5)
              outcome.failures.push(`transport error ${String(e)}: ${describeInput()}`);
            return;
          }
          outcome.statuses.set(r.status, (outcome.statuses.get(r.status) ?? 0) + 1);
          if (r.status >= 500) {
            outcome.serverErrors += 1;
            if (outcome.failures.length < 5)
              outcome.failures.push(`${r.status} ${r.text.slice(0, 200)}: ${describeInput()}`);
          }
          const problem = envelopeProblem(r);
          if (problem !== undefined) {
            outcome.nonEnvelope += 1;
            if (outcome.failures.length < 5) {
              outcome.failures.push(
                `${r.status} not an envelope (${problem}): ${r.text.slice(0, 200)}: ${describeInput()}`,
              );
            }
          }
        });
      }
    };
    await Promise.all(
      shards.map((shard, k) =>
        fuzzShard(
          shard,
          fuzzOrder.filter((_, j) => j % SHARDS === k),
        ),
      ),
    );
    const healths = await Promise.all(shards.map((shard) => call(`${shard.svc.url}/api/v1/health`)));
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    const total = outcomes.reduce((n, o) => n + o.inputs, 0);
    const sum = (f: (o: RouteOutcome) => number) => outcomes.reduce((n, o) => n + f(o), 0);
    const statuses = new Map<number, number>();
    for (const o of outcomes) for (const [s, n] of o.statuses) statuses.set(s, (statuses.get(s) ?? 0) + n);
    const unhandled = shards.flatMap((shard) =>
      shard.svc.errorLines().filter((l) => l.includes('unhandled error')),
    );
    figure(
      'fuzz',
      `${routes.length} routes (${SHARDS} service processes) × ≥${thousands(Math.min(...outcomes.map((o) => o.inputs)))} inputs = ${thousands(total)} requests in ${seconds} s; ` +
        `${sum((o) => o.serverErrors)} ≥ 500; ${sum((o) => o.nonEnvelope)} non-envelope errors; ${sum((o) => o.transport)} transport errors; ` +
        `${unhandled.length} unhandled errors logged; health after: ${healths.map((h) => h.status).join(', ')}; statuses ${[
          ...statuses.entries(),
        ]
          .sort(([a], [b]) => a - b)
          .map(([s, n]) => `${s}×${thousands(n)}`)
          .join(' ')}`,
    );
    const failures = outcomes.flatMap((o) => o.failures);
    expect(failures, failures.join('\n')).to.deep.equal([]);
    expect(unhandled, unhandled.slice(0, 5).join('\n')).to.deep.equal([]);
    for (const o of outcomes) expect(o.inputs, routeName(o.route)).to.be.at.least(1_000);
    for (const [k, shard] of shards.entries()) {
      expect(shard.svc.exited(), `service process ${k} ended`).to.equal(undefined);
      const health = healths[k];
      expect(health?.status, health?.text).to.equal(200);
      decodeAs(t.type({ status: t.literal('ok') }), health?.json);
    }
  });
});
