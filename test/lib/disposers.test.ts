import { expect } from 'chai';
import { disposers } from '../../src/lib/disposers.js';

describe('the disposer stack', () => {
  it('runs every step once, the last added first, each awaited before the next', async () => {
    const order: string[] = [];
    const stack = disposers();
    stack.add('store', () => {
      order.push('store');
    });
    stack.add('pipeline', async () => {
      await new Promise((r) => setTimeout(r, 20));
      order.push('pipeline');
    });
    stack.add('feed', () => {
      order.push('feed');
    });
    const [first, second] = await Promise.all([stack.disposeAll(), stack.disposeAll()]);
    expect(order).to.deep.equal(['feed', 'pipeline', 'store']);
    expect(first).to.deep.equal([]);
    expect(second).to.equal(first);
    expect(await stack.disposeAll()).to.deep.equal([]);
    expect(order).to.have.length(3);
  });

  it('goes on past a failing step and reports it by name', async () => {
    const order: string[] = [];
    const stack = disposers();
    stack.add('store', () => {
      order.push('store');
    });
    stack.add('pipeline', async () => {
      throw new Error('stuck');
    });
    const failures = await stack.disposeAll();
    expect(order).to.deep.equal(['store']);
    expect(failures.map((f) => f.name)).to.deep.equal(['pipeline']);
  });

  it('refuses a step added once disposal began', async () => {
    const stack = disposers();
    await stack.disposeAll();
    expect(() => stack.add('late', () => undefined)).to.throw(/after disposal began/);
  });
});
