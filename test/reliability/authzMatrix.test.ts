/**
 * Reliability row "authz matrix": every route of the registry × anonymous and every role, with
 * development tokens and with JWTs from real sign-ins (system roles, plus one custom role per
 * permission). Each cell must match the route's registered auth class: 401 without credentials on
 * a protected route, 403 for a role the class does not allow, and otherwise a request that gets
 * past authorisation.
 *
 * The probe request of a cell carries an unknown query parameter: authorisation comes before input
 * validation (decision 0007), so an allowed caller gets 400 naming that parameter and no handler
 * runs — no side effects, and proof that the request passed authorisation. Reads are also sent
 * plainly (an allowed caller must then get neither 401 nor 403), and mutations are sent with a
 * valid body to callers who must be refused.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import { ErrorEnvelope } from '../../src/domain/errors.js';
import { PERMISSIONS, type Permission } from '../../src/domain/principal.js';
import { routes } from '../../src/http/registry.js';
import { MUTATING_METHODS, type Route } from '../../src/http/route.js';
import { visibleStudentFields } from '../../src/rules/students.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, createUser, decodeTokens, jsonPost, jwtEnv } from '../support/auth.js';
import { call, decodeAs, type HttpResult } from '../support/http.js';
import { seedSmallRoster } from '../support/seed.js';
import { DEVICE_ID, mutationHeaders, startTestService, type TestService } from '../support/testService.js';
import { figure } from './figures.js';
import {
  CLASS_ROLES,
  DEV_TOKEN_OF,
  exampleOf,
  fieldsOf,
  fillPath,
  type Role,
  routeName,
  SYSTEM_ROLES,
  thousands,
} from './securitySupport.js';

const PROBE = '__authz_probe';

interface Caller {
  readonly label: string;
  readonly token: string | null;
  readonly role?: Role;
  /** A custom role granting exactly this permission. */
  readonly permission?: Permission;
}

type Expected = 'pass' | 401 | 403;

/** What the contract says a caller gets on a route: decision 0007's classes, 0013's permissions. */
const expected = (route: Route, caller: Caller): Expected => {
  if (route.auth === 'none') return 'pass';
  if (caller.token === null) return 401;
  if (route.auth === 'bearer') return 'pass';
  if (caller.role !== undefined && (CLASS_ROLES[route.auth] ?? []).includes(caller.role)) return 'pass';
  // A permission opens a route to custom roles, never an admin route (user and role management).
  if (caller.permission !== undefined && route.auth !== 'admin' && route.permission === caller.permission)
    return 'pass';
  return 403;
};

/**
 * A student's photo goes to the roles that read a student's `photoRef` (decision 0033): the route is
 * open to any bearer, and its handler (after validation, so the probe still passes it) refuses by the
 * same field rule that shapes every student read.
 */
const refusedByFields = (route: Route, caller: Caller): boolean =>
  route.operationId === 'getStudentPhoto' &&
  !visibleStudentFields(
    caller.role === undefined ? [] : [caller.role],
    caller.permission === undefined ? [] : [caller.permission],
  ).has('photoRef');

const Issues = t.type({ issues: t.array(t.type({ path: t.string })) });

/** Why a response does not match the expectation, or undefined when it does. */
const mismatch = (r: HttpResult, want: Expected, probe: boolean): string | undefined => {
  const decoded = ErrorEnvelope.decode(r.json);
  const code = E.isRight(decoded) ? decoded.right.error.code : undefined;
  if (r.status >= 400 && E.isLeft(decoded)) return `${r.status} without the envelope`;
  if (r.status >= 500) return `${r.status} ${code ?? ''}`;
  if (want === 401)
    return r.status === 401 && code === 'UNAUTHORIZED' ? undefined : `${r.status} ${code ?? ''}, want 401`;
  if (want === 403)
    return r.status === 403 && code === 'FORBIDDEN_ROLE' ? undefined : `${r.status} ${code ?? ''}, want 403`;
  if (r.status === 401 || r.status === 403) return `${r.status} ${code ?? ''}, want access`;
  if (!probe) return undefined;
  // The probe parameter must be what stopped the request: validation, after authorisation.
  const issues = E.isRight(decoded) ? Issues.decode(decoded.right.error.details) : undefined;
  const named =
    issues !== undefined && E.isRight(issues) && issues.right.issues.some((i) => i.path === `query.${PROBE}`);
  return r.status === 400 && code === 'VALIDATION_FAILED' && named
    ? undefined
    : `${r.status} ${code ?? ''}, want 400 naming query.${PROBE}`;
};

interface MatrixResult {
  readonly cells: number;
  readonly requests: number;
  readonly passes: number;
  readonly denied401: number;
  readonly denied403: number;
  readonly mismatches: ReadonlyArray<string>;
}

let address = 0;
/** A fresh client address per request, so the login and refresh rate limits never answer instead. */
const nextAddress = (): string => {
  address += 1;
  return `10.77.${(address >> 8) & 255}.${address & 255}`;
};

const runMatrix = async (
  url: string,
  callers: ReadonlyArray<Caller>,
  ids: Readonly<Record<string, string>>,
): Promise<MatrixResult> => {
  const mismatches: string[] = [];
  let requests = 0;
  let cells = 0;
  let passes = 0;
  let denied401 = 0;
  let denied403 = 0;
  for (const route of routes) {
    const mutating = MUTATING_METHODS.has(route.method);
    const path = fillPath(route.path, (p) => ids[p] ?? randomUUID());
    const body = route.body === undefined ? undefined : JSON.stringify(exampleOf(route.body) ?? {});
    const queryExample = route.query === undefined ? undefined : exampleOf(route.query);
    const required = (fieldsOf(route.query)?.required ?? []).flatMap((k) => {
      const v =
        typeof queryExample === 'object' && queryExample !== null
          ? Object.entries(queryExample).find(([key]) => key === k)?.[1]
          : undefined;
      return typeof v === 'string' ? [`${encodeURIComponent(k)}=${encodeURIComponent(v)}`] : [];
    });
    const send = (caller: Caller, query: ReadonlyArray<string>): Promise<HttpResult> => {
      requests += 1;
      const headers: Record<string, string> = { 'X-Forwarded-For': nextAddress() };
      if (caller.token !== null) {
        headers.Authorization = `Bearer ${caller.token}`;
        headers['X-Device-Id'] = DEVICE_ID;
      }
      if (mutating) headers['Idempotency-Key'] = randomUUID();
      if (body !== undefined) headers['Content-Type'] = 'application/json';
      return call(`${url}${path}${query.length === 0 ? '' : `?${query.join('&')}`}`, {
        method: route.method.toUpperCase(),
        headers,
        ...(body === undefined ? {} : { body }),
      });
    };
    for (const caller of callers) {
      cells += 1;
      const want = expected(route, caller);
      if (want === 'pass') passes += 1;
      else if (want === 401) denied401 += 1;
      else denied403 += 1;
      const where = `${routeName(route)} as ${caller.label}`;
      const probe = await send(caller, [...required, `${PROBE}=1`]);
      const p = mismatch(probe, want, true);
      if (p !== undefined) mismatches.push(`${where} (probe): ${p}`);
      // A plain read for everyone; a plain mutation only where it must be refused (no side effects).
      if (!mutating || want !== 'pass') {
        const plain = await send(caller, required);
        const m = mismatch(plain, want === 'pass' && refusedByFields(route, caller) ? 403 : want, false);
        if (m !== undefined) mismatches.push(`${where} (plain): ${m}`);
      }
    }
  }
  return { cells, requests, passes, denied401, denied403, mismatches };
};

const summary = (mode: string, r: MatrixResult, callers: number, seconds: string): string =>
  `${mode}: ${routes.length} routes × ${callers} callers = ${thousands(r.cells)} cells (${r.passes} allowed, ` +
  `${r.denied401} → 401, ${r.denied403} → 403) in ${thousands(r.requests)} requests, ${seconds} s; ` +
  `${r.mismatches.length} cells off their auth class`;

describe('reliability: authorisation matrix', function () {
  this.timeout(120_000);
  let svc: TestService | undefined;
  afterEach(async () => {
    await svc?.dispose();
    svc = undefined;
  });

  it('development tokens: every route × anonymous and the four roles matches its auth class', async () => {
    const started = Date.now();
    svc = await startTestService({ env: { TRUST_PROXY: 'loopback' } });
    const roster = await seedSmallRoster(svc.url, ['Ana Souza']);
    const ids = {
      classId: roster.classId,
      sessionId: roster.sessionId,
      studentId: roster.studentIds[0] ?? '',
    };
    const callers: Caller[] = [
      { label: 'anonymous', token: null },
      ...SYSTEM_ROLES.map((role) => ({ label: `dev ${role}`, token: DEV_TOKEN_OF[role], role })),
    ];
    const result = await runMatrix(svc.url, callers, ids);
    figure(
      'authz matrix',
      summary('dev tokens', result, callers.length, ((Date.now() - started) / 1000).toFixed(1)),
    );
    expect(result.mismatches, result.mismatches.join('\n')).to.deep.equal([]);
    expect(result.cells).to.equal(routes.length * callers.length);
  });

  it('JWTs from sign-in: every route × anonymous, the four roles and a custom role per permission matches its auth class', async () => {
    const started = Date.now();
    svc = await startTestService({ env: jwtEnv({ TRUST_PROXY: 'loopback' }) });
    const url = svc.url;
    const seeded = await call(`${url}/api/v1/_seed`, { method: 'POST' });
    expect(seeded.status, seeded.text).to.equal(200);
    const roster = decodeAs(
      t.type({
        roster: t.type({ nucleusId: t.string, classIds: t.array(t.string), sessionIds: t.array(t.string) }),
      }),
      seeded.json,
    ).roster;
    const signIn = async (email: string, password: string) => {
      const r = await call(
        `${url}/api/v1/auth/login`,
        jsonPost({ email, password }, { 'X-Forwarded-For': nextAddress() }),
      );
      expect(r.status, r.text).to.equal(200);
      return decodeTokens(r.json).accessToken;
    };
    const admin = await signIn(ADMIN_EMAIL, ADMIN_PASSWORD);
    const students = await call(`${url}/api/v1/students`, {
      headers: { Authorization: `Bearer ${admin}`, 'X-Device-Id': DEVICE_ID },
    });
    const studentId = decodeAs(t.type({ items: t.array(t.type({ studentId: t.string })) }), students.json)
      .items[0]?.studentId;
    const ids: Record<string, string> = {
      nucleusId: roster.nucleusId,
      classId: roster.classIds[0] ?? randomUUID(),
      sessionId: roster.sessionIds[0] ?? randomUUID(),
      studentId: studentId ?? randomUUID(),
    };
    const callers: Caller[] = [
      { label: 'anonymous', token: null },
      { label: 'JWT ADMIN', token: admin, role: 'ADMIN' },
    ];
    const password = 'a matrix password 123';
    for (const role of SYSTEM_ROLES.filter((r) => r !== 'ADMIN')) {
      const email = `${role.toLowerCase()}@chamada.test`;
      await createUser(url, admin, { email, displayName: role, roles: [role], password });
      callers.push({ label: `JWT ${role}`, token: await signIn(email, password), role });
    }
    for (const permission of PERMISSIONS) {
      const name = `ONLY_${permission.toUpperCase().replace('.', '_')}`;
      const r = await call(`${url}/api/v1/roles`, {
        method: 'POST',
        headers: mutationHeaders(admin),
        body: JSON.stringify({ name, display_name: name, permissions: [permission] }),
      });
      expect(r.status, r.text).to.equal(201);
      const email = `${name.toLowerCase()}@chamada.test`;
      await createUser(url, admin, { email, displayName: name, roles: [name], password });
      callers.push({
        label: `JWT custom role with ${permission}`,
        token: await signIn(email, password),
        permission,
      });
    }
    const result = await runMatrix(url, callers, ids);
    figure(
      'authz matrix',
      summary('JWT', result, callers.length, ((Date.now() - started) / 1000).toFixed(1)),
    );
    expect(result.mismatches, result.mismatches.join('\n')).to.deep.equal([]);
    expect(result.cells).to.equal(routes.length * callers.length);
  });
});
