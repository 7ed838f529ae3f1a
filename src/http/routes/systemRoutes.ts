/** Public endpoints that describe the service itself: health, license, security.txt. */
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import { boundedArray, boundedString, IsoInstant, object } from '../../domain/codec.js';
import { apiError } from '../../domain/errors.js';
import { renderSecurityTxt } from '../../rules/securityTxt.js';
import { defineRoute } from '../route.js';

export const Health = object('Health', {
  status: t.literal('ok'),
  serverTime: IsoInstant,
});

export const License = object(
  'License',
  // LICENSE_MODULES' own bounds (src/config): at most 100 ids of at most 64 characters.
  { modules: boundedArray(boundedString(1, 64), 100) },
  {},
  { description: 'Entitled module ids (from LICENSE_MODULES); an empty list when unlicensed.' },
);

export const healthRoute = defineRoute({
  operationId: 'getHealth',
  method: 'get',
  path: '/api/v1/health',
  auth: 'none',
  summary: 'Liveness and store reachability',
  description:
    'Answers 200 `ok` when every database of the store answers within two seconds and none refuses ' +
    'writes, 503 otherwise: `details.store` is `failed` (with `details.databases`) while an embedded ' +
    'database refuses writes after an I/O error such as a full disk, until it is reopened on its own ' +
    'once space returns; `unreachable` when the store does not answer.',
  tags: ['system'],
  response: { status: 200, description: 'The service and its store are up.', codec: Health },
  errors: ['STORE_UNAVAILABLE'],
  handler: async ({ deps }) => {
    const failed = deps.health.failedDatabases();
    if (failed.length > 0)
      return E.left(
        apiError('STORE_UNAVAILABLE', 'A database refuses writes after an I/O error until it is reopened.', {
          store: 'failed',
          databases: [...failed],
        }),
      );
    return (await deps.health.ping())
      ? E.right({ body: { status: 'ok' as const, serverTime: deps.clock().toISOString() } })
      : E.left(apiError('STORE_UNAVAILABLE', undefined, { store: 'unreachable' }));
  },
});

export const licenseRoute = defineRoute({
  operationId: 'getLicense',
  method: 'get',
  path: '/api/v1/license',
  auth: 'none',
  summary: 'Entitled modules',
  tags: ['system'],
  response: { status: 200, description: 'The entitled module ids.', codec: License },
  handler: async ({ deps }) => E.right({ body: { modules: [...deps.config.licenseModules] } }),
});

export const securityTxtRoute = defineRoute({
  operationId: 'getSecurityTxt',
  method: 'get',
  path: '/.well-known/security.txt',
  auth: 'none',
  summary: 'Security contact (RFC 9116)',
  tags: ['system'],
  response: {
    status: 200,
    description: 'Two Contact lines, Expires one year after serving, Preferred-Languages.',
    // Contacts and a policy URL: a few hundred characters.
    codec: boundedString(0, 20_000),
    mediaType: 'text/plain',
  },
  handler: async ({ deps }) =>
    E.right({ body: renderSecurityTxt(deps.config.securityContacts, deps.clock()) }),
});
