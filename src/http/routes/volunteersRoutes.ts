/** Volunteers checked in to a session's room and out again: the admission rule's ratio counts them. */
import * as E from 'fp-ts/lib/Either.js';
import {
  AddVolunteerBody,
  MAX_VOLUNTEERS_LISTED,
  SessionVolunteersParams,
  toVolunteer,
  Volunteer,
  VolunteerList,
  VolunteerParams,
} from '../../domain/volunteers.js';
import { actorOf } from '../actor.js';
import { defineRoute } from '../route.js';

export const addVolunteerRoute = defineRoute({
  operationId: 'addVolunteer',
  method: 'post',
  path: '/api/v1/sessions/{sessionId}/volunteers',
  auth: 'chamador',
  permission: 'attendance',
  summary: "Check a volunteer in to a session's room",
  description:
    "A staff user (`userId`) or a helper without an account (`name`). Those in the room count towards the class's " +
    'ratio of children per volunteer (`RATIO_EXCEEDED` at check-in) and appear in the headcount. An unknown session ' +
    'is 404; a user already in the room 409 with `details.reason: "ALREADY_IN_ROOM"`.',
  tags: ['check-in'],
  params: SessionVolunteersParams,
  body: AddVolunteerBody,
  response: { status: 201, description: 'The volunteer, in the room.', codec: Volunteer },
  errors: ['NOT_FOUND', 'CONFLICT'],
  handler: async (ctx) => {
    const actor = actorOf(ctx);
    if (E.isLeft(actor)) return actor;
    const added = await ctx.deps.attendance.volunteers.add(actor.right, ctx.params.sessionId, ctx.body);
    if (E.isLeft(added)) return added;
    return E.right({
      status: 201,
      auditDetails: { sessionId: added.right.sessionId, volunteerId: added.right.volunteerId },
      body: toVolunteer(added.right),
    });
  },
});

export const listVolunteersRoute = defineRoute({
  operationId: 'listVolunteers',
  method: 'get',
  path: '/api/v1/sessions/{sessionId}/volunteers',
  auth: 'chamador',
  permission: 'attendance',
  summary: "The volunteers of a session's room",
  description: 'Everyone who came, in the order they came; those still in the room have no `checkedOutAt`.',
  tags: ['check-in'],
  params: SessionVolunteersParams,
  response: { status: 200, description: 'The volunteers.', codec: VolunteerList },
  errors: ['NOT_FOUND'],
  handler: async ({ params, deps }) => {
    const found = await deps.attendance.volunteers.list(params.sessionId);
    if (E.isLeft(found)) return found;
    return E.right({ body: { items: found.right.slice(0, MAX_VOLUNTEERS_LISTED).map(toVolunteer) } });
  },
});

export const removeVolunteerRoute = defineRoute({
  operationId: 'removeVolunteer',
  method: 'delete',
  path: '/api/v1/sessions/{sessionId}/volunteers/{volunteerId}',
  auth: 'chamador',
  permission: 'attendance',
  summary: 'Check a volunteer out of the room',
  description:
    'The record stays, with `checkedOutAt`; the ratio no longer counts the volunteer. Unknown → 404; already left → ' +
    '409 with `details.reason: "ALREADY_LEFT"`.',
  tags: ['check-in'],
  params: VolunteerParams,
  response: { status: 200, description: 'The volunteer, gone from the room.', codec: Volunteer },
  errors: ['NOT_FOUND', 'CONFLICT'],
  handler: async (ctx) => {
    const actor = actorOf(ctx);
    if (E.isLeft(actor)) return actor;
    const left = await ctx.deps.attendance.volunteers.leave(
      actor.right,
      ctx.params.sessionId,
      ctx.params.volunteerId,
    );
    if (E.isLeft(left)) return left;
    return E.right({
      auditDetails: { sessionId: left.right.sessionId, volunteerId: left.right.volunteerId },
      body: toVolunteer(left.right),
    });
  },
});

export const volunteersRoutes = [addVolunteerRoute, listVolunteersRoute, removeVolunteerRoute];
