import { expect } from 'chai';
import fc from 'fast-check';
import { trigramIndex } from '../../src/lib/trigramIndex.js';

/** Values are their own order keys here, so an answer's order is visible in it. */
const index = () => trigramIndex<string>((v) => v);
const read = (hit: { readonly values: Iterable<string> } | undefined) =>
  hit === undefined ? undefined : [...hit.values];

describe('trigram index', () => {
  it("narrows to the rarest trigram's values in order, after a key, or says it cannot", () => {
    const i = index();
    i.set('2', 'bruno souza', 'b');
    i.set('3', 'carla lima', 'c');
    i.set('1', 'ana souza', 'a');
    expect(read(i.candidates('lima', undefined))).to.deep.equal(['c']);
    expect(read(i.candidates('souza', undefined))).to.deep.equal(['a', 'b']);
    expect(read(i.candidates('souza', 'a')), 'after a key').to.deep.equal(['b']);
    expect(read(i.candidates('souza', 'b')), 'after the last').to.deep.equal([]);
    expect(i.candidates('souza', undefined)?.count).to.equal(2);
    expect(i.candidates('an', undefined), 'no word of three letters').to.equal(undefined);
    expect(read(i.candidates('zzz', undefined)), 'a trigram no text has').to.deep.equal([]);
  });

  it('holds a key once, at its latest text and order, and forgets a deleted one', () => {
    const i = index();
    i.set('1', 'ana souza', 'm');
    i.set('1', 'ana lima', 'z');
    i.set('2', 'bia lima', 'k');
    expect(read(i.candidates('souza', undefined)), 'the old text left').to.deep.equal([]);
    expect(read(i.candidates('lima', undefined)), 'placed by its new order').to.deep.equal(['k', 'z']);
    i.set('1', 'ana lima', 'a');
    expect(read(i.candidates('lima', undefined)), 'the same text, another order').to.deep.equal(['a', 'k']);
    i.delete('2');
    i.set('3', 'caio lima', 'c');
    expect(read(i.candidates('lima', undefined)), 'a freed slot given again').to.deep.equal(['a', 'c']);
  });

  it('holds a trigram a text repeats once, and a trigram of letters past code 1023 as well as any', () => {
    const i = index();
    i.set('1', 'anana', 'a');
    i.set('2', 'жанна', 'b');
    i.set('3', 'jūlija', 'c');
    expect(read(i.candidates('ana', undefined)), 'once, though "anana" has it twice').to.deep.equal(['a']);
    expect(read(i.candidates('жан', undefined))).to.deep.equal(['b']);
    expect(read(i.candidates('анна', undefined))).to.deep.equal(['b']);
    expect(read(i.candidates('anna', undefined)), 'Latin letters are not Cyrillic ones').to.deep.equal([]);
    expect(read(i.candidates('ūli', undefined))).to.deep.equal(['c']);
    i.delete('1');
    i.set('2', 'анна', 'b');
    expect(read(i.candidates('ana', undefined)), 'a repeated trigram unindexed whole').to.deep.equal([]);
    expect(read(i.candidates('жан', undefined)), 'the old text of a key left').to.deep.equal([]);
    expect(read(i.candidates('анн', undefined))).to.deep.equal(['b']);
  });

  it("property: answers, in order, every value whose text has the word's trigrams, after any key", () => {
    // Letters under code 1024 (a trigram of them is held as a number) and over it ('Ж': as a string),
    // so trigrams of both kinds, and mixed, meet in one index.
    const text = fc.stringMatching(/^[abnωЖ ]{0,7}$/);
    const op = fc.oneof(
      fc.record({ kind: fc.constant('set' as const), key: fc.nat(6), text, order: fc.nat(30) }),
      fc.record({ kind: fc.constant('delete' as const), key: fc.nat(6) }),
    );
    fc.assert(
      fc.property(
        fc.array(op, { maxLength: 30 }),
        fc.stringMatching(/^[abnωЖ]{3,4}$/),
        fc.nat(31),
        (ops, word, after) => {
          const i = index();
          // The reference: key → [text, order key]; order keys made unique by the key.
          const held = new Map<number, readonly [string, string]>();
          for (const o of ops) {
            if (o.kind === 'delete') {
              i.delete(String(o.key));
              held.delete(o.key);
            } else {
              const value = `${String(o.order).padStart(2, '0')}:${o.key}`;
              i.set(String(o.key), o.text, value);
              held.set(o.key, [o.text, value]);
            }
          }
          const afterKey = after === 31 ? undefined : `${String(after).padStart(2, '0')}:`;
          const grams = Array.from({ length: word.length - 2 }, (_, k) => word.slice(k, k + 3));
          const want = [...held.values()]
            .filter(([t, v]) => grams.every((g) => t.includes(g)) && (afterKey === undefined || v > afterKey))
            .map(([, v]) => v)
            .sort();
          const got = read(i.candidates(word, afterKey)) ?? [];
          // The candidates are one trigram's values: every match, in order, once, and nothing deleted,
          // stale or before the key.
          expect(got).to.deep.equal([...new Set(got)].sort());
          expect(got.filter((v) => want.includes(v))).to.deep.equal(want);
          const current = new Map([...held.values()].map(([t, v]) => [v, t]));
          for (const v of got) {
            expect(
              grams.some((g) => current.get(v)?.includes(g)),
              v,
            ).to.equal(true);
            expect(afterKey === undefined || v > afterKey).to.equal(true);
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});
