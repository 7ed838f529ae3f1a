import { expect } from 'chai';
import fc from 'fast-check';
import type { Permission } from '../../src/domain/principal.js';
import {
  decideDelete,
  foldName,
  hasPhotos,
  photosAllowed,
  queryMatcher,
  type StudentField,
  sortKeyOf,
  unknownPhotoRefs,
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
      expect(queryMatcher(foldName(q))(foldName(name))).to.equal(ok));
  }

  it('finds a name by any pieces of its words, in any order, and not by a piece it lacks', () => {
    const word = fc.string({ unit: fc.constantFrom(...'abcdefghij'), minLength: 1, maxLength: 8 });
    fc.assert(
      fc.property(fc.array(word, { minLength: 1, maxLength: 4 }), fc.nat(), (words, seed) => {
        const name = words.join(' ');
        // A piece of each word (start and length from the seed), in reverse order.
        const pieces = words
          .map((w, i) => {
            const from = (seed + i) % w.length;
            return w.slice(from, from + 1 + ((seed >> 3) % (w.length - from)));
          })
          .reverse();
        const matches = queryMatcher(pieces.join(' '));
        expect(matches(name), `${pieces.join(' ')} in ${name}`).to.equal(true);
        expect(queryMatcher(`${pieces.join(' ')} z`)(name)).to.equal(false);
      }),
    );
  });

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

  describe('a change may name only photos the server holds for the child', () => {
    const known = new Set(['photos/s1/abc.jpg']);
    const cases: Array<[string, Parameters<typeof unknownPhotoRefs>[0], string[]]> = [
      ['the stored key', { photoRef: 'photos/s1/abc.jpg', photo_refs: ['photos/s1/abc.jpg'] }, []],
      ['a cleared reference', { photoRef: null, photo_refs: [] }, []],
      ['no photo field', {}, []],
      ['a key of nothing stored', { photoRef: 'photos/s1/other.jpg' }, ['body.photoRef']],
      ['an address', { photoRef: '/kiosk/icon.svg' }, ['body.photoRef']],
      [
        'unknown entries of photo_refs, each by its index',
        { photo_refs: ['photos/s1/abc.jpg', 'x.jpg', 'y.jpg'] },
        ['body.photo_refs.1', 'body.photo_refs.2'],
      ],
    ];
    for (const [what, fields, issues] of cases)
      it(`${what}: ${issues.length === 0 ? 'accepted' : issues.join(', ')}`, () =>
        expect(unknownPhotoRefs(fields, known)).to.deep.equal(issues));
  });

  it('a deleted student cannot be deleted again', () => {
    expect(decideDelete('ACTIVE')).to.equal('delete');
    expect(decideDelete('DELETED')).to.equal('already-deleted');
  });
});
