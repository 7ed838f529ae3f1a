import { randomUUID } from 'node:crypto';
/**
 * Routes that exist only in tests, to exercise the shared plumbing (auth classes, validation, error
 * handling, graceful stop) before the real endpoints that use it exist. They are appended to the real
 * registry, so the real middleware and router serve them.
 */
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import { boundedString, object, Uuid } from '../../src/domain/codec.js';
import { apiError } from '../../src/domain/errors.js';
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

/** Mutating probe routes that count their side effects, for the idempotency tests. */
export interface SideEffects {
  items: number;
  flaky: number;
  missing: number;
}

const ItemBody = object('ProbeItemBody', { name: t.string });
const Item = object('ProbeItem', { itemId: t.string, name: t.string, n: t.number });

/** `gate`, when given, is awaited by the item creation after it counted: a handler that runs as long as a test wants. */
export const countingRoutes = (
  effects: SideEffects,
  delayMs = 0,
  gate?: () => Promise<void>,
): ReadonlyArray<Route> => [
  defineRoute({
    operationId: 'probe_createItem',
    method: 'post',
    path: '/api/v1/_probe/items',
    auth: 'chamador',
    summary: 'creates an item (counts)',
    tags: ['probe'],
    body: ItemBody,
    response: { status: 201, description: 'created', codec: Item, headers: { Location: 'the item' } },
    handler: async ({ body }) => {
      effects.items += 1;
      const n = effects.items;
      if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
      await gate?.();
      const itemId = randomUUID();
      return E.right({
        status: 201,
        headers: { Location: `/api/v1/_probe/items/${itemId}` },
        body: { itemId, name: body.name, n },
      });
    },
  }),
  defineRoute({
    operationId: 'probe_flaky',
    method: 'post',
    path: '/api/v1/_probe/flaky',
    auth: 'bearer',
    summary: 'fails the first time (counts)',
    tags: ['probe'],
    body: ItemBody,
    response: { status: 200, description: 'ok', codec: object('ProbeFlaky', { attempt: t.number }) },
    handler: async () => {
      effects.flaky += 1;
      if (effects.flaky === 1) throw new Error('store fell over');
      return E.right({ body: { attempt: effects.flaky } });
    },
  }),
  defineRoute({
    operationId: 'probe_missing',
    method: 'patch',
    path: '/api/v1/_probe/missing/{itemId}',
    auth: 'bearer',
    summary: 'answers 404 (counts)',
    tags: ['probe'],
    params: object('ProbeMissingParams', { itemId: t.string }),
    body: ItemBody,
    response: { status: 200, description: 'never', codec: t.null },
    errors: ['NOT_FOUND'],
    handler: async () => {
      effects.missing += 1;
      return E.left(apiError('NOT_FOUND', 'No such item.'));
    },
  }),
];

/** A chamador route that custom roles with the `attendance` permission may also use. */
export const attendanceProbeRoute = defineRoute({
  operationId: 'probe_attendance',
  method: 'get',
  path: '/api/v1/_probe/attendance',
  auth: 'chamador',
  permission: 'attendance',
  summary: 'attendance-gated probe',
  tags: ['probe'],
  response: {
    status: 200,
    description: 'who called',
    codec: object('ProbeAttendance', { userId: t.string }),
  },
  handler: async ({ principal }) => E.right({ body: { userId: principal?.userId ?? '' } }),
});
