/**
 * Route access rule. Each route names one auth class and, optionally, a permission. A principal
 * passes when any of its roles is in the class's list, or when the route names a permission that
 * one of its (custom) roles grants. `none` needs no principal; `bearer` needs any authenticated one.
 * ADMIN is in every list because ADMIN has full access.
 */
import * as E from 'fp-ts/lib/Either.js';
import type { Permission, Principal, SystemRole } from '../domain/principal.js';

export const AUTH_CLASSES = [
  'none',
  'bearer',
  'admin',
  'cadastro',
  'chamador',
  'relatorios',
  'printAgent',
] as const;
export type AuthClass = (typeof AUTH_CLASSES)[number];

export const rolesAllowed: Readonly<
  Record<Exclude<AuthClass, 'none' | 'bearer' | 'printAgent'>, ReadonlyArray<SystemRole>>
> = {
  admin: ['ADMIN'],
  cadastro: ['ADMIN', 'CADASTRO'],
  chamador: ['ADMIN', 'CHAMADOR'],
  relatorios: ['ADMIN', 'RELATORIOS'],
};

export type AccessDenial = 'UNAUTHENTICATED' | 'FORBIDDEN_ROLE';

/** What access is decided on: a principal's roles and what they grant (a client holds the same two). */
export type Grantee = Pick<Principal, 'roles' | 'permissions' | 'printAgentId'>;

export const authorize = (
  authClass: AuthClass,
  principal: Grantee | null,
  permission?: Permission,
): E.Either<AccessDenial, void> => {
  if (authClass === 'none') return E.right(undefined);
  if (principal === null) return E.left('UNAUTHENTICATED');
  // A print agent (0054) reaches its own routes and nothing else, `bearer` ones included; no user does.
  const agent = principal.printAgentId !== undefined;
  if (authClass === 'printAgent' || agent)
    return authClass === 'printAgent' && agent ? E.right(undefined) : E.left('FORBIDDEN_ROLE');
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
 * Whether a signed-in user may call a route of `authClass` (and `permission`): the server's own rule,
 * on the roles and permissions the login answer gives the client (a custom role's included). The
 * office offers only the pages a user may use, so a coordinator (CADASTRO) is not offered the users
 * page only to be told 403; the server still decides every call.
 */
export const mayReach = (
  authClass: Exclude<AuthClass, 'none' | 'bearer' | 'printAgent'>,
  user: Grantee,
  permission?: Permission,
): boolean => E.isRight(authorize(authClass, user, permission));

/**
 * Who the office lets in: those who may register children (ADMIN, CADASTRO, or a custom role that
 * grants `students.add`), the office's first page and purpose.
 */
export const mayUseOffice = (user: Grantee): boolean => mayReach('cadastro', user, 'students.add');
