import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import { openApiDocumentFor } from '../openapi/openApiDocument.js';
import { defineRoute } from '../route.js';

export const openApiRoute = defineRoute({
  operationId: 'getOpenApiDocument',
  method: 'get',
  path: '/api/v1/openapi.json',
  auth: 'none',
  summary: 'This OpenAPI 3.1 document',
  tags: ['system'],
  response: {
    status: 200,
    description: 'The OpenAPI document, generated from the route registry.',
    codec: t.UnknownRecord,
  },
  handler: async ({ routes }) => E.right({ body: openApiDocumentFor(routes) }),
});
