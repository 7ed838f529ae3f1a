/**
 * The family pass hashes kept from one roster full pass to the next (decision 0058). A pass asks for
 * the families in the same order every time; a least-recently-used cache smaller than their number
 * answered none of them.
 */
import { expect } from 'chai';
import { boundedCache } from '../../src/lib/boundedCache.js';
import { type PassHashCache, passHashCache } from '../../src/sync/rosterInput.js';

const HASHES = { pass: 'p', revoked: [] };

/** Runs `passes` (each a list of names asked in order) and counts the lookups that hit. */
const hitsOf = (cache: Pick<PassHashCache, 'get' | 'set'>, passes: string[][], ended: () => void) =>
  passes.map((names) => {
    let hits = 0;
    for (const name of names) {
      if (cache.get(name) !== undefined) hits += 1;
      else cache.set(name, HASHES);
    }
    ended();
    return hits;
  });

describe('pass hashes held from one roster pass to the next', () => {
  const table: Array<{ what: string; max: number; passes: string[][]; hits: number[]; heldAfter: number }> = [
    {
      what: 'fewer families than it holds: every lookup after the first pass hits',
      max: 4,
      passes: [
        ['a', 'b', 'c'],
        ['a', 'b', 'c'],
        ['a', 'b', 'c'],
      ],
      hits: [0, 3, 3],
      heldAfter: 3,
    },
    {
      what: 'more families than it holds, asked in the same order: as many hit as it holds',
      max: 2,
      passes: [
        ['a', 'b', 'c', 'd'],
        ['a', 'b', 'c', 'd'],
        ['a', 'b', 'c', 'd'],
      ],
      hits: [0, 2, 2],
      heldAfter: 2,
    },
    {
      what: 'a family no pass asked for (gone, or a new generation) goes at its end, making room',
      max: 2,
      passes: [
        ['a', 'b'],
        ['a', 'c'],
        ['a', 'c'],
        ['a', 'c'],
      ],
      hits: [0, 1, 1, 2],
      heldAfter: 2,
    },
    {
      what: 'nothing asked: nothing held',
      max: 2,
      passes: [['a', 'b'], []],
      hits: [0, 0],
      heldAfter: 0,
    },
  ];
  for (const row of table)
    it(row.what, () => {
      const cache = passHashCache(row.max);
      expect(hitsOf(cache, row.passes, () => cache.passEnded())).to.deep.equal(row.hits);
      expect(cache.size()).to.equal(row.heldAfter);
    });

  it('where a least-recently-used cache of the same size answers none of the same passes', () => {
    const lru = boundedCache<typeof HASHES>({ maxEntries: 2 });
    const same = [
      ['a', 'b', 'c', 'd'],
      ['a', 'b', 'c', 'd'],
      ['a', 'b', 'c', 'd'],
    ];
    expect(hitsOf(lru, same, () => undefined)).to.deep.equal([0, 0, 0]);
  });
});
