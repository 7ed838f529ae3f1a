import { expect } from 'chai';
import fc from 'fast-check';
import { orderedList } from '../../src/lib/orderedList.js';

interface Item {
  readonly key: string;
  readonly n: number;
}

/** The reference: a map's values sorted by key. */
const model = (held: ReadonlyMap<string, Item>): Item[] =>
  [...held.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));

describe('orderedList (values in key order, in chunks)', () => {
  it('property: holds what a sorted map holds, after sets, replacements and deletions, across chunk splits and emptied chunks, and reads from any key on', () => {
    // Few keys, so sets replace and deletions hit; tiny chunks, so they split and empty often.
    const key = fc.stringMatching(/^[a-d]{0,3}$/);
    const op = fc.oneof(
      fc.record({ kind: fc.constant('set' as const), key, n: fc.nat() }),
      fc.record({ kind: fc.constant('delete' as const), key }),
    );
    fc.assert(
      fc.property(
        fc.array(op, { maxLength: 120 }),
        fc.array(key, { maxLength: 30 }),
        fc.integer({ min: 1, max: 6 }),
        fc.nat({ max: 40 }),
        (ops, starts, chunkMax, preloaded) => {
          const held = new Map<string, Item>();
          // Some values given already sorted, as a load gives them.
          const initial = model(
            new Map(Array.from({ length: preloaded }, (_, i) => [`b${i}`, { key: `b${i}`, n: i }])),
          );
          for (const item of initial) held.set(item.key, item);
          const list = orderedList((v: Item) => v.key, initial, chunkMax);
          for (const o of ops) {
            if (o.kind === 'set') {
              const item = { key: o.key, n: o.n };
              held.set(o.key, item);
              list.set(o.key, item);
            } else expect(list.delete(o.key), `delete ${o.key}`).to.equal(held.delete(o.key));
            expect(list.size).to.equal(held.size);
          }
          const want = model(held);
          expect(list.values()).to.deep.equal(want);
          expect([...list.after(undefined)]).to.deep.equal(want);
          for (const from of [...starts, ...want.map((v) => v.key)])
            expect([...list.after(from)], `after ${from}`).to.deep.equal(want.filter((v) => v.key > from));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('replaces the value of a key it holds, and keeps one entry for it', () => {
    const list = orderedList((v: Item) => v.key, [], 2);
    for (const k of ['c', 'a', 'b', 'a', 'd', 'a']) list.set(k, { key: k, n: list.size });
    expect(list.values().map((v) => v.key)).to.deep.equal(['a', 'b', 'c', 'd']);
    expect(list.delete('a')).to.equal(true);
    expect(list.delete('a')).to.equal(false);
    expect([...list.after('b')].map((v) => v.key)).to.deep.equal(['c', 'd']);
  });
});
