/** The roles record: name (primary key), display_name, permissions, is_system, timestamps. */
import * as t from 'io-ts';
import { boundedArray, boundedString, IsoInstant, object, PathId, Text } from './codec.js';
import { PermissionC, RoleName } from './principal.js';

export const RoleDoc = t.type({
  _id: t.string,
  _rev: t.string,
  docType: t.literal('role'),
  name: t.string,
  display_name: t.string,
  permissions: t.array(PermissionC),
  is_system: t.union([t.literal(0), t.literal(1)]),
  created_at: t.string,
  updated_at: t.string,
});
export type RoleDoc = t.TypeOf<typeof RoleDoc>;

// Each permission at most once makes a handful; 50 leaves room for new ones.
const Permissions = boundedArray(PermissionC, 50);

export const Role = object(
  'Role',
  {
    name: RoleName,
    display_name: Text,
    permissions: Permissions,
    is_system: t.union([t.literal(0), t.literal(1)]),
    created_at: IsoInstant,
    updated_at: IsoInstant,
  },
  {},
  {
    description:
      'System roles (`is_system` 1) cannot be changed or deleted. `permissions` is stored as a JSON array.',
  },
);
export type Role = t.TypeOf<typeof Role>;

export const toRole = (doc: RoleDoc): Role => ({
  name: doc.name,
  display_name: doc.display_name,
  permissions: doc.permissions,
  is_system: doc.is_system,
  created_at: doc.created_at,
  updated_at: doc.updated_at,
});

export const RoleList = object('RoleList', { items: t.array(Role) });

export const CreateRoleBody = object(
  'CreateRoleBody',
  { name: RoleName, display_name: boundedString(1, 80) },
  { permissions: Permissions },
);
export const PatchRoleBody = object(
  'PatchRoleBody',
  {},
  { display_name: boundedString(1, 80), permissions: Permissions },
);
export const RoleNameParams = object('RoleNameParams', { name: PathId });
export const RoleDeleted = object('RoleDeleted', { name: RoleName, deleted: t.literal(true) });
