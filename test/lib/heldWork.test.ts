import { expect } from 'chai';
import { heldWork } from '../../src/lib/heldWork.js';

describe('work held while something holds it', () => {
  const counting = () => {
    let resumed = 0;
    return { held: heldWork(() => (resumed += 1)), resumed: () => resumed };
  };

  it('is not put off with no hold, and nothing resumes then', () => {
    const { held, resumed } = counting();
    expect(held.putOff()).to.equal(false);
    held.hold()();
    expect(resumed()).to.equal(0);
  });

  it('is put off while held, and resumes once at the last release for all of it', () => {
    const { held, resumed } = counting();
    const first = held.hold();
    const second = held.hold();
    expect([held.putOff(), held.putOff()]).to.deep.equal([true, true]);
    first();
    first();
    expect(resumed()).to.equal(0);
    expect(held.putOff()).to.equal(true);
    second();
    expect(resumed()).to.equal(1);
    expect(held.putOff()).to.equal(false);
  });

  it('a hold after a release starts afresh: its release resumes only for work put off since', () => {
    const { held, resumed } = counting();
    const a = held.hold();
    held.putOff();
    a();
    const b = held.hold();
    b();
    expect(resumed()).to.equal(1);
  });
});
