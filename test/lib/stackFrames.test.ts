import { expect } from 'chai';
import { stackFrames } from '../../src/lib/stackFrames.js';

describe('lib: stack frames without the message', () => {
  it('keeps where the error was thrown and never what it said, even over several lines', () => {
    const secret = 'Maria da Silva\nalérgica a amendoim';
    const frames = stackFrames(new Error(secret));
    expect(frames).to.be.a('string');
    expect(frames).to.match(/^\s+at /);
    expect(frames).to.not.include('Maria');
    expect(frames).to.not.include('amendoim');
  });

  it('says nothing for what is not an Error', () => {
    expect(stackFrames('Maria')).to.equal(undefined);
    expect(stackFrames({ stack: 'Maria' })).to.equal(undefined);
  });
});
