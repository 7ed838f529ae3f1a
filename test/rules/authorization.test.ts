import { expect } from 'chai';
import * as E from 'fp-ts/lib/Either.js';
import {
  isSystemRole,
  PERMISSIONS,
  type Permission,
  type Principal,
  SYSTEM_ROLE_PERMISSIONS,
} from '../../src/domain/principal.js';
import {
  type AccessDenial,
  type AuthClass,
  authorize,
  mayReach,
  mayUseOffice,
} from '../../src/rules/authorization.js';

const as = (...roles: string[]): Principal => ({
  userId: 'u',
  roles,
  primaryRole: roles[0] ?? 'NONE',
  permissions: [],
  authMode: 'dev',
});
const custom = (...permissions: Permission[]): Principal => ({
  userId: 'u',
  roles: ['PORTEIRO'],
  primaryRole: 'PORTEIRO',
  permissions,
  authMode: 'jwt',
});

/** A print agent's principal (0054): no role, no permission. */
const agent: Principal = {
  userId: 'agent:a',
  roles: [],
  primaryRole: 'PRINT_AGENT',
  permissions: [],
  authMode: 'agent',
  printAgentId: 'a',
};
/** A user whose custom role is named as an agent might be: a name grants nothing here. */
const namedLikeAgent: Principal = { ...as('PRINT_AGENT'), permissions: [...PERMISSIONS] };

type Outcome = 'allow' | AccessDenial;

const table: ReadonlyArray<[AuthClass, Principal | null, Outcome]> = [
  ['none', null, 'allow'],
  ['none', as('CHAMADOR'), 'allow'],
  ['bearer', null, 'UNAUTHENTICATED'],
  ['bearer', as('RELATORIOS'), 'allow'],
  ['bearer', as('CUSTOM_ROLE'), 'allow'],
  ['admin', null, 'UNAUTHENTICATED'],
  ['admin', as('ADMIN'), 'allow'],
  ['admin', as('CADASTRO'), 'FORBIDDEN_ROLE'],
  ['admin', as('CHAMADOR', 'RELATORIOS'), 'FORBIDDEN_ROLE'],
  ['cadastro', as('ADMIN'), 'allow'],
  ['cadastro', as('CADASTRO'), 'allow'],
  ['cadastro', as('CHAMADOR'), 'FORBIDDEN_ROLE'],
  ['chamador', as('ADMIN'), 'allow'],
  ['chamador', as('CHAMADOR'), 'allow'],
  ['chamador', as('RELATORIOS'), 'FORBIDDEN_ROLE'],
  ['chamador', as('RELATORIOS', 'CHAMADOR'), 'allow'],
  ['relatorios', as('RELATORIOS'), 'allow'],
  ['relatorios', as('ADMIN'), 'allow'],
  ['relatorios', as('CADASTRO'), 'FORBIDDEN_ROLE'],
  ['relatorios', as(), 'FORBIDDEN_ROLE'],
  ['printAgent', null, 'UNAUTHENTICATED'],
  ['printAgent', agent, 'allow'],
  ['printAgent', as('ADMIN'), 'FORBIDDEN_ROLE'],
  ['printAgent', namedLikeAgent, 'FORBIDDEN_ROLE'],
  ['none', agent, 'allow'],
  ['bearer', agent, 'FORBIDDEN_ROLE'],
  ['admin', agent, 'FORBIDDEN_ROLE'],
  ['cadastro', agent, 'FORBIDDEN_ROLE'],
  ['chamador', agent, 'FORBIDDEN_ROLE'],
  ['relatorios', agent, 'FORBIDDEN_ROLE'],
];

describe('authorize with permissions (custom roles)', () => {
  const table: ReadonlyArray<[AuthClass, Permission | undefined, Principal, Outcome]> = [
    ['chamador', 'attendance', custom('attendance'), 'allow'],
    ['chamador', 'attendance', custom('reports'), 'FORBIDDEN_ROLE'],
    ['chamador', undefined, custom('attendance'), 'FORBIDDEN_ROLE'],
    ['relatorios', 'reports', custom('reports'), 'allow'],
    ['cadastro', 'sessions.add', custom('sessions.add'), 'allow'],
    ['admin', 'attendance', custom('attendance'), 'FORBIDDEN_ROLE'],
    ['bearer', 'attendance', custom(), 'allow'],
  ];
  for (const [authClass, permission, principal, expected] of table) {
    it(`${authClass} route naming ${permission ?? 'no permission'}: a custom role with [${principal.permissions.join(', ')}] → ${expected}`, () => {
      const result = authorize(authClass, principal, permission);
      expect(E.isRight(result) ? 'allow' : result.left).to.equal(expected);
    });
  }
});

describe('authorize (route access rule)', () => {
  for (const [authClass, principal, expected] of table) {
    const who =
      principal === null
        ? 'an anonymous caller'
        : principal.printAgentId !== undefined
          ? 'a print agent'
          : `roles [${principal.roles.join(', ')}]`;
    it(`${authClass}: ${who} → ${expected}`, () => {
      const result = authorize(authClass, principal);
      expect(E.isRight(result) ? 'allow' : result.left).to.equal(expected);
    });
  }
});

describe('mayReach and mayUseOffice: what the office offers a signed-in user', () => {
  /** A user as the login answer describes them: roles and what they grant. */
  const user = (roles: string[], permissions: Permission[] = []) => ({
    roles,
    permissions: [
      ...new Set([
        ...permissions,
        ...roles.flatMap((r) => (isSystemRole(r) ? SYSTEM_ROLE_PERMISSIONS[r] : [])),
      ]),
    ],
  });
  const table: ReadonlyArray<
    [Parameters<typeof mayReach>[0], ReturnType<typeof user>, Permission | undefined, boolean]
  > = [
    ['admin', user(['ADMIN']), undefined, true],
    ['admin', user(['CADASTRO']), undefined, false],
    // A custom role never opens an admin-only route, whatever it grants.
    ['admin', user(['PROFESSOR'], [...PERMISSIONS]), undefined, false],
    ['relatorios', user(['RELATORIOS']), 'reports', true],
    ['relatorios', user(['CADASTRO']), 'reports', false],
    ['relatorios', user(['CADASTRO', 'PROFESSOR'], ['reports']), 'reports', true],
    ['relatorios', user(['CADASTRO', 'PROFESSOR'], ['students.add']), 'reports', false],
    ['cadastro', user(['SECRETARIA'], ['students.add']), 'students.add', true],
    ['cadastro', user(['SECRETARIA'], ['students.add']), 'sessions.edit', false],
    ['chamador', user(['RELATORIOS']), 'students.search', true],
    ['chamador', user([]), 'attendance', false],
  ];
  for (const [authClass, who, permission, expected] of table)
    it(`${authClass}${permission === undefined ? '' : ` (${permission})`} with [${who.roles.join(', ')}] granting [${who.permissions.join(', ')}]: ${expected ? 'offered' : 'not offered'}`, () => {
      expect(mayReach(authClass, who, permission)).to.equal(expected);
    });

  const door: ReadonlyArray<[string, ReturnType<typeof user>, boolean]> = [
    ['ADMIN', user(['ADMIN']), true],
    ['CADASTRO', user(['CADASTRO']), true],
    ['a custom role granting students.add', user(['SECRETARIA'], ['students.add']), true],
    ['CHAMADOR', user(['CHAMADOR']), false],
    ['RELATORIOS', user(['RELATORIOS']), false],
    ['a custom role granting only reports', user(['PASTOR'], ['reports']), false],
  ];
  for (const [who, grantee, expected] of door)
    it(`the office ${expected ? 'lets in' : 'turns away'} ${who}`, () =>
      expect(mayUseOffice(grantee)).to.equal(expected));
});
