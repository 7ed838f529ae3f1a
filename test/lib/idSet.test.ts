import { expect } from 'chai';
import fc from 'fast-check';
import { idSetBuilder, idSetOf, idSetWith } from '../../src/lib/idSet.js';

// Canonical UUIDs packed, near-misses (uppercase, no hyphens, one digit short) held as given, and
// ids that share their leading words: the binary search must tell them apart by the last word.
const canonical = fc.uuid();
const upper = fc.uuid().map((u) => u.toUpperCase());
const bare = fc.uuid().map((u) => u.replaceAll('-', ''));
const short = fc.uuid().map((u) => u.slice(0, -1));
const sibling = fc
  .tuple(
    fc.constantFrom('00000000-0000-4000-8000-', 'ffffffff-ffff-4fff-bfff-'),
    fc.stringMatching(/^[0-9a-f]{12}$/),
  )
  .map(([head, tail]) => head + tail);
const id = fc.oneof(canonical, canonical, sibling, upper, bare, short, fc.string({ maxLength: 8 }));

const sorted = (ids: Iterable<string>): string[] => [...ids].sort();

describe('idSet (ids held packed, answering as a Set of strings)', () => {
  it('property: has, size and iteration are those of a Set of the same ids, for members and others', () => {
    fc.assert(
      fc.property(fc.array(id, { maxLength: 200 }), fc.array(id, { maxLength: 50 }), (ids, others) => {
        const set = new Set(ids);
        const packed = idSetOf(ids);
        expect(packed.size).to.equal(set.size);
        expect(sorted(packed)).to.deep.equal(sorted(set));
        for (const x of [...ids, ...others]) expect(packed.has(x), x).to.equal(set.has(x));
      }),
    );
  });

  it('property: idSetWith is the union, and leaves the base as it was', () => {
    fc.assert(
      fc.property(fc.array(id, { maxLength: 120 }), fc.array(id, { maxLength: 60 }), (base, more) => {
        const packed = idSetOf(base);
        const before = sorted(packed);
        const union = new Set([...base, ...more]);
        // A packed base and a plain one give the same set.
        for (const from of [packed, new Set(base)]) {
          const joined = idSetWith(from, more);
          expect(joined.size).to.equal(union.size);
          expect(sorted(joined)).to.deep.equal(sorted(union));
          for (const x of [...base, ...more]) expect(joined.has(x)).to.equal(true);
        }
        expect(sorted(packed)).to.deep.equal(before);
      }),
    );
  });

  const cases: ReadonlyArray<{ what: string; ids: string[]; asks: string; has: boolean }> = [
    { what: 'an empty set', ids: [], asks: '9b2f2b8e-6a5c-4e8e-9d0b-2f3c4d5e6f70', has: false },
    {
      what: 'the first of two that differ in the last digit',
      ids: ['9b2f2b8e-6a5c-4e8e-9d0b-2f3c4d5e6f71', '9b2f2b8e-6a5c-4e8e-9d0b-2f3c4d5e6f70'],
      asks: '9b2f2b8e-6a5c-4e8e-9d0b-2f3c4d5e6f70',
      has: true,
    },
    {
      what: 'a third that differs from both in the last digit',
      ids: ['9b2f2b8e-6a5c-4e8e-9d0b-2f3c4d5e6f71', '9b2f2b8e-6a5c-4e8e-9d0b-2f3c4d5e6f70'],
      asks: '9b2f2b8e-6a5c-4e8e-9d0b-2f3c4d5e6f72',
      has: false,
    },
    {
      what: 'the highest words there are',
      ids: ['ffffffff-ffff-ffff-ffff-ffffffffffff', '00000000-0000-0000-0000-000000000000'],
      asks: 'ffffffff-ffff-ffff-ffff-ffffffffffff',
      has: true,
    },
    {
      what: 'a UUID in capitals, when the lowercase one is held (ids are compared as given)',
      ids: ['9b2f2b8e-6a5c-4e8e-9d0b-2f3c4d5e6f70'],
      asks: '9B2F2B8E-6A5C-4E8E-9D0B-2F3C4D5E6F70',
      has: false,
    },
    { what: 'an id that is no UUID', ids: ['s1', 'student-2'], asks: 'student-2', has: true },
  ];
  for (const c of cases)
    it(`${c.what}: ${c.has ? 'held' : 'not held'}`, () => {
      expect(idSetOf(c.ids).has(c.asks)).to.equal(c.has);
    });

  it('a builder fed past its first room keeps every id once', () => {
    const builder = idSetBuilder();
    const ids = Array.from(
      { length: 5_000 },
      (_, i) => `${i.toString(16).padStart(8, '0')}-0000-4000-8000-${'0'.repeat(12)}`,
    );
    for (const x of [...ids, ...ids.slice(0, 100)]) builder.add(x);
    const built = builder.build();
    expect(built.size).to.equal(5_000);
    expect(ids.every((x) => built.has(x))).to.equal(true);
    expect(built.has(`${(5_000).toString(16).padStart(8, '0')}-0000-4000-8000-${'0'.repeat(12)}`)).to.equal(
      false,
    );
  });
});
