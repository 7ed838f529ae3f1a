/** Roles (ADMIN): the four system roles plus custom roles granting a subset of the permissions. */
import * as E from 'fp-ts/lib/Either.js';
import { apiError } from '../../domain/errors.js';
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

const notFound = () => apiError('NOT_FOUND', 'No such role.');
const systemRole = () =>
  apiError('CONFLICT', 'System roles cannot be changed or deleted.', { reason: 'SYSTEM_ROLE' });

export const listRolesRoute = defineRoute({
  operationId: 'listRoles',
  method: 'get',
  path: '/api/v1/roles',
  auth: 'admin',
  summary: 'Every role',
  tags: ['roles'],
  response: { status: 200, description: 'The roles.', codec: RoleList },
  handler: async ({ deps }) => E.right({ body: { items: (await deps.auth.roleStore.list()).map(toRole) } }),
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
  handler: async ({ body, deps }) => {
    const now = deps.clock().toISOString();
    const created = await deps.auth.roleStore.create({
      name: body.name,
      display_name: body.display_name,
      permissions: [...new Set(body.permissions ?? [])],
      is_system: 0,
      created_at: now,
      updated_at: now,
    });
    if (created === 'EXISTS')
      return E.left(apiError('CONFLICT', 'A role with this name exists.', { reason: 'ROLE_EXISTS' }));
    return E.right({
      status: 201,
      headers: { Location: `/api/v1/roles/${created.name}` },
      body: toRole(created),
    });
  },
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
  handler: async ({ params, body, deps }) => {
    const current = await deps.auth.roleStore.get(params.name);
    if (current === undefined) return E.left(notFound());
    if (current.is_system === 1) return E.left(systemRole());
    const updated = await deps.auth.roleStore.update(current, {
      name: current.name,
      display_name: body.display_name ?? current.display_name,
      permissions: body.permissions === undefined ? current.permissions : [...new Set(body.permissions)],
      is_system: 0,
      created_at: current.created_at,
      updated_at: deps.clock().toISOString(),
    });
    if (updated === 'CONFLICT')
      return E.left(apiError('CONFLICT', 'The role changed while this request ran; try again.'));
    return E.right({ body: toRole(updated) });
  },
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
  handler: async ({ params, deps }) => {
    const current: RoleDoc | undefined = await deps.auth.roleStore.get(params.name);
    if (current === undefined) return E.left(notFound());
    if (current.is_system === 1) return E.left(systemRole());
    const holders = (await deps.auth.userStore.list()).filter((u) => u.roles.includes(current.name));
    if (holders.length > 0) {
      return E.left(
        apiError('CONFLICT', 'Users hold this role; take it from them first.', {
          reason: 'ROLE_IN_USE',
          holders: holders.length,
        }),
      );
    }
    const removed = await deps.auth.roleStore.remove(current);
    if (removed === 'CONFLICT')
      return E.left(apiError('CONFLICT', 'The role changed while this request ran; try again.'));
    return E.right({ body: { name: current.name, deleted: true as const } });
  },
});

export const rolesRoutes = [listRolesRoute, createRoleRoute, patchRoleRoute, deleteRoleRoute];
