import { expect } from 'chai';
import * as E from 'fp-ts/lib/Either.js';
import type { Principal } from '../../src/domain/principal.js';
import { type AccessDenial, type AuthClass, authorize } from '../../src/rules/authorization.js';

const as = (...roles: string[]): Principal => ({
  userId: 'u',
  roles,
  primaryRole: roles[0] ?? 'NONE',
  authMode: 'dev',
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

describe('authorize (route access rule)', () => {
  for (const [authClass, principal, expected] of table) {
    const who = principal === null ? 'an anonymous caller' : `roles [${principal.roles.join(', ')}]`;
    it(`${authClass}: ${who} → ${expected}`, () => {
      const result = authorize(authClass, principal);
      expect(E.isRight(result) ? 'allow' : result.left).to.equal(expected);
    });
  }
});
