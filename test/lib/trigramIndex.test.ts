import { expect } from 'chai';
import { trigramIndex } from '../../src/lib/trigramIndex.js';

describe('trigram index', () => {
  it('narrows to the values of the rarest trigram, or says it cannot', () => {
    const index = trigramIndex<string>();
    index.set('1', 'ana souza', 'Ana');
    index.set('2', 'bruno souza', 'Bruno');
    index.set('3', 'carla lima', 'Carla');
    expect(index.candidates('lima', 10)).to.deep.equal(['Carla']);
    expect(index.candidates('souza', 10)?.sort()).to.deep.equal(['Ana', 'Bruno']);
    expect(index.candidates('souza', 1), 'more candidates than asked for').to.equal(undefined);
    expect(index.candidates('an', 10), 'no word of three letters').to.equal(undefined);
    expect(index.candidates('zzz', 10), 'a trigram no text has').to.deep.equal([]);
  });

  it('answers a value once, and its latest, however often its text changes', () => {
    const index = trigramIndex<string>();
    index.set('1', 'ana souza', 'v1');
    index.set('1', 'ana lima', 'v2');
    index.set('1', 'ana souza', 'v3');
    index.set('1', 'ana souza', 'v4');
    expect(index.candidates('souza', 10)).to.deep.equal(['v4']);
    // The old trigrams stay: the caller checks each candidate against the text it holds.
    expect(index.candidates('lima', 10)).to.deep.equal(['v4']);
  });
});
