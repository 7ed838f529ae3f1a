import { expect } from 'chai';
import { keyedLock } from '../../src/lib/keyedLock.js';

const tick = () => new Promise((r) => setTimeout(r, 1));

describe('keyed lock', () => {
  it('runs tasks of one key one at a time, in arrival order, and tasks of other keys alongside', async () => {
    const lock = keyedLock();
    const log: string[] = [];
    const task = (name: string) => async () => {
      log.push(`${name}:start`);
      await tick();
      log.push(`${name}:end`);
      return name;
    };
    const results = await Promise.all([
      lock.run('a', task('a1')),
      lock.run('a', task('a2')),
      lock.run('b', task('b1')),
    ]);
    expect(results).to.deep.equal(['a1', 'a2', 'b1']);
    expect(log.indexOf('a1:end')).to.be.lessThan(log.indexOf('a2:start'));
    expect(log.indexOf('b1:start')).to.be.lessThan(log.indexOf('a1:end'));
    await tick();
    expect(lock.size()).to.equal(0);
  });

  it('a failing task rejects for its caller only; the next task of the key still runs', async () => {
    const lock = keyedLock();
    const failed = lock.run('k', async () => {
      throw new Error('boom');
    });
    const next = lock.run('k', async () => 'ran');
    let error: unknown;
    await failed.catch((e: unknown) => {
      error = e;
    });
    expect(error).to.be.instanceOf(Error);
    expect(await next).to.equal('ran');
  });
});
