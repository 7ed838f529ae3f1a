/**
 * Route access rule. Each route names one auth class and, optionally, a permission. A principal
 * passes when any of its roles is in the class's list, or when the route names a permission that
 * one of its (custom) roles grants. `none` needs no principal; `bearer` needs any authenticated one.
 * ADMIN is in every list because ADMIN has full access.
 */
import * as E from 'fp-ts/lib/Either.js';
import {
  isSystemRole,
  type Permission,
  type Principal,
  SYSTEM_ROLE_PERMISSIONS,
  type SystemRole,
} from '../domain/principal.js';

export const AUTH_CLASSES = ['none', 'bearer', 'admin', 'cadastro', 'chamador', 'relatorios'] as const;
export type AuthClass = (typeof AUTH_CLASSES)[number];

export const rolesAllowed: Readonly<
  Record<Exclude<AuthClass, 'none' | 'bearer'>, ReadonlyArray<SystemRole>>
> = {
  admin: ['ADMIN'],
  cadastro: ['ADMIN', 'CADASTRO'],
  chamador: ['ADMIN', 'CHAMADOR'],
  relatorios: ['ADMIN', 'RELATORIOS'],
};

export type AccessDenial = 'UNAUTHENTICATED' | 'FORBIDDEN_ROLE';

export const authorize = (
  authClass: AuthClass,
  principal: Principal | null,
  permission?: Permission,
): E.Either<AccessDenial, void> => {
  if (authClass === 'none') return E.right(undefined);
  if (principal === null) return E.left('UNAUTHENTICATED');
  if (authClass === 'bearer') return E.right(undefined);
  const allowed: ReadonlyArray<string> = rolesAllowed[authClass];
  if (principal.roles.some((r) => allowed.includes(r))) return E.right(undefined);
  // Admin-only routes are never opened by a permission: user and role management stay with ADMIN.
  if (authClass !== 'admin' && permission !== undefined && principal.permissions.includes(permission)) {
    return E.right(undefined);
  }
  return E.left('FORBIDDEN_ROLE');
};

/**
 * Whether a user holding `roles` may call a route of `authClass` (and `permission`), as far as the
 * role names tell: `unknown` when a custom role is among them, whose permissions only the server
 * knows. The office hides the pages whose calls would all be refused (`no`), so a coordinator
 * (CADASTRO) is not offered the users page only to be told 403; the server decides every call.
 */
export const mayReach = (
  authClass: Exclude<AuthClass, 'none' | 'bearer'>,
  roles: ReadonlyArray<string>,
  permission?: Permission,
): 'yes' | 'no' | 'unknown' => {
  const allowed: ReadonlyArray<string> = rolesAllowed[authClass];
  if (roles.some((r) => allowed.includes(r))) return 'yes';
  // As in `authorize`: admin-only routes are never opened by a permission.
  if (authClass === 'admin' || permission === undefined) return 'no';
  if (roles.some((r) => isSystemRole(r) && SYSTEM_ROLE_PERMISSIONS[r].includes(permission))) return 'yes';
  return roles.some((r) => !isSystemRole(r)) ? 'unknown' : 'no';
};
