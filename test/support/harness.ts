/**
 * The one way a test starts, signs in to and seeds the service in-process (design-docs/architecture.md, "Tests: what a new test file calls").
 *
 *   const h = useService();                      // started before the file's tests, stopped after them
 *   const h = useService({ env }, 'test');       // a fresh service for every test
 *   await h.get('/api/v1/classes', TOKENS.CHAMADOR);
 *   await h.send('POST', '/api/v1/classes', { name: 'Maternal' });   // as ADMIN, with a fresh Idempotency-Key
 *   const roster = await h.seedRoster({ students: ['Ana', 'Bia'] });
 *
 * Tests that need the service as a process (a hard stop, a crash) start the built bundle through
 * `mainProcess.ts` / `serviceBundle.ts` instead; the browser tests share `kioskE2e.ts`.
 */
import { type CouchServer, startCouchServer } from './couchServer.js';
import { fixture, type Scope } from './hooks.js';
import type { HttpResult } from './http.js';
import { call } from './http.js';
import { type Roster, type RosterSpec, seedRoster } from './seed.js';
import {
  authHeaders,
  DEV_TOKENS,
  mutate,
  startTestService,
  type TestService,
  type TestServiceOptions,
} from './testService.js';

/** The development tokens by the role each signs in as (AUTH_MODE=dev). */
export const TOKENS = {
  ADMIN: DEV_TOKENS.DEV_ADMIN_TOKEN,
  CHAMADOR: DEV_TOKENS.DEV_CALLER_TOKEN,
  RELATORIOS: DEV_TOKENS.DEV_REPORTS_TOKEN,
  CADASTRO: DEV_TOKENS.DEV_CADASTRO_TOKEN,
} as const;

/** Requests as one caller: its token unless another is named. */
export interface Client {
  get(path: string, token?: string): Promise<HttpResult>;
  send(method: string, path: string, body?: unknown, token?: string): Promise<HttpResult>;
  post(path: string, body?: unknown, token?: string): Promise<HttpResult>;
}

export interface ServiceHarness {
  /** The running service; read inside a test or hook, never at describe time. */
  readonly svc: TestService;
  readonly url: string;
  /** A GET with the token's headers (ADMIN when none is named). */
  get(path: string, token?: string): Promise<HttpResult>;
  /** A mutation as clients send it: a fresh Idempotency-Key, a JSON body, ADMIN when no token is named. */
  send(method: string, path: string, body?: unknown, token?: string): Promise<HttpResult>;
  /** The requests above with `token` as the default caller (`const { post } = h.as(TOKENS.CHAMADOR)`). */
  as(token: string): Client;
  /** A nucleus (when asked for), a class, a session and students with guardians, made through the API. */
  seedRoster(spec?: RosterSpec): Promise<Roster>;
}

/** The harness over a service some other code started (a test that starts two, or restarts one). */
export const harnessOf = (current: () => TestService): ServiceHarness => {
  const as = (caller: string): Client => ({
    get: (path, token = caller) => call(`${current().url}${path}`, { headers: authHeaders(token) }),
    send: (method, path, body, token = caller) => mutate(`${current().url}${path}`, method, body, token),
    post: (path, body, token = caller) => mutate(`${current().url}${path}`, 'POST', body, token),
  });
  const admin = as(TOKENS.ADMIN);
  return {
    get svc() {
      return current();
    },
    get url() {
      return current().url;
    },
    get: admin.get,
    send: admin.send,
    as,
    seedRoster: (spec) => seedRoster(current().url, spec),
  };
};

/**
 * Starts the service in the enclosing `describe`'s mocha hooks: once for its tests (`'file'`), or
 * once per test (`'test'`) where the tests must not see each other's writes. `options` may be a
 * function, run when the service starts (to reset a clock, or start a fake the service calls).
 */
export const useService = (
  options: TestServiceOptions | (() => TestServiceOptions | Promise<TestServiceOptions>) = {},
  scope: Scope = 'file',
): ServiceHarness => {
  const current = fixture(
    scope,
    async () => startTestService(typeof options === 'function' ? await options() : options),
    (svc) => svc.dispose(),
  );
  return harnessOf(current);
};

/**
 * `useService` on a CouchDB-protocol server of its own (express-pouchdb, or the real CouchDB of
 * `npm run test:couchdb`), started before the service; `couch()` stops and restarts it. The server is
 * restarted (when a test left it stopped) before the service stops, and disposed after.
 */
export const useServiceOnCouch = (
  options: TestServiceOptions = {},
  scope: Scope = 'file',
): { readonly h: ServiceHarness; readonly couch: () => CouchServer } => {
  const current = fixture(
    scope,
    async () => {
      const couch = await startCouchServer();
      const svc = await startTestService({ ...options, env: { ...options.env, COUCHDB_URL: couch.url } });
      return { couch, svc };
    },
    async ({ couch, svc }) => {
      await couch.restart();
      await svc.dispose();
      await couch.dispose();
    },
  );
  return { h: harnessOf(() => current().svc), couch: () => current().couch };
};
