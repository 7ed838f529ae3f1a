/** The pickup list (N1, N2 with one-time-code verification) and temporary pickup authorisations (N3). */
import * as E from 'fp-ts/lib/Either.js';
import type { PickupEntryView } from '../../attendance/pickupService.js';
import {
  AddPickupAdultBody,
  CreateGrantBody,
  Grant,
  type GrantDoc,
  GrantList,
  GrantParams,
  PickupEntry,
  PickupList,
  PickupParams,
  RevokeGrantBody,
  StudentGrantParams,
  VerifyPickupBody,
} from '../../domain/pickup.js';
import { grantActive } from '../../rules/checkin.js';
import { actorOf } from '../actor.js';
import { defineRoute } from '../route.js';

const grantView = (g: GrantDoc, now: Date) => ({
  authorizationId: g.authorizationId,
  studentId: g.studentId,
  authorized_by_pickup_id: g.authorized_by_pickup_id,
  authorized_by: g.authorized_by,
  created_by: g.created_by,
  relationship: g.relationship,
  adultName: g.adultName,
  phoneSuffix: g.phone === null ? null : g.phone.replace(/\D/g, '').slice(-4),
  valid_from: g.valid_from,
  valid_until: g.valid_until,
  active: grantActive({ validFrom: g.valid_from, validUntil: g.valid_until, revokedAt: g.revokedAt }, now),
  revokedAt: g.revokedAt,
});

export const listPickupRoute = defineRoute({
  operationId: 'getPickupList',
  method: 'get',
  path: '/api/v1/students/{studentId}/pickup-list',
  auth: 'chamador',
  permission: 'attendance',
  summary: 'Who may collect the child (N1 guardians, N2 verified adults)',
  tags: ['pickup'],
  params: StudentGrantParams,
  response: { status: 200, description: 'The list; phones as their last 4 digits.', codec: PickupList },
  errors: ['NOT_FOUND'],
  auditRead: 'READ_SENSITIVE',
  handler: async ({ params, deps }) =>
    E.map((items: PickupEntryView[]) => ({ body: { items }, auditSubjectId: params.studentId }))(
      await deps.attendance.pickups.list(params.studentId),
    ),
});

export const addPickupRoute = defineRoute({
  operationId: 'addPickupAdult',
  method: 'post',
  path: '/api/v1/students/{studentId}/pickup-list',
  auth: 'cadastro',
  permission: 'students.add',
  summary: 'Add an adult (N2); a one-time code is sent to their phone',
  description: 'The entry stays PENDING_VERIFICATION until the code is confirmed (10 minutes, 5 tries).',
  tags: ['pickup'],
  params: StudentGrantParams,
  body: AddPickupAdultBody,
  response: { status: 201, description: 'The pending entry.', codec: PickupEntry },
  errors: ['NOT_FOUND', 'CONFLICT'],
  handler: async (ctx) => {
    const actor = actorOf(ctx);
    if (E.isLeft(actor)) return actor;
    const added = await ctx.deps.attendance.pickups.addAdult(actor.right, ctx.params.studentId, ctx.body);
    return E.map((body: PickupEntryView) => ({ status: 201, body, auditSubjectId: ctx.params.studentId }))(
      added,
    );
  },
});

export const verifyPickupRoute = defineRoute({
  operationId: 'verifyPickupAdult',
  method: 'post',
  path: '/api/v1/students/{studentId}/pickup-list/{pickupId}/verify',
  auth: 'cadastro',
  permission: 'students.add',
  summary: 'Confirm an N2 adult with the code sent to their phone',
  tags: ['pickup'],
  params: PickupParams,
  body: VerifyPickupBody,
  response: { status: 200, description: 'The entry, now ACTIVE.', codec: PickupEntry },
  errors: ['NOT_FOUND', 'CONFLICT'],
  handler: async (ctx) => {
    const actor = actorOf(ctx);
    if (E.isLeft(actor)) return actor;
    const verified = await ctx.deps.attendance.pickups.verify(
      actor.right,
      ctx.params.studentId,
      ctx.params.pickupId,
      ctx.body.code,
    );
    return E.map((body: PickupEntryView) => ({ body }))(verified);
  },
});

export const listGrantsRoute = defineRoute({
  operationId: 'listPickupAuthorizations',
  method: 'get',
  path: '/api/v1/students/{studentId}/pickup-authorizations',
  auth: 'chamador',
  permission: 'attendance',
  summary: 'Temporary pickup authorisations (N3) of a child',
  tags: ['pickup'],
  params: StudentGrantParams,
  response: { status: 200, description: 'Every grant, with whether it is active now.', codec: GrantList },
  errors: ['NOT_FOUND'],
  handler: async ({ params, deps }) =>
    E.map((grants: GrantDoc[]) => ({ body: { items: grants.map((g) => grantView(g, deps.clock())) } }))(
      await deps.attendance.pickups.grants(params.studentId),
    ),
});

export const createGrantRoute = defineRoute({
  operationId: 'createPickupAuthorization',
  method: 'post',
  path: '/api/v1/students/{studentId}/pickup-authorizations',
  auth: 'chamador',
  permission: 'attendance',
  summary: 'Grant an adult a temporary pickup authorisation (N3)',
  description:
    "`authorized_by_pickup_id` must be an ACTIVE entry of the same child's list. Default window: now to the end of the UTC day; " +
    'an explicit window is at most 7 days. Appends an AUTHORIZED_PICKUP event.',
  tags: ['pickup'],
  params: StudentGrantParams,
  body: CreateGrantBody,
  response: { status: 201, description: 'The grant.', codec: Grant },
  errors: ['NOT_FOUND', 'CONFLICT'],
  handler: async (ctx) => {
    const actor = actorOf(ctx);
    if (E.isLeft(actor)) return actor;
    const created = await ctx.deps.attendance.pickups.createGrant(
      actor.right,
      ctx.params.studentId,
      ctx.body,
    );
    return E.map((g: GrantDoc) => ({
      status: 201,
      body: grantView(g, ctx.deps.clock()),
      auditSubjectId: g.studentId,
    }))(created);
  },
});

export const revokeGrantRoute = defineRoute({
  operationId: 'revokePickupAuthorization',
  method: 'post',
  path: '/api/v1/pickup-authorizations/{authorizationId}/revoke',
  auth: 'chamador',
  permission: 'attendance',
  summary: 'Revoke a temporary pickup authorisation, with a justification',
  tags: ['pickup'],
  params: GrantParams,
  body: RevokeGrantBody,
  response: { status: 200, description: 'The revoked grant.', codec: Grant },
  errors: ['NOT_FOUND', 'CONFLICT'],
  handler: async (ctx) => {
    const actor = actorOf(ctx);
    if (E.isLeft(actor)) return actor;
    const revoked = await ctx.deps.attendance.pickups.revokeGrant(
      actor.right,
      ctx.params.authorizationId,
      ctx.body.justification,
    );
    return E.map((g: GrantDoc) => ({ body: grantView(g, ctx.deps.clock()), auditSubjectId: g.studentId }))(
      revoked,
    );
  },
});

export const pickupRoutes = [
  listPickupRoute,
  addPickupRoute,
  verifyPickupRoute,
  listGrantsRoute,
  createGrantRoute,
  revokeGrantRoute,
];
