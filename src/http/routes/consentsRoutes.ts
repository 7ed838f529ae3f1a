/** Image consents: record, read with history, revoke once. */
import * as E from 'fp-ts/lib/Either.js';
import {
  Consent,
  type ConsentDoc,
  ConsentHistory,
  ConsentIdParams,
  ConsentQuery,
  CreateConsentBody,
  RevokeConsentBody,
  revocationReasonOf,
  toConsent,
} from '../../domain/consent.js';
import { actorOf } from '../actor.js';
import { defineRoute } from '../route.js';

export const createConsentRoute = defineRoute({
  operationId: 'createImageConsent',
  method: 'post',
  path: '/api/v1/image-consents',
  auth: 'bearer',
  summary: 'Record an image consent',
  description:
    'The term text is frozen into the record; `verified_by_user_id` is the caller. Re-consent after a revocation is a new ' +
    "record. For a student, the consent becomes the student's `imageConsentId` and lets photos be stored and served.",
  tags: ['image-consents'],
  body: CreateConsentBody,
  response: {
    status: 201,
    description: 'The recorded consent.',
    codec: Consent,
    headers: { Location: 'the consent' },
  },
  handler: async (ctx) => {
    const actor = actorOf(ctx);
    if (E.isLeft(actor)) return actor;
    const created = await ctx.deps.registration.consents.record(actor.right, ctx.body);
    return E.map((c: ConsentDoc) => ({
      status: 201,
      headers: { Location: `/api/v1/image-consents?subjectType=${c.subject_type}&subjectId=${c.subject_id}` },
      auditSubjectId: c.subject_id,
      body: toConsent(c),
    }))(created);
  },
});

export const listConsentsRoute = defineRoute({
  operationId: 'getImageConsents',
  method: 'get',
  path: '/api/v1/image-consents',
  auth: 'bearer',
  summary: "Current state and full history of a subject's image consents",
  tags: ['image-consents'],
  query: ConsentQuery,
  response: { status: 200, description: 'Current and history.', codec: ConsentHistory },
  handler: async ({ query, deps }) => {
    const { current, history } = await deps.registration.consents.history(query.subjectType, query.subjectId);
    return E.right({
      body: {
        subjectType: query.subjectType,
        subjectId: query.subjectId,
        current: current === null ? null : toConsent(current),
        history: history.map(toConsent),
      },
    });
  },
});

export const revokeConsentRoute = defineRoute({
  operationId: 'revokeImageConsent',
  method: 'post',
  path: '/api/v1/image-consents/{consentId}/revoke',
  auth: 'admin',
  summary: 'Revoke an image consent (once)',
  description:
    "Sets the revocation fields once; the student's photo references stop being served at once. A second revoke is 409. " +
    'Body: `revocation_reason` (3 to 500 characters); `reason` is its deprecated alias.',
  tags: ['image-consents'],
  params: ConsentIdParams,
  body: RevokeConsentBody,
  response: { status: 200, description: 'The revoked consent.', codec: Consent },
  errors: ['NOT_FOUND', 'CONFLICT'],
  handler: async (ctx) => {
    const actor = actorOf(ctx);
    if (E.isLeft(actor)) return actor;
    const revoked = await ctx.deps.registration.consents.revoke(
      actor.right,
      ctx.params.consentId,
      revocationReasonOf(ctx.body),
    );
    return E.map((c: ConsentDoc) => ({ body: toConsent(c), auditSubjectId: c.subject_id }))(revoked);
  },
});

export const consentsRoutes = [createConsentRoute, listConsentsRoute, revokeConsentRoute];
