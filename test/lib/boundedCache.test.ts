import { expect } from 'chai';
import { boundedCache } from '../../src/lib/boundedCache.js';

describe('lib: the bounded cache', () => {
  it('drops the oldest fill first, however often it was read', () => {
    const cache = boundedCache<string>({ maxEntries: 2 });
    cache.set('a', 'A');
    cache.set('b', 'B');
    for (let i = 0; i < 3; i += 1) expect(cache.get('a')).to.equal('A');
    cache.set('c', 'C');
    expect(['a', 'b', 'c'].map((k) => cache.has(k))).to.deep.equal([false, true, true]);
    expect(cache.size()).to.equal(2);
  });

  it('keeps a weight budget, and refuses a value heavier than all of it', () => {
    const cache = boundedCache<string>({ maxWeight: 5, weigh: (v) => v.length });
    expect(cache.set('a', 'aa')).to.equal(true);
    expect(cache.set('b', 'bbb')).to.equal(true);
    expect(cache.set('c', 'c')).to.equal(true);
    expect(['a', 'b', 'c'].map((k) => cache.has(k))).to.deep.equal([false, true, true]);
    expect(cache.set('d', 'dddddd')).to.equal(false);
    expect(cache.has('d')).to.equal(false);
  });

  it('tells the keys it dropped to keep its bound, and only those', () => {
    const dropped: string[] = [];
    const cache = boundedCache<string>({ maxEntries: 2 }, (key) => dropped.push(key));
    cache.set('a', 'A');
    cache.set('b', 'B');
    cache.set('a', 'A2');
    cache.delete('b');
    cache.set('c', 'C');
    cache.set('d', 'D');
    cache.clear();
    expect(dropped).to.deep.equal(['a']);
  });
});
