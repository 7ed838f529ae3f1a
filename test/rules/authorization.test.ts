import { expect } from 'chai';
import * as E from 'fp-ts/lib/Either.js';
import type { Permission, Principal } from '../../src/domain/principal.js';
import { type AccessDenial, type AuthClass, authorize } from '../../src/rules/authorization.js';

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
