/** The client reads a newer server's answers: fields it does not know are read past, nothing else. */
import { expect } from 'chai';
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import { decodeLenient } from '../../src/client/lenient.js';
import { nullable, object } from '../../src/domain/codec.js';

const Child = object('Child', { name: t.string, level: t.keyof({ N1: null, N2: null }) }, { note: t.string });
const Page = object('Page', {
  items: t.array(Child),
  first: nullable(Child),
  either: t.union([object('A', { a: t.number }), object('B', { b: t.number })]),
  both: t.intersection([t.type({ x: t.number }), t.partial({ y: t.number })]),
});

const page = {
  items: [{ name: 'Ana', level: 'N1' }],
  first: { name: 'Bia', level: 'N2', note: 'n' },
  either: { b: 2 },
  both: { x: 1 },
};

describe('client: answers read leniently', () => {
  it('decodes what the codec names as the codec does', () => {
    expect(decodeLenient(Page, page)).to.deep.equal(E.right(page));
  });

  const added: ReadonlyArray<[string, unknown]> = [
    ['at the top', { ...page, total: 3 }],
    ['in an array item', { ...page, items: [{ name: 'Ana', level: 'N1', photo: 'x' }] }],
    ['in a nullable object', { ...page, first: { name: 'Bia', level: 'N2', note: 'n', age: 4 } }],
    ['in a member of a union', { ...page, either: { b: 2, c: 3 } }],
    ['at several places at once', { ...page, total: 3, items: [{ name: 'Ana', level: 'N1', photo: 'x' }] }],
  ];
  for (const [where, value] of added)
    it(`reads past a field added ${where}`, () => {
      const before = structuredClone(value);
      expect(decodeLenient(Page, value)).to.deep.equal(E.right(page));
      // The value handed in is left as it came.
      expect(value).to.deep.equal(before);
    });

  const refused: ReadonlyArray<[string, unknown]> = [
    ['a new value of an enumeration', { ...page, items: [{ name: 'Ana', level: 'N3' }] }],
    ['a field of the wrong type', { ...page, first: { name: 7, level: 'N1' } }],
    ['a missing field', { items: [], first: null, either: { a: 1 } }],
    ['a new field beside a wrong one', { ...page, total: 3, both: { x: 'one' } }],
    ['no object at all', 'nothing'],
  ];
  for (const [what, value] of refused)
    it(`still refuses ${what}`, () => expect(E.isLeft(decodeLenient(Page, value))).to.equal(true));
});
