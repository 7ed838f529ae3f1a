/**
 * Reliability row "injection": NoSQL selector operators (`$gt`, `$ne`, `$regex`, `$where`, `$in`)
 * and regex metacharacters wherever a client's string reaches a lookup — the student search `q`,
 * cursors, path ids, filters and JSON bodies. Criterion: they are literals. A search returns exactly
 * the students whose names literally contain the words (so `.*` finds only the student named with
 * a literal `.*`), nothing outside the caller's scope appears (no DELETED student in an ACTIVE list,
 * no field beyond the list's five), operator objects where a string belongs are 400, ids that are
 * patterns find nothing, and nothing answers ≥ 500.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import { routes } from '../../src/http/registry.js';
import { MUTATING_METHODS, type Route } from '../../src/http/route.js';
import { TOKENS, useService } from '../support/harness.js';
import { call } from '../support/http.js';
import { type IssuedAgent, issueAgent } from '../support/printAgents.js';
import { SyncAnswer, seedSmallRoster } from '../support/seed.js';
import { DEVICE_ID, mutationHeaders } from '../support/testService.js';
import { figure } from './figures.js';
import {
  CLASS_ROLES,
  DEV_TOKEN_OF,
  decodeWire,
  envelopeProblem,
  errorCodeOf,
  exampleOf,
  fieldsOf,
  fillPathRaw,
  issuePathsOf,
  jsonOf,
  type Role,
  routeName,
  SYSTEM_ROLES,
  send,
  type Target,
  targetOf,
  type WireResponse,
} from './securitySupport.js';

/** Names with metacharacters in them, so a literal match has something to find. */
const LITERAL_STAR = 'Dona .* Estrela';
const LITERAL_ZOO = 'Zeca (a|b) [x] ^y \\z $w {"$gt":null}';
const ACTIVE_NAMES = ['Ana Souza', 'Bruno Lima', 'Carla Dias', LITERAL_STAR, LITERAL_ZOO];
const DELETED_NAME = 'Oculto Apagado';

const SEARCH_PAYLOADS: ReadonlyArray<string> = [
  '.*',
  '^',
  '(',
  ')',
  '\\',
  '[',
  ']',
  '*',
  '+',
  '?',
  '|',
  '$',
  '.',
  '^.*$',
  '(?:)',
  '[a-z]',
  '\\w',
  'a|b',
  '.*|.*',
  '(a|b)',
  '$w',
  '$gt',
  '$ne',
  '$regex',
  '$where',
  '{"$gt":null}',
  '{"$ne":null}',
  '{"$regex":".*"}',
  '{"$where":"return true"}',
  "' OR '1'='1",
  '"; return true; //',
  '%',
  '_',
  '*)(uid=*',
  'this.displayName',
  '{',
  '}',
  'a.*',
  'ana .*',
  'oculto',
];

/** Bracketed and repeated query forms: with Express's `simple` parser they must never become objects. */
const QUERY_FORMS = (key: string): string[] => [
  `${key}[$ne]=x`,
  `${key}[$regex]=.*`,
  `${key}[$gt]=`,
  `${key}[]=a`,
  `${key}=a&${key}=b`,
];

const OPERATORS: ReadonlyArray<unknown> = [
  { $gt: null },
  { $ne: '' },
  { $regex: '.*' },
  { $where: 'return true' },
  { $in: [''] },
];

/** Path id values that would match something if they were patterns or selectors. */
const ID_PAYLOADS: ReadonlyArray<string> = [
  '.*',
  '^.*$',
  '*',
  '%',
  '$gt',
  '{"$gt":null}',
  '{"$ne":null}',
  '[object Object]',
  '_all_docs',
  '_design/idx',
  '_local/x',
  '..',
  '.',
  '\\',
];

const fold = (s: string): string =>
  s.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase().replace(/\s+/g, ' ').trim();

/** The documented search: every word of `q` appears in the name, case and accents aside. */
const literalOracle = (names: ReadonlyArray<string>, q: string): string[] => {
  const words = fold(q)
    .split(' ')
    .filter((w) => w !== '');
  return names.filter((n) => words.every((w) => fold(n).includes(w)));
};

const LIST_FIELDS = ['studentId', 'displayName', 'photoRef', 'status', 'updatedAt'];
const Page = t.type({
  items: t.array(t.type({ studentId: t.string, displayName: t.string, status: t.string })),
  nextCursor: t.union([t.string, t.null]),
});

const isRecord = (u: unknown): u is Record<string, unknown> =>
  typeof u === 'object' && u !== null && !Array.isArray(u);

type Segment = string | number;

/** Paths (from the root) of every string inside a JSON value. */
const stringPaths = (v: unknown, prefix: ReadonlyArray<Segment> = []): Segment[][] => {
  if (typeof v === 'string') return [[...prefix]];
  if (Array.isArray(v)) return v.flatMap((x, i) => stringPaths(x, [...prefix, i]));
  if (isRecord(v)) return Object.entries(v).flatMap(([k, x]) => stringPaths(x, [...prefix, k]));
  return [];
};

const replaceAt = (v: unknown, path: ReadonlyArray<Segment>, replacement: unknown): unknown => {
  const [head, ...rest] = path;
  if (head === undefined) return replacement;
  if (Array.isArray(v) && typeof head === 'number')
    return v.map((x, i) => (i === head ? replaceAt(x, rest, replacement) : x));
  if (isRecord(v) && typeof head === 'string') return { ...v, [head]: replaceAt(v[head], rest, replacement) };
  return v;
};

/** Who passes the route's class: a role's development token, or a print agent's token (0054). */
type Caller = Role | 'PRINT_AGENT';
const roleFor = (route: Route): Caller | null =>
  route.auth === 'none'
    ? null
    : route.auth === 'bearer'
      ? 'CHAMADOR'
      : route.auth === 'printAgent'
        ? 'PRINT_AGENT'
        : (CLASS_ROLES[route.auth]?.[1] ?? 'ADMIN');

describe('reliability: injection', function () {
  this.timeout(120_000);
  // Hundreds of probes a minute through one principal and device: an attack battery, not a door, so
  // the per-device limit (which would answer most of them 429) is off to reach the handlers.
  const h = useService({ env: { TRUST_PROXY: 'loopback', RATE_LIMIT_REQUESTS: '0' } });
  let target: Target;
  const ids: Record<string, string> = {};
  const activeIds = new Set<string>();
  let deletedId = '';
  let agent: IssuedAgent = { agentId: '', token: '' };
  let address = 0;

  before(async () => {
    target = targetOf(h.url, 8);
    const roster = await seedSmallRoster(h.url, [...ACTIVE_NAMES, DELETED_NAME]);
    agent = await issueAgent(h.url, 'Injeção');
    ids.classId = roster.classId;
    ids.sessionId = roster.sessionId;
    roster.studentIds.slice(0, ACTIVE_NAMES.length).forEach((id) => {
      activeIds.add(id);
    });
    ids.studentId = roster.studentIds[0] ?? '';
    deletedId = roster.studentIds[ACTIVE_NAMES.length] ?? '';
    const del = await call(`${h.url}/api/v1/students/${deletedId}/delete`, {
      method: 'POST',
      headers: mutationHeaders(TOKENS.ADMIN),
      body: JSON.stringify({ justification: 'Pedido do responsável (LGPD).' }),
    });
    expect(del.status, del.text).to.equal(200);
  });
  after(async () => {
    target.agent.destroy();
  });

  it('treats operators and metacharacters as literals everywhere, within the caller’s scope', async () => {
    const started = Date.now();
    const problems: string[] = [];
    let probes = 0;
    let extra = 0;
    let outOfScope = 0;
    let serverErrors = 0;

    const request = async (
      method: string,
      path: string,
      role: Caller | null,
      body?: unknown,
      raw?: string,
    ): Promise<WireResponse> => {
      probes += 1;
      address += 1;
      const headers: Record<string, string> = {
        'X-Forwarded-For': `10.66.${(address >> 8) & 255}.${address & 255}`,
      };
      if (role === 'PRINT_AGENT') {
        headers.Authorization = `Bearer ${agent.token}`;
        headers['X-Device-Id'] = agent.agentId;
      } else if (role !== null) {
        headers.Authorization = `Bearer ${DEV_TOKEN_OF[role]}`;
        headers['X-Device-Id'] = DEVICE_ID;
      }
      if (method !== 'GET') headers['Idempotency-Key'] = randomUUID();
      const text = raw ?? (body === undefined ? undefined : JSON.stringify(body));
      if (text !== undefined) headers['Content-Type'] = 'application/json';
      const r = await send(target, { method, path, headers, ...(text === undefined ? {} : { body: text }) });
      const where = `${method} ${path.slice(0, 140)} as ${role ?? 'anonymous'}`;
      if (r.status >= 500) {
        serverErrors += 1;
        problems.push(`${where}: ${r.status} ${r.text.slice(0, 200)}`);
      }
      const envelope = envelopeProblem(r);
      if (envelope !== undefined) problems.push(`${where}: ${r.status} not an envelope (${envelope})`);
      return r;
    };

    /** Checks a student page against the literal oracle and the caller's scope. */
    const checkPage = (
      where: string,
      r: WireResponse,
      names: ReadonlyArray<string>,
      q: string,
      status: string,
    ) => {
      const page = decodeWire(Page, r);
      const got = page.items.map((i) => i.displayName).sort();
      const want = literalOracle(names, q).sort();
      const unexpected = got.filter((n) => !want.includes(n));
      if (unexpected.length > 0) {
        extra += unexpected.length;
        problems.push(`${where}: extra results ${JSON.stringify(unexpected)}`);
      }
      if (JSON.stringify(got) !== JSON.stringify(want))
        problems.push(`${where}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
      const json = jsonOf(r);
      const items = isRecord(json) && Array.isArray(json.items) ? json.items : [];
      for (const item of items) {
        const keys = isRecord(item) ? Object.keys(item) : [];
        const widened = keys.filter((k) => !LIST_FIELDS.includes(k));
        const wrongStatus = isRecord(item) && item.status !== status;
        if (widened.length > 0 || wrongStatus) {
          outOfScope += 1;
          problems.push(`${where}: out of scope ${JSON.stringify(item).slice(0, 200)}`);
        }
      }
    };

    // 1. The search `q`, as every role, against the literal oracle; DELETED only when asked for.
    for (const role of SYSTEM_ROLES) {
      for (const q of SEARCH_PAYLOADS) {
        const path = `/api/v1/students?limit=200&q=${encodeURIComponent(q)}`;
        const r = await request('GET', path, role);
        if (r.status !== 200) problems.push(`GET ${path} as ${role}: ${r.status} ${r.text.slice(0, 200)}`);
        else checkPage(`q=${q} as ${role}`, r, ACTIVE_NAMES, q, 'ACTIVE');
      }
    }
    for (const q of SEARCH_PAYLOADS) {
      const path = `/api/v1/students?limit=200&status=DELETED&q=${encodeURIComponent(q)}`;
      const r = await request('GET', path, 'ADMIN');
      if (r.status === 200) checkPage(`status=DELETED q=${q}`, r, [DELETED_NAME], q, 'DELETED');
      else problems.push(`GET ${path}: ${r.status}`);
    }

    // 2. Bracketed and repeated forms of every query parameter of every route: 400, never an object.
    for (const route of routes.filter((r) => r.query !== undefined && r.method === 'get')) {
      const fields = fieldsOf(route.query);
      const keys = [...(fields?.required ?? []), ...(fields?.optional ?? [])];
      const path = fillPathRaw(route.path, (p) => ids[p] ?? randomUUID());
      for (const key of keys) {
        for (const form of QUERY_FORMS(key)) {
          const r = await request('GET', `${path}?${form}`, roleFor(route));
          if (r.status === 200 && route.operationId === 'listStudents') {
            // Acceptable only if the value was taken literally; the oracle of the bracketed value decides.
            checkPage(`${form}`, r, ACTIVE_NAMES, form.split('=')[1] ?? '', 'ACTIVE');
          } else if (r.status !== 400 || errorCodeOf(r) !== 'VALIDATION_FAILED') {
            problems.push(`${routeName(route)}?${form}: ${r.status}, want 400 VALIDATION_FAILED`);
          }
        }
      }
    }

    // 3. Cursors: patterns, operators, an unsigned forgery, a genuine cursor moved to another query.
    const first = await request('GET', '/api/v1/students?limit=1', 'ADMIN');
    const genuine = decodeWire(Page, first).nextCursor;
    expect(genuine, 'a first page of one has a next cursor').to.be.a('string');
    const forged = Buffer.from(JSON.stringify({ k: '', s: 'DELETED', q: '' })).toString('base64url');
    const cursors = [
      ...SEARCH_PAYLOADS.slice(0, 12),
      '{"$gt":null}',
      forged,
      `${forged}.${'A'.repeat(43)}`,
      genuine === null ? 'x' : `${genuine.slice(0, -1)}${genuine.endsWith('A') ? 'B' : 'A'}`,
    ];
    for (const cursor of cursors) {
      for (const path of [
        `/api/v1/students?cursor=${encodeURIComponent(cursor)}`,
        `/api/v1/audit-logs?cursor=${encodeURIComponent(cursor)}`,
        `/api/v1/reports/conflicts?cursor=${encodeURIComponent(cursor)}`,
      ]) {
        const r = await request('GET', path, 'ADMIN');
        if (r.status !== 400)
          problems.push(`GET ${path}: ${r.status}, want 400 (a cursor this server did not issue)`);
      }
    }
    if (genuine !== null) {
      for (const moved of [
        `/api/v1/students?status=DELETED&cursor=${encodeURIComponent(genuine)}`,
        `/api/v1/students?q=a&cursor=${encodeURIComponent(genuine)}`,
      ]) {
        const r = await request('GET', moved, 'ADMIN');
        if (r.status !== 400)
          problems.push(`GET ${moved}: ${r.status}, want 400 (the cursor belongs to another query)`);
      }
    }

    // 4. Filters that are strings: a pattern or an operator text matches nothing literally named so.
    for (const value of ['.*', '{"$gt":null}', '{"$ne":null}', '$regex', '^dev']) {
      for (const key of ['actor', 'subjectId']) {
        const path = `/api/v1/audit-logs?${key}=${encodeURIComponent(value)}`;
        const r = await request('GET', path, 'ADMIN');
        const items = decodeWire(t.type({ items: t.array(t.unknown) }), r).items;
        if (items.length > 0) {
          extra += items.length;
          problems.push(`GET ${path}: ${items.length} entries for a literal that names nobody`);
        }
      }
      const consents = `/api/v1/image-consents?subjectType=STUDENT&subjectId=${encodeURIComponent(value)}`;
      const c = await request('GET', consents, 'ADMIN');
      const history = decodeWire(t.type({ current: t.unknown, history: t.array(t.unknown) }), c);
      if (history.current !== null || history.history.length > 0)
        problems.push(`GET ${consents}: consents for a literal`);
    }
    const control = await request('GET', '/api/v1/audit-logs?actor=dev-admin', 'ADMIN');
    expect(
      decodeWire(t.type({ items: t.array(t.unknown) }), control).items,
      'the actor filter finds dev-admin',
    ).not.to.be.empty;

    // 5. Operator objects wherever a body string goes, on every route with a body: 400 naming it.
    for (const route of routes.filter((r) => r.body !== undefined)) {
      const example = route.body === undefined ? undefined : exampleOf(route.body);
      if (example === undefined) continue;
      const path = fillPathRaw(route.path, (p) => encodeURIComponent(ids[p] ?? randomUUID()));
      for (const at of stringPaths(example)) {
        for (const operator of OPERATORS) {
          const r = await request(
            route.method.toUpperCase(),
            path,
            roleFor(route),
            replaceAt(example, at, operator),
          );
          const field = `body.${at.join('.')}`;
          const batch = r.status === 200 ? SyncAnswer.decode(jsonOf(r)) : undefined;
          if (batch !== undefined && E.isRight(batch)) {
            // A sync batch judges each event on its own (decision 0017): the event must fail, alone.
            const { synced, failed } = batch.right;
            if (synced.length > 0 || failed.length !== 1 || failed[0]?.index !== 0) {
              problems.push(
                `${routeName(route)} ${field}=${JSON.stringify(operator)}: event not refused ${r.text.slice(0, 200)}`,
              );
            }
          } else if (r.status !== 400 || errorCodeOf(r) !== 'VALIDATION_FAILED') {
            problems.push(`${routeName(route)} ${field}=${JSON.stringify(operator)}: ${r.status}, want 400`);
          } else if (!issuePathsOf(r).some((p) => field.startsWith(p) || p.startsWith(field))) {
            problems.push(
              `${routeName(route)} ${field}=${JSON.stringify(operator)}: issues ${JSON.stringify(issuePathsOf(r))}`,
            );
          }
        }
      }
    }

    // 6. Path ids that are patterns, prefixes or another resource's id: never a match.
    const otherKind = (param: string): string =>
      param === 'sessionId' ? (ids.studentId ?? '') : (ids.sessionId ?? '');
    for (const route of routes.filter((r) => r.path.includes('{'))) {
      const example = route.body === undefined ? undefined : exampleOf(route.body);
      const params = [...route.path.matchAll(/\{([A-Za-z_]+)\}/g)].flatMap((m) =>
        m[1] === undefined ? [] : [m[1]],
      );
      for (const param of params) {
        const own = ids[param];
        const payloads = [
          ...ID_PAYLOADS,
          otherKind(param),
          ...(own === undefined ? [] : [`student:${own}`, `${own}.*`, `${own}*`, `^${own}`, `${own} `]),
        ];
        for (const payload of payloads) {
          const path = fillPathRaw(route.path, (p) =>
            p === param
              ? encodeURIComponent(payload).replace(/\./g, '%2E')
              : encodeURIComponent(ids[p] ?? randomUUID()),
          );
          const r = await request(
            route.method.toUpperCase(),
            path,
            route.auth === 'printAgent' ? 'PRINT_AGENT' : 'ADMIN',
            example ?? (MUTATING_METHODS.has(route.method) ? {} : undefined),
          );
          if (r.status !== 400 && r.status !== 404) {
            problems.push(
              `${routeName(route)} ${param}=${JSON.stringify(payload)}: ${r.status} ${r.text.slice(0, 160)}, want 404 or 400`,
            );
          }
        }
      }
    }

    // 7. Sign-in and tokens: operators are refused, patterns are just wrong credentials.
    const login = (body: unknown) => request('POST', '/api/v1/auth/login', null, body);
    for (const body of [
      { email: { $ne: null }, password: { $ne: null } },
      { email: { $regex: '.*' }, password: 'x' },
      { email: 'fuzz@chamada.test', password: { $gt: '' } },
    ]) {
      const r = await login(body);
      if (r.status !== 400) problems.push(`login ${JSON.stringify(body)}: ${r.status}, want 400`);
    }
    for (const body of [
      { email: '.*.*', password: '.*' },
      { email: '.*@.*', password: '.*' },
      { email: "' OR '1'='1", password: "' OR '1'='1" },
    ]) {
      const r = await login(body);
      if (r.status !== 401) problems.push(`login ${JSON.stringify(body)}: ${r.status}, want 401`);
    }
    for (const refreshToken of ['.*'.repeat(10), '{"$ne":null}'.padEnd(20, ' '), '^'.repeat(43)]) {
      const r = await request('POST', '/api/v1/auth/refresh', null, { refreshToken });
      if (r.status !== 401) problems.push(`refresh ${refreshToken}: ${r.status}, want 401`);
    }

    // 8. A check-out code is compared literally: patterns never open a check-in.
    const checkIn = await request('POST', '/api/v1/check-in', 'CHAMADOR', {
      studentId: ids.studentId,
      sessionId: ids.sessionId,
    });
    expect(checkIn.status, checkIn.text).to.equal(201);
    const { checkInId } = decodeWire(t.type({ checkInId: t.string }), checkIn);
    for (const code of ['.*', '^.*$', '[A-Z0-9]{6}', '*', '%']) {
      const r = await request('POST', '/api/v1/check-out', 'CHAMADOR', {
        checkInId,
        code,
        pickupPerson: 'Mãe',
      });
      if (r.status === 200) problems.push(`check-out with code ${code}: 200`);
    }

    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    figure(
      'injection',
      `${probes} probes in ${seconds} s (search ${SEARCH_PAYLOADS.length} payloads × ${SYSTEM_ROLES.length + 1} scopes, ` +
        `query forms, cursors, filters, operator objects in every body string, pattern ids in every path); ` +
        `${extra} extra results; ${outOfScope} out of scope; ${serverErrors} ≥ 500; ${problems.length} problems`,
    );
    expect(problems, problems.slice(0, 40).join('\n')).to.deep.equal([]);
    // The search oracle is not vacuous: the literal `.*` student is found by `.*`.
    const star = await request('GET', `/api/v1/students?q=${encodeURIComponent('.*')}`, 'ADMIN');
    expect(decodeWire(Page, star).items.map((i) => i.displayName)).to.deep.equal([LITERAL_STAR]);
    expect(activeIds.has(deletedId)).to.equal(false);
  });
});
