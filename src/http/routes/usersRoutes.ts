/** User administration (ADMIN): list, create, change, reset password, deactivate. */
import * as E from 'fp-ts/lib/Either.js';
import {
  CreateUserBody,
  DeactivateUserBody,
  PasswordReset,
  PatchUserBody,
  ResetPasswordBody,
  toUser,
  User,
  type UserDoc,
  UserIdParams,
  UserList,
} from '../../domain/user.js';
import { actorOf } from '../actor.js';
import { defineRoute } from '../route.js';

const asUser = E.map((u: UserDoc) => ({ body: toUser(u) }));

export const listUsersRoute = defineRoute({
  operationId: 'listUsers',
  method: 'get',
  path: '/api/v1/users',
  auth: 'admin',
  summary: 'Every user, ordered by email',
  description: 'Teams are small, so the list is not paged.',
  tags: ['users'],
  response: { status: 200, description: 'The users.', codec: UserList },
  handler: async ({ deps }) => E.right({ body: { items: (await deps.auth.users.list()).map(toUser) } }),
});

export const createUserRoute = defineRoute({
  operationId: 'createUser',
  method: 'post',
  path: '/api/v1/users',
  auth: 'admin',
  summary: 'Create a user',
  description:
    'Emails are unique, case-insensitively (409 otherwise). Roles must exist; `primaryRole` defaults to the first.',
  tags: ['users'],
  body: CreateUserBody,
  response: { status: 201, description: 'The new user.', codec: User, headers: { Location: 'the user' } },
  errors: ['CONFLICT'],
  handler: async (ctx) => {
    const actor = actorOf(ctx);
    if (E.isLeft(actor)) return actor;
    const created = await ctx.deps.auth.users.create(actor.right, ctx.body);
    return E.map((u: UserDoc) => ({
      status: 201,
      headers: { Location: `/api/v1/users/${u.userId}` },
      body: toUser(u),
    }))(created);
  },
});

export const patchUserRoute = defineRoute({
  operationId: 'updateUser',
  method: 'patch',
  path: '/api/v1/users/{userId}',
  auth: 'admin',
  summary: 'Change email, display name or roles',
  description:
    'Removing ADMIN from the last active ADMIN is refused with 409 (`details.reason` LAST_ACTIVE_ADMIN).',
  tags: ['users'],
  params: UserIdParams,
  body: PatchUserBody,
  response: { status: 200, description: 'The updated user.', codec: User },
  errors: ['NOT_FOUND', 'CONFLICT'],
  handler: async (ctx) => {
    const actor = actorOf(ctx);
    if (E.isLeft(actor)) return actor;
    return asUser(await ctx.deps.auth.users.patch(actor.right, ctx.params.userId, ctx.body));
  },
});

export const resetPasswordRoute = defineRoute({
  operationId: 'resetUserPassword',
  method: 'post',
  path: '/api/v1/users/{userId}/reset-password',
  auth: 'admin',
  summary: 'Set a new password chosen by the ADMIN',
  description: 'Every session of the user is revoked. The password never appears in a response.',
  tags: ['users'],
  params: UserIdParams,
  body: ResetPasswordBody,
  response: { status: 200, description: 'Reset.', codec: PasswordReset },
  errors: ['NOT_FOUND', 'CONFLICT'],
  handler: async (ctx) => {
    const actor = actorOf(ctx);
    if (E.isLeft(actor)) return actor;
    const reset = await ctx.deps.auth.users.resetPassword(actor.right, ctx.params.userId, ctx.body.password);
    return E.map((r: { user: UserDoc; sessionsRevoked: number }) => ({
      body: {
        userId: r.user.userId,
        passwordChangedAt: r.user.passwordChangedAt,
        sessionsRevoked: r.sessionsRevoked,
      },
    }))(reset);
  },
});

export const deactivateUserRoute = defineRoute({
  operationId: 'deactivateUser',
  method: 'post',
  path: '/api/v1/users/{userId}/deactivate',
  auth: 'admin',
  summary: 'Deactivate a user (soft; never deleted)',
  description:
    'Revokes every session of the user at once. The last active ADMIN cannot be deactivated (409); a second ' +
    'deactivation is 409 too. The body is optional.',
  tags: ['users'],
  params: UserIdParams,
  body: DeactivateUserBody,
  bodyOptional: true,
  response: { status: 200, description: 'The deactivated user.', codec: User },
  errors: ['NOT_FOUND', 'CONFLICT'],
  handler: async (ctx) => {
    const actor = actorOf(ctx);
    if (E.isLeft(actor)) return actor;
    return asUser(await ctx.deps.auth.users.deactivate(actor.right, ctx.params.userId, ctx.body.reason));
  },
});

export const usersRoutes = [
  listUsersRoute,
  createUserRoute,
  patchUserRoute,
  resetPasswordRoute,
  deactivateUserRoute,
];
