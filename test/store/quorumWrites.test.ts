import { expect } from 'chai';
import { sortsAbove } from '../../src/store/quorumWrites.js';

describe('quorum writes: which live leaf CouchDB makes the winner', () => {
  const table: ReadonlyArray<readonly [string, string, boolean]> = [
    ['2-aaa', '1-fff', true], // a later generation wins, whatever its hash
    ['1-fff', '2-aaa', false],
    ['10-aaa', '9-fff', true], // generations compare as numbers, not as text
    ['1-bbb', '1-aaa', true], // the same generation: the higher revision id
    ['1-aaa', '1-bbb', false],
    ['1-aaa', '1-aaa', false], // a leaf is not above itself
  ];
  for (const [x, y, above] of table)
    it(`${x} ${above ? 'sorts above' : 'does not sort above'} ${y}`, () => {
      expect(sortsAbove(x, y)).to.equal(above);
    });

  it('of any two different leaves, exactly one sorts above the other', () => {
    const revs = ['1-a', '1-b', '2-a', '3-0', '10-z', '9-z'];
    for (const x of revs)
      for (const y of revs)
        if (x !== y) expect(sortsAbove(x, y) !== sortsAbove(y, x), `${x} ${y}`).to.equal(true);
  });
});
