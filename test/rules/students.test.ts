import { expect } from 'chai';
import type { Permission } from '../../src/domain/principal.js';
import {
  decideDelete,
  foldName,
  hasPhotos,
  matchesQuery,
  photosAllowed,
  type StudentField,
  sortKeyOf,
  visibleStudentFields,
} from '../../src/rules/students.js';

describe('student rules', () => {
  const folds: ReadonlyArray<[string, string]> = [
    ['João', 'joao'],
    ['  Ana   Luíza ', 'ana luiza'],
    ['ÇÃO ñ Ü', 'cao n u'],
    ['Zoë', 'zoe'],
  ];
  for (const [name, folded] of folds) {
    it(`folds "${name}" to "${folded}"`, () => expect(foldName(name)).to.equal(folded));
  }

  const matches: ReadonlyArray<[string, string, boolean]> = [
    ['João Pedro', 'joao', true],
    ['João Pedro', 'PEDRO joão', true],
    ['João Pedro', 'ped', true],
    ['João Pedro', 'maria', false],
    ['João Pedro', '', true],
    ['Ana (a.*)', 'a.*', true],
    ['Ana', 'a.*', false],
  ];
  for (const [name, q, ok] of matches) {
    it(`"${q}" ${ok ? 'finds' : 'does not find'} "${name}" (words, literal, accent-insensitive)`, () =>
      expect(matchesQuery(foldName(name), foldName(q))).to.equal(ok));
  }

  it('orders by folded name, then id, so equal names still have distinct keys', () => {
    const a = sortKeyOf('Ana', 'b');
    const b = sortKeyOf('ana', 'c');
    const c = sortKeyOf('Ána Beatriz', 'a');
    expect([c, b, a].sort()).to.deep.equal([a, b, c]);
  });

  const visibility: ReadonlyArray<[string, string[], Permission[], StudentField[], StudentField[]]> = [
    ['ADMIN reads everything', ['ADMIN'], [], ['address', 'birthDate', 'allergies', 'phones'], []],
    ['CADASTRO reads everything', ['CADASTRO'], [], ['address', 'birthDate', 'allergies'], []],
    [
      'CHAMADOR reads the desk fields',
      ['CHAMADOR'],
      [],
      ['allergies', 'guardianName', 'phones', 'photoRef'],
      ['address', 'birthDate'],
    ],
    [
      'RELATORIOS reads no contact or health data',
      ['RELATORIOS'],
      [],
      ['displayName', 'classId'],
      ['allergies', 'phones', 'guardianName', 'photoRef', 'address'],
    ],
    [
      'a custom role with attendance reads as CHAMADOR',
      ['PORTEIRO'],
      ['attendance'],
      ['allergies'],
      ['address'],
    ],
  ];
  for (const [what, roles, permissions, sees, hidden] of visibility) {
    it(what, () => {
      const visible = visibleStudentFields(roles, permissions);
      for (const f of sees) expect(visible.has(f), f).to.equal(true);
      for (const f of hidden) expect(visible.has(f), f).to.equal(false);
    });
  }

  it('photos need at least one active consent', () => {
    expect(photosAllowed(0)).to.equal(false);
    expect(photosAllowed(1)).to.equal(true);
    expect(hasPhotos({ photoRef: null })).to.equal(false);
    expect(hasPhotos({ photo_refs: [] })).to.equal(false);
    expect(hasPhotos({ photoRef: 'p/1.jpg' })).to.equal(true);
    expect(hasPhotos({ photo_refs: ['p/1.jpg'] })).to.equal(true);
  });

  it('a deleted student cannot be deleted again', () => {
    expect(decideDelete('ACTIVE')).to.equal('delete');
    expect(decideDelete('DELETED')).to.equal('already-deleted');
  });
});
