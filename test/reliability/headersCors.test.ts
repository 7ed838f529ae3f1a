/**
 * Security headers and CORS on every kind of answer, for every kind of Origin. The spec (Authentication
 * 11 and 12) asks for its headers on every response and for origin reflection only from an explicit
 * list; decision 0006 adds Cache-Control: no-store under /api/, `Vary: Origin` always, preflights
 * answered 204 (with no Access-Control-Allow-* header for an origin not on the list), never `*`, never
 * the `null` origin, and no credentials. Each origin runs the whole status matrix; violations are
 * collected so one run names every broken combination.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import * as t from 'io-ts';
import { isUuid } from '../../src/domain/codec.js';
import { TOKENS, useService } from '../support/harness.js';
import { call, decodeAs, type HttpResult } from '../support/http.js';
import { probeRoutes } from '../support/probeRoutes.js';
import { authHeaders, mutate, mutationHeaders } from '../support/testService.js';
import { figure } from './figures.js';
import {
  addStudent,
  CheckInView,
  classAndSession,
  SPEC_SECURITY_HEADERS,
  tallyText,
  wrongCode,
} from './helpers.js';

const KIOSK = 'https://kiosk.chamada.example';
const DEV_UI = 'http://localhost:5173';
const SPEC_ALLOWED_HEADERS = [
  'authorization',
  'content-type',
  'x-device-id',
  'x-csrf-token',
  'x-idempotency-key',
  'idempotency-key',
];
const EXPOSED = ['x-correlation-id', 'location', 'retry-after'];

type Rule = 'spec' | '0006';
interface Finding {
  readonly rule: Rule;
  readonly what: string;
  readonly label: string;
}

interface Req {
  readonly method: string;
  readonly headers: Record<string, string>;
  readonly body: string;
}

interface Case {
  readonly label: string;
  readonly status: number;
  readonly path: string;
  readonly preflight?: boolean;
  readonly send: (origin: Record<string, string>) => Promise<HttpResult>;
}

const listOf = (header: string | null): string[] =>
  (header ?? '')
    .split(',')
    .map((h) => h.trim().toLowerCase())
    .filter((h) => h !== '');

describe('reliability: security headers and CORS on every status class', function () {
  this.timeout(60_000);
  const now = Date.parse('2026-11-25T12:00:00.000Z');
  // A frozen clock keeps the login window from reopening while the matrix runs.
  const h = useService({
    env: { CORS_ORIGINS: `${KIOSK},${DEV_UI}` },
    routes: probeRoutes(),
    clock: () => new Date(now),
  });
  const cases: Case[] = [];
  const url = (p: string) => `${h.url}${p}`;

  before(async () => {
    const { classId, sessionId } = await classAndSession(h.svc);
    const studentId = await addStudent(h.svc, classId);
    const checkedIn = await mutate(url('/api/v1/check-in'), 'POST', { studentId, sessionId }, TOKENS.ADMIN);
    const { checkInId, code } = decodeAs(CheckInView, checkedIn.json);
    const out = (origin: Record<string, string>) =>
      call(url('/api/v1/check-out'), {
        method: 'POST',
        headers: { ...mutationHeaders(TOKENS.CHAMADOR), ...origin },
        body: JSON.stringify({ checkInId, code: wrongCode(code), pickupPerson: 'X' }),
      });
    for (let i = 0; i < 5; i += 1) await out({});
    // The login limit (5 a minute per IP) used up, so the next login is a 429.
    for (let i = 0; i < 5; i += 1) await call(url('/api/v1/auth/login'), { method: 'POST', body: '{}' });
    // A response stored for replay, first sent to the kiosk origin.
    const replayKey = randomUUID();
    const original = await call(url('/api/v1/classes'), {
      method: 'POST',
      headers: { ...mutationHeaders(TOKENS.ADMIN, replayKey), Origin: KIOSK },
      body: JSON.stringify({ name: 'Replay' }),
    });
    expect(original.status, original.text).to.equal(201);

    const json = (method: string, token: string, body: string, key = randomUUID()): Req => ({
      method,
      headers: mutationHeaders(token, key),
      body,
    });
    const add = (c: Case) => cases.push(c);
    const get = (label: string, status: number, path: string, headers: Record<string, string> = {}) =>
      add({ label, status, path, send: (o) => call(url(path), { headers: { ...headers, ...o } }) });
    const send = (label: string, status: number, path: string, init: () => Req) =>
      add({
        label,
        status,
        path,
        send: (o) => {
          const i = init();
          return call(url(path), { ...i, headers: { ...i.headers, ...o } });
        },
      });

    get('200 health', 200, '/api/v1/health');
    add({
      label: '200 HEAD health',
      status: 200,
      path: '/api/v1/health',
      send: (o) => call(url('/api/v1/health'), { method: 'HEAD', headers: o }),
    });
    get('200 security.txt', 200, '/.well-known/security.txt');
    send('201 create', 201, '/api/v1/classes', () =>
      json('POST', TOKENS.ADMIN, JSON.stringify({ name: `T ${randomUUID()}` })),
    );
    send('201 replay', 201, '/api/v1/classes', () =>
      json('POST', TOKENS.ADMIN, JSON.stringify({ name: 'Replay' }), replayKey),
    );
    send('400 invalid body', 400, '/api/v1/classes', () =>
      json('POST', TOKENS.ADMIN, JSON.stringify({ name: '' })),
    );
    send('400 malformed JSON', 400, '/api/v1/classes', () => json('POST', TOKENS.ADMIN, '{"name": '));
    get('400 no device id', 400, '/api/v1/users', { Authorization: `Bearer ${TOKENS.ADMIN}` });
    get('401 no token', 401, '/api/v1/users');
    get('401 bad token', 401, '/api/v1/users', authHeaders('not-a-token-of-this-service'));
    get('403 role', 403, '/api/v1/users', authHeaders(TOKENS.CHAMADOR));
    get('404 route', 404, '/api/v1/no-such-route');
    get('404 resource', 404, `/api/v1/students/${randomUUID()}`, authHeaders(TOKENS.ADMIN));
    send('409 key reuse', 409, '/api/v1/classes', () =>
      json('POST', TOKENS.ADMIN, JSON.stringify({ name: 'Other' }), replayKey),
    );
    send('413 body', 413, '/api/v1/classes', () =>
      json('POST', TOKENS.ADMIN, JSON.stringify({ name: 'x'.repeat(1_100_000) })),
    );
    send('415 charset', 415, '/api/v1/classes', () => {
      const i = json('POST', TOKENS.ADMIN, '{}');
      return { ...i, headers: { ...i.headers, 'Content-Type': 'application/json; charset=klingon' } };
    });
    add({ label: '423 locked', status: 423, path: '/api/v1/check-out', send: out });
    send('429 login', 429, '/api/v1/auth/login', () => ({
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{}',
    }));
    get('500 boom', 500, '/api/v1/_probe/boom');
    get('401 replication', 401, '/api/v1/replication/roster');
    add({
      label: '204 preflight',
      status: 204,
      path: '/api/v1/check-in',
      preflight: true,
      send: (o) =>
        call(url('/api/v1/check-in'), {
          method: 'OPTIONS',
          headers: {
            ...o,
            'Access-Control-Request-Method': 'POST',
            'Access-Control-Request-Headers': 'authorization,content-type,x-device-id,idempotency-key',
          },
        }),
    });
  });

  /**
   * Everything wrong with one response. `spec` findings break the spec's Authentication 11–12 (or the
   * error envelope); `0006` findings break what decision 0006 adds (Vary: Origin always, a 204 for every
   * preflight, Cache-Control, exposed headers).
   */
  const violations = (c: Case, r: HttpResult, origin: string | undefined, allowed: boolean): Finding[] => {
    const out: Finding[] = [];
    const h = (name: string) => r.headers.get(name);
    const bad = (rule: Rule, what: string) => out.push({ rule, what, label: c.label });
    if (r.status !== c.status)
      bad(c.preflight === true ? '0006' : 'spec', `status ${r.status} (expected ${c.status})`);
    for (const [name, value] of SPEC_SECURITY_HEADERS) {
      if (h(name) !== value) bad('spec', `${name} = ${JSON.stringify(h(name))}`);
    }
    if (!isUuid(h('x-correlation-id') ?? '')) bad('spec', 'no UUID X-Correlation-Id');
    const acao = h('access-control-allow-origin');
    if (acao === '*') bad('spec', 'Access-Control-Allow-Origin: *');
    if (allowed) {
      if (acao !== origin) bad('spec', `Access-Control-Allow-Origin = ${JSON.stringify(acao)}`);
    } else {
      const leaked = [...r.headers.keys()].filter((k) => k.startsWith('access-control-allow-'));
      if (leaked.length > 0) bad('spec', `CORS headers for a refused origin: ${leaked.join(', ')}`);
    }
    if (c.preflight === true && allowed) {
      if (h('access-control-max-age') !== '86400')
        bad('spec', `Access-Control-Max-Age = ${JSON.stringify(h('access-control-max-age'))}`);
      const headers = listOf(h('access-control-allow-headers'));
      if (headers.length !== 6 || !SPEC_ALLOWED_HEADERS.every((x) => headers.includes(x)))
        bad('spec', `Access-Control-Allow-Headers = ${JSON.stringify(h('access-control-allow-headers'))}`);
      if (!listOf(h('access-control-allow-methods')).includes('post'))
        bad('spec', `Access-Control-Allow-Methods = ${JSON.stringify(h('access-control-allow-methods'))}`);
    }
    if (c.preflight !== true && r.status >= 400) {
      const env = t.type({ error: t.type({ code: t.string, correlationId: t.string }) }).decode(r.json);
      if (env._tag === 'Left') bad('spec', 'no error envelope');
      else if (env.right.error.correlationId !== h('x-correlation-id'))
        bad('spec', 'envelope correlationId ≠ header');
    }
    if (r.status === 429 && !/^\d+$/.test(h('retry-after') ?? '')) bad('spec', '429 without Retry-After');

    if (c.path.startsWith('/api/') && h('cache-control') !== 'no-store')
      bad('0006', `Cache-Control = ${JSON.stringify(h('cache-control'))}`);
    if (h('x-powered-by') !== null) bad('0006', 'X-Powered-By present');
    if (h('access-control-allow-credentials') !== null)
      bad('0006', 'Access-Control-Allow-Credentials present');
    if (!listOf(h('vary')).includes('origin')) bad('0006', `Vary: Origin missing`);
    if (
      c.preflight !== true &&
      allowed &&
      !EXPOSED.every((x) => listOf(h('access-control-expose-headers')).includes(x))
    )
      bad('0006', `Access-Control-Expose-Headers = ${JSON.stringify(h('access-control-expose-headers'))}`);
    return out;
  };

  /** Findings grouped by what is wrong, each with the responses it was seen on. */
  const summarise = (findings: ReadonlyArray<Finding>, responses: number): string => {
    if (findings.length === 0) return '0 violations';
    const byWhat = new Map<string, string[]>();
    for (const f of findings) byWhat.set(f.what, [...(byWhat.get(f.what) ?? []), f.label]);
    return [...byWhat.entries()]
      .map(([what, labels]) =>
        labels.length === responses ? `${what} on all ${responses}` : `${what} on ${labels.join(', ')}`,
      )
      .join('; ');
  };

  const origins: ReadonlyArray<readonly [string, string | undefined, boolean]> = [
    ['allowed kiosk origin', KIOSK, true],
    ['second allowed origin', DEV_UI, true],
    ['unknown origin', 'https://evil.example', false],
    ['the null origin', 'null', false],
    ['a look-alike suffix origin', `${KIOSK}.evil.example`, false],
    ['the allowed host over http', 'http://kiosk.chamada.example', false],
    ['the allowed origin with a path', `${KIOSK}/`, false],
    ['no Origin header', undefined, false],
  ];

  for (const [what, origin, allowed] of origins) {
    describe(what, () => {
      const findings: Finding[] = [];
      const sent: number[] = [];
      let responses = 0;
      before(async () => {
        for (const c of cases) {
          // A preflight is a CORS request by definition; without an Origin there is none to make.
          if (c.preflight === true && origin === undefined) continue;
          const r = await c.send(origin === undefined ? {} : { Origin: origin });
          findings.push(...violations(c, r, origin, allowed));
          sent.push(c.status);
          responses += 1;
        }
      });
      const matrix = () => `${responses} responses (${tallyText(sent)})`;

      it(`spec: security headers exact on every status class; ${allowed ? 'origin reflected' : 'no Access-Control-Allow-*'}`, () => {
        const spec = findings.filter((f) => f.rule === 'spec');
        figure(`headers & CORS, spec (${what})`, `${matrix()}: ${summarise(spec, responses)}`);
        expect(spec.map((f) => `${f.label}: ${f.what}`)).to.deep.equal([]);
      });

      it('decision 0006: Vary: Origin, no-store, preflight 204, exposed headers, no credentials', () => {
        const extra = findings.filter((f) => f.rule === '0006');
        figure(`headers & CORS, decision 0006 (${what})`, `${matrix()}: ${summarise(extra, responses)}`);
        expect(extra.map((f) => `${f.label}: ${f.what}`)).to.deep.equal([]);
      });
    });
  }
});
