/**
 * Routes that exist only in tests, to exercise the shared plumbing (auth classes, validation, error
 * handling, graceful stop) before the real endpoints that use it exist. They are appended to the real
 * registry, so the real middleware and router serve them.
 */
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import { boundedString, object, Uuid } from '../../src/domain/codec.js';
import { routes } from '../../src/http/registry.js';
import { defineRoute, type Route } from '../../src/http/route.js';
import { AUTH_CLASSES } from '../../src/rules/authorization.js';

const Whoami = object('ProbeWhoami', {
  userId: t.union([t.string, t.null]),
  roles: t.array(t.string),
  deviceId: t.union([t.string, t.null]),
});

const whoamiRoutes = AUTH_CLASSES.map((auth) =>
  defineRoute({
    operationId: `probe_${auth}`,
    method: 'get',
    path: `/api/v1/_probe/${auth}`,
    auth,
    summary: `probe for auth class ${auth}`,
    tags: ['probe'],
    response: { status: 200, description: 'who called', codec: Whoami },
    handler: async ({ principal, deviceId }) =>
      E.right({
        body: { userId: principal?.userId ?? null, roles: [...(principal?.roles ?? [])], deviceId },
      }),
  }),
);

const EchoBody = object('ProbeEchoBody', { displayName: boundedString(1, 80) }, { classId: Uuid });

export const echoRoute = defineRoute({
  operationId: 'probe_echo',
  method: 'post',
  path: '/api/v1/_probe/echo/{itemId}',
  auth: 'bearer',
  summary: 'echoes a validated body',
  tags: ['probe'],
  params: object('ProbeEchoParams', { itemId: Uuid }),
  query: object('ProbeEchoQuery', {}, { verbose: t.keyof({ yes: null, no: null }) }),
  body: EchoBody,
  response: { status: 201, description: 'echo', codec: EchoBody, headers: { Location: 'where it is' } },
  handler: async ({ body, params }) =>
    E.right({ status: 201, headers: { Location: `/api/v1/_probe/echo/${params.itemId}` }, body }),
});

export const boomRoute = defineRoute({
  operationId: 'probe_boom',
  method: 'get',
  path: '/api/v1/_probe/boom',
  auth: 'none',
  summary: 'throws',
  tags: ['probe'],
  response: { status: 200, description: 'never', codec: t.null },
  handler: async () => {
    throw new Error('internal detail: /secret/path and João');
  },
});

export const slowRoute = (ms: number): Route =>
  defineRoute({
    operationId: 'probe_slow',
    method: 'get',
    path: '/api/v1/_probe/slow',
    auth: 'none',
    summary: 'answers after a delay',
    tags: ['probe'],
    response: { status: 200, description: 'done', codec: object('ProbeSlow', { done: t.boolean }) },
    handler: async () => {
      await new Promise((r) => setTimeout(r, ms));
      return E.right({ body: { done: true } });
    },
  });

export const probeRoutes = (extra: ReadonlyArray<Route> = []): ReadonlyArray<Route> => [
  ...routes,
  ...whoamiRoutes,
  echoRoute,
  boomRoute,
  ...extra,
];
