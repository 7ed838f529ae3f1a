/**
 * Role administration: the four system roles stand as they are; custom roles grant a subset of the
 * permissions, and one that a user still holds cannot be deleted (the user would keep a name that
 * grants nothing).
 */
import * as E from 'fp-ts/lib/Either.js';
import type * as t from 'io-ts';
import { type ApiError, apiError } from '../domain/errors.js';
import type { CreateRoleBody, PatchRoleBody, RoleDoc } from '../domain/role.js';
import type { RoleStore } from '../store/roles.js';
import type { UserStore } from '../store/users.js';

export interface RoleServiceDeps {
  readonly roles: RoleStore;
  readonly users: UserStore;
  readonly clock: () => Date;
}

export interface RoleService {
  list(): Promise<RoleDoc[]>;
  create(input: t.TypeOf<typeof CreateRoleBody>): Promise<E.Either<ApiError, RoleDoc>>;
  patch(name: string, input: t.TypeOf<typeof PatchRoleBody>): Promise<E.Either<ApiError, RoleDoc>>;
  remove(name: string): Promise<E.Either<ApiError, RoleDoc>>;
}

const notFound = () => apiError('NOT_FOUND', 'No such role.');
const systemRole = () =>
  apiError('CONFLICT', 'System roles cannot be changed or deleted.', { reason: 'SYSTEM_ROLE' });
const changedMeanwhile = () => apiError('CONFLICT', 'The role changed while this request ran; try again.');

export const roleService = (deps: RoleServiceDeps): RoleService => {
  /** A custom role by name: system roles are nobody's to change. */
  const custom = async (name: string): Promise<E.Either<ApiError, RoleDoc>> => {
    const current = await deps.roles.get(name);
    if (current === undefined) return E.left(notFound());
    return current.is_system === 1 ? E.left(systemRole()) : E.right(current);
  };

  return {
    list: () => deps.roles.list(),

    async create(input) {
      const now = deps.clock().toISOString();
      const created = await deps.roles.create({
        name: input.name,
        display_name: input.display_name,
        permissions: [...new Set(input.permissions ?? [])],
        is_system: 0,
        created_at: now,
        updated_at: now,
      });
      return created === 'EXISTS'
        ? E.left(apiError('CONFLICT', 'A role with this name exists.', { reason: 'ROLE_EXISTS' }))
        : E.right(created);
    },

    async patch(name, input) {
      const found = await custom(name);
      if (E.isLeft(found)) return found;
      const current = found.right;
      const updated = await deps.roles.update(current, {
        name: current.name,
        display_name: input.display_name ?? current.display_name,
        permissions: input.permissions === undefined ? current.permissions : [...new Set(input.permissions)],
        is_system: 0,
        created_at: current.created_at,
        updated_at: deps.clock().toISOString(),
      });
      return updated === 'CONFLICT' ? E.left(changedMeanwhile()) : E.right(updated);
    },

    async remove(name) {
      const found = await custom(name);
      if (E.isLeft(found)) return found;
      const current = found.right;
      const holders = (await deps.users.list()).filter((u) => u.roles.includes(current.name));
      if (holders.length > 0) {
        return E.left(
          apiError('CONFLICT', 'Users hold this role; take it from them first.', {
            reason: 'ROLE_IN_USE',
            holders: holders.length,
          }),
        );
      }
      return (await deps.roles.remove(current)) === 'CONFLICT'
        ? E.left(changedMeanwhile())
        : E.right(current);
    },
  };
};
