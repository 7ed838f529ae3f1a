/**
 * Reliability row "mass assignment": every PATCH and PUT route of the registry gets an allowed
 * change plus one protected field at a time (store internals such as `_id`, `_rev`, `docType`;
 * server-kept fields such as ids, timestamps, status, versions, secrets; `roles` where the body
 * does not offer it; prototype keys). Criterion: either 400 in the envelope naming the field, with
 * the resource read back unchanged, or a success with every protected field still as it was.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import { BytesType } from '../../src/domain/codec.js';
import { routes } from '../../src/http/registry.js';
import type { Route } from '../../src/http/route.js';
import { TOKENS, useService } from '../support/harness.js';
import { call, decodeAs, type HttpResult } from '../support/http.js';
import { seedSmallRoster } from '../support/seed.js';
import { authHeaders, mutationHeaders } from '../support/testService.js';
import { figure } from './figures.js';
import { envelopeProblem, fieldsOf, routeName } from './securitySupport.js';

const FORGED_INSTANT = '2000-01-01T00:00:00.000Z';

/** Protected fields with hostile values, as raw JSON (so `__proto__` is an own key on the wire). */
const PROTECTED: ReadonlyArray<[string, string]> = [
  ['_id', '"student:forged"'],
  ['_rev', '"99-forged"'],
  ['_deleted', 'true'],
  ['_attachments', '{"x":{"content_type":"text/plain","data":"eA=="}}'],
  ['_conflicts', '["1-x"]'],
  ['id', JSON.stringify(randomUUID())],
  ['docType', '"user"'],
  ['version', '999'],
  ['createdAt', JSON.stringify(FORGED_INSTANT)],
  ['updatedAt', JSON.stringify(FORGED_INSTANT)],
  ['created_at', JSON.stringify(FORGED_INSTANT)],
  ['updated_at', JSON.stringify(FORGED_INSTANT)],
  ['deletedAt', JSON.stringify(FORGED_INSTANT)],
  ['deleted', 'true'],
  ['status', '"DELETED"'],
  ['roles', '["ADMIN"]'],
  ['primaryRole', '"ADMIN"'],
  ['role', '"ADMIN"'],
  ['permissions', '["attendance","reports"]'],
  ['is_system', '1'],
  ['name', '"FORGED_NAME"'],
  ['password', '"a forged password 123"'],
  ['passwordHash', '"pbkdf2:00:00"'],
  ['passwordChangedAt', JSON.stringify(FORGED_INSTANT)],
  ['userId', JSON.stringify(randomUUID())],
  ['studentId', JSON.stringify(randomUUID())],
  ['classId', JSON.stringify(randomUUID())],
  ['sessionId', JSON.stringify(randomUUID())],
  ['nucleusId', JSON.stringify(randomUUID())],
  ['ownerId', JSON.stringify(randomUUID())],
  ['createdBy', '"dev-admin"'],
  ['checkin_secret', '"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"'],
  ['secret', '"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"'],
  ['deleted_justification', '"forged justification"'],
  ['imageConsentId', JSON.stringify(randomUUID())],
  ['visitor', 'true'],
  ['__proto__', '{"isAdmin":true,"status":"DELETED"}'],
  ['constructor', '{"prototype":{"isAdmin":true}}'],
];

/** How one PATCH/PUT route is exercised: its resource, an allowed change, and how to read it back. */
interface Subject {
  readonly path: string;
  readonly allowed: Record<string, unknown>;
  read(): Promise<Record<string, unknown>>;
}

const Issues = t.type({
  error: t.type({ code: t.string, details: t.type({ issues: t.array(t.type({ path: t.string })) }) }),
});

describe('reliability: mass assignment', function () {
  this.timeout(120_000);
  const h = useService({ env: { RATE_LIMIT_REQUESTS: '0' } });
  const url = (p: string) => `${h.url}${p}`;
  const admin = TOKENS.ADMIN;
  const get = (p: string) => call(url(p), { headers: authHeaders(admin) });
  const post = async (p: string, body: unknown): Promise<unknown> => {
    const r = await call(url(p), {
      method: 'POST',
      headers: mutationHeaders(admin),
      body: JSON.stringify(body),
    });
    expect(r.status, `${p}: ${r.text}`).to.equal(201);
    return r.json;
  };
  /** The item of a `{ items }` list whose `key` is `id`. */
  const itemOf = async (list: string, key: string, id: string): Promise<Record<string, unknown>> => {
    const r = await get(list);
    const items = decodeAs(t.type({ items: t.array(t.UnknownRecord) }), r.json).items;
    const found = items.find((i) => i[key] === id);
    if (found === undefined) throw new Error(`${id} is not in ${list}`);
    return found;
  };
  const idOf = (json: unknown, key: string): string => decodeAs(t.type({ [key]: t.string }), json)[key] ?? '';

  const subjects = async (): Promise<Record<string, Subject>> => {
    const roster = await seedSmallRoster(h.url, ['Ana Souza']);
    const studentId = roster.studentIds[0] ?? '';
    const userId = idOf(
      await post('/api/v1/users', {
        email: 'mass@chamada.test',
        displayName: 'Mass',
        roles: ['CHAMADOR'],
        password: 'the original password 1',
      }),
      'userId',
    );
    const role = idOf(
      await post('/api/v1/roles', { name: 'MASS_ROLE', display_name: 'Mass', permissions: ['attendance'] }),
      'name',
    );
    const nucleusId = idOf(await post('/api/v1/nuclei', { name: 'Núcleo' }), 'nucleusId');
    const scheduleId = idOf(
      await post('/api/v1/schedules', {
        classId: roster.classId,
        weekdays: ['SUN'],
        localTime: '09:00',
        from: new Date().toISOString().slice(0, 10),
      }),
      'scheduleId',
    );
    const printerId = idOf(
      await post('/api/v1/printers', {
        name: 'Recepção',
        protocol: 'zpl',
        uri: 'tcp://localhost:9100',
        layout: 'brother62',
      }),
      'printerId',
    );
    return {
      updatePrinter: {
        path: `/api/v1/printers/${printerId}`,
        allowed: { name: 'Renamed' },
        read: async () => decodeAs(t.UnknownRecord, (await get(`/api/v1/printers/${printerId}`)).json),
      },
      updateSchedule: {
        path: `/api/v1/schedules/${scheduleId}`,
        allowed: { title: 'Renamed' },
        read: () => itemOf('/api/v1/schedules', 'scheduleId', scheduleId),
      },
      updateUser: {
        path: `/api/v1/users/${userId}`,
        allowed: { displayName: 'Renamed' },
        read: () => itemOf('/api/v1/users', 'userId', userId),
      },
      updateRole: {
        path: `/api/v1/roles/${role}`,
        allowed: { display_name: 'Renamed' },
        read: () => itemOf('/api/v1/roles', 'name', role),
      },
      updateNucleus: {
        path: `/api/v1/nuclei/${nucleusId}`,
        allowed: { name: 'Renamed' },
        read: () => itemOf('/api/v1/nuclei', 'nucleusId', nucleusId),
      },
      updateClass: {
        path: `/api/v1/classes/${roster.classId}`,
        allowed: { name: 'Renamed' },
        read: () => itemOf('/api/v1/classes', 'classId', roster.classId),
      },
      updateClassSession: {
        path: `/api/v1/sessions/${roster.sessionId}`,
        allowed: { title: 'Renamed' },
        read: () => itemOf('/api/v1/sessions', 'sessionId', roster.sessionId),
      },
      updateStudent: {
        path: `/api/v1/students/${studentId}`,
        allowed: { displayName: 'Renamed' },
        read: async () => decodeAs(t.UnknownRecord, (await get(`/api/v1/students/${studentId}`)).json),
      },
      updateCheckInConfig: {
        path: '/api/v1/church/check-in-config',
        allowed: { pickupMode: 'CODE_AND_ADULT', maxCheckoutAttempts: 7, emergencyCheckoutAdminOnly: true },
        // The day keys derive from the check-in secret: a forged secret would change them.
        read: async () => ({
          ...decodeAs(t.UnknownRecord, (await get('/api/v1/church/check-in-config')).json),
          dayKeys: decodeAs(t.UnknownRecord, (await get('/api/v1/church/check-in-day-keys')).json),
        }),
      },
      updateRetention: {
        path: '/api/v1/church/retention',
        allowed: { deletedStudentDays: 60, attendanceDays: 1000, pageDays: 30, auditDays: 2000 },
        read: async () => decodeAs(t.UnknownRecord, (await get('/api/v1/church/retention')).json),
      },
    };
  };

  before(async () => {
    // Every protected field on every route through one principal and device: far past a door's
    // traffic, so the per-device limit is off to let the requests reach the handlers.
  });

  it('refuses or ignores every protected field on every PATCH and PUT route', async () => {
    const started = Date.now();
    // A body of bytes (a photo, decision 0033) has no fields to assign; test/http/photos.test.ts covers it.
    const writeRoutes: Route[] = routes.filter(
      (r) => (r.method === 'patch' || r.method === 'put') && !(r.body instanceof BytesType),
    );
    const table = await subjects();
    // A new PATCH/PUT route must be added to the table above before this battery passes.
    expect(writeRoutes.map((r) => r.operationId).sort()).to.deep.equal(Object.keys(table).sort());

    const problems: string[] = [];
    let attempts = 0;
    let refused = 0;
    let ignored = 0;
    for (const route of writeRoutes) {
      const subject = table[route.operationId];
      if (subject === undefined) continue;
      const fields = fieldsOf(route.body);
      const offered = new Set([...(fields?.required ?? []), ...(fields?.optional ?? [])]);
      const send = (text: string): Promise<HttpResult> =>
        call(url(subject.path), {
          method: route.method.toUpperCase(),
          headers: mutationHeaders(admin),
          body: text,
        });
      for (const [field, raw] of PROTECTED.filter(([f]) => !offered.has(f))) {
        attempts += 1;
        const where = `${routeName(route)} + ${field}`;
        const before = await subject.read();
        const text = JSON.stringify(subject.allowed).replace(
          /\}$/,
          () => `,${JSON.stringify(field)}:${raw}}`,
        );
        const r = await send(text);
        const after = await subject.read();
        const problem = envelopeProblem({
          status: r.status,
          headers: Object.fromEntries(r.headers),
          text: r.text,
        });
        if (r.status >= 500 || problem !== undefined) {
          problems.push(`${where}: ${r.status} ${problem ?? ''} ${r.text.slice(0, 200)}`);
        } else if (r.status === 400) {
          const decoded = Issues.decode(r.json);
          const named =
            E.isRight(decoded) && decoded.right.error.details.issues.some((i) => i.path === `body.${field}`);
          if (!named)
            problems.push(`${where}: 400 without an issue at body.${field}: ${r.text.slice(0, 200)}`);
          if (JSON.stringify(after) !== JSON.stringify(before))
            problems.push(`${where}: refused, yet the resource changed`);
          refused += 1;
        } else if (r.status >= 200 && r.status < 300) {
          ignored += 1;
          const injected: unknown = JSON.parse(raw);
          const moved =
            Object.hasOwn(after, field) &&
            (JSON.stringify(after[field]) === JSON.stringify(injected) ||
              (Object.hasOwn(before, field) &&
                !/^updated_?[aA]t$/.test(field) &&
                JSON.stringify(after[field]) !== JSON.stringify(before[field])));
          if (moved)
            problems.push(`${where}: accepted and ${field} changed to ${JSON.stringify(after[field])}`);
          if (JSON.stringify(after.dayKeys) !== JSON.stringify(before.dayKeys))
            problems.push(`${where}: the day keys changed`);
        } else {
          problems.push(`${where}: ${r.status} ${r.text.slice(0, 200)}`);
        }
      }
      // Control: the allowed change alone lands, so the read-back above can see changes.
      const control = await call(url(subject.path), {
        method: route.method.toUpperCase(),
        headers: mutationHeaders(admin),
        body: JSON.stringify(subject.allowed),
      });
      expect(control.status, `${routeName(route)} control: ${control.text}`).to.equal(200);
      const now = await subject.read();
      for (const [k, v] of Object.entries(subject.allowed)) {
        expect(JSON.stringify(now[k]), `${routeName(route)} control reads back ${k}`).to.equal(
          JSON.stringify(v),
        );
      }
    }

    // The user's password and status went through none of the PATCHes above.
    const users = decodeAs(
      t.type({ items: t.array(t.type({ email: t.string, status: t.string })) }),
      (await get('/api/v1/users')).json,
    );
    expect(users.items.find((u) => u.email === 'mass@chamada.test')?.status).to.equal('ACTIVE');
    const login = (password: string) =>
      call(url('/api/v1/auth/login'), {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ email: 'mass@chamada.test', password }),
      });
    expect((await login('the original password 1')).status, 'the original password still signs in').to.equal(
      200,
    );
    expect((await login('a forged password 123')).status, 'the forged password does not').to.equal(401);

    figure(
      'mass assignment',
      `${writeRoutes.length} PATCH/PUT routes, ${attempts} protected-field attempts in ${((Date.now() - started) / 1000).toFixed(1)} s: ` +
        `${refused} refused with 400 naming the field (resource unchanged), ${ignored} accepted with the field ignored; ` +
        `${problems.length} problems`,
    );
    expect(problems, problems.join('\n')).to.deep.equal([]);
  });
});
