/** Roles (ADMIN): the four system roles plus custom roles granting a subset of the permissions. */
import * as E from 'fp-ts/lib/Either.js';
import {
  CreateRoleBody,
  PatchRoleBody,
  Role,
  RoleDeleted,
  type RoleDoc,
  RoleList,
  RoleNameParams,
  toRole,
} from '../../domain/role.js';
import { defineRoute } from '../route.js';

const asRole = E.map((r: RoleDoc) => ({ body: toRole(r) }));

export const listRolesRoute = defineRoute({
  operationId: 'listRoles',
  method: 'get',
  path: '/api/v1/roles',
  auth: 'admin',
  summary: 'Every role',
  tags: ['roles'],
  response: { status: 200, description: 'The roles.', codec: RoleList },
  handler: async ({ deps }) => E.right({ body: { items: (await deps.auth.roles.list()).map(toRole) } }),
});

export const createRoleRoute = defineRoute({
  operationId: 'createRole',
  method: 'post',
  path: '/api/v1/roles',
  auth: 'admin',
  summary: 'Create a custom role',
  tags: ['roles'],
  body: CreateRoleBody,
  response: { status: 201, description: 'The new role.', codec: Role, headers: { Location: 'the role' } },
  errors: ['CONFLICT'],
  handler: async ({ body, deps }) =>
    E.map((created: RoleDoc) => ({
      status: 201,
      headers: { Location: `/api/v1/roles/${created.name}` },
      body: toRole(created),
    }))(await deps.auth.roles.create(body)),
});

export const patchRoleRoute = defineRoute({
  operationId: 'updateRole',
  method: 'patch',
  path: '/api/v1/roles/{name}',
  auth: 'admin',
  summary: 'Change a custom role',
  tags: ['roles'],
  params: RoleNameParams,
  body: PatchRoleBody,
  response: { status: 200, description: 'The updated role.', codec: Role },
  errors: ['NOT_FOUND', 'CONFLICT'],
  handler: async ({ params, body, deps }) => asRole(await deps.auth.roles.patch(params.name, body)),
});

export const deleteRoleRoute = defineRoute({
  operationId: 'deleteRole',
  method: 'delete',
  path: '/api/v1/roles/{name}',
  auth: 'admin',
  summary: 'Delete a custom role nobody holds',
  description: 'System roles (409 SYSTEM_ROLE) and roles held by a user (409 ROLE_IN_USE) cannot be deleted.',
  tags: ['roles'],
  params: RoleNameParams,
  response: { status: 200, description: 'Deleted.', codec: RoleDeleted },
  errors: ['NOT_FOUND', 'CONFLICT'],
  handler: async ({ params, deps }) =>
    E.map((removed: RoleDoc) => ({ body: { name: removed.name, deleted: true as const } }))(
      await deps.auth.roles.remove(params.name),
    ),
});

export const rolesRoutes = [listRolesRoute, createRoleRoute, patchRoleRoute, deleteRoleRoute];
