import { expect } from 'chai';
import * as E from 'fp-ts/lib/Either.js';
import {
  isSystemRole,
  PERMISSIONS,
  type Permission,
  type Principal,
  SYSTEM_ROLE_PERMISSIONS,
} from '../../src/domain/principal.js';
import { type AccessDenial, type AuthClass, authorize, mayReach } from '../../src/rules/authorization.js';

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
    const who = principal === null ? 'an anonymous caller' : `roles [${principal.roles.join(', ')}]`;
    it(`${authClass}: ${who} → ${expected}`, () => {
      const result = authorize(authClass, principal);
      expect(E.isRight(result) ? 'allow' : result.left).to.equal(expected);
    });
  }
});

describe('mayReach: what the role names alone tell of a route (the office hides what is refused)', () => {
  const table: ReadonlyArray<
    [Parameters<typeof mayReach>[0], ReadonlyArray<string>, Permission | undefined, 'yes' | 'no' | 'unknown']
  > = [
    ['admin', ['ADMIN'], undefined, 'yes'],
    ['admin', ['CADASTRO'], undefined, 'no'],
    // A custom role never opens an admin-only route, whatever it grants.
    ['admin', ['CADASTRO', 'PROFESSOR'], undefined, 'no'],
    ['relatorios', ['RELATORIOS'], 'reports', 'yes'],
    ['relatorios', ['ADMIN'], 'reports', 'yes'],
    ['relatorios', ['CADASTRO'], 'reports', 'no'],
    ['relatorios', ['CADASTRO', 'CHAMADOR'], 'reports', 'no'],
    // A custom role may grant `reports`: only the server knows.
    ['relatorios', ['CADASTRO', 'PROFESSOR'], 'reports', 'unknown'],
    ['relatorios', ['CADASTRO'], undefined, 'no'],
    ['cadastro', ['CADASTRO'], 'sessions.edit', 'yes'],
    // A system role's permission opens a route of another class, as the server's permissions do.
    ['chamador', ['RELATORIOS'], 'students.search', 'yes'],
    ['chamador', ['RELATORIOS'], 'attendance', 'no'],
    ['chamador', [], 'attendance', 'no'],
  ];
  for (const [authClass, roles, permission, expected] of table)
    it(`${authClass}${permission === undefined ? '' : ` (${permission})`} with [${roles.join(', ')}]: ${expected}`, () => {
      expect(mayReach(authClass, roles, permission)).to.equal(expected);
    });

  it('never says no where the server would let the user in, for the system roles', () => {
    const classes = ['admin', 'cadastro', 'chamador', 'relatorios'] as const;
    const permissions = [undefined, ...PERMISSIONS];
    const roleSets = [
      ['ADMIN'],
      ['CHAMADOR'],
      ['RELATORIOS'],
      ['CADASTRO'],
      ['CHAMADOR', 'CADASTRO'],
      ['RELATORIOS', 'CHAMADOR'],
    ];
    for (const c of classes)
      for (const p of permissions)
        for (const roles of roleSets) {
          const principal: Principal = {
            ...as(...roles),
            permissions: [
              ...new Set(roles.flatMap((r) => (isSystemRole(r) ? SYSTEM_ROLE_PERMISSIONS[r] : []))),
            ],
          };
          const allowed = E.isRight(authorize(c, principal, p));
          expect(mayReach(c, roles, p), `${c} ${p} ${roles.join(',')}`).to.equal(allowed ? 'yes' : 'no');
        }
  });
});
