import { expect } from 'chai';
import fc from 'fast-check';
import { pacedWriter } from '../../src/lib/pacedWriter.js';

const until = async (done: () => boolean, withinMs = 5000): Promise<void> => {
  const end = Date.now() + withinMs;
  while (!done()) {
    if (Date.now() > end) throw new Error('not reached in time');
    await new Promise((r) => setTimeout(r, 5));
  }
};

/** A store whose `failing`-th write (counted from 1) fails; what it stored, in order. */
const storeFailingAt = (failing: number) => {
  const written: number[] = [];
  let calls = 0;
  return {
    written,
    write: async (v: number) => {
      calls += 1;
      if (calls === failing) throw new Error('store away');
      written.push(v);
    },
  };
};

describe('paced writer (the pipeline checkpoint)', () => {
  it('writes the first value at once and makes its caller wait for it', async () => {
    const written: number[] = [];
    let release: () => void = () => undefined;
    const w = pacedWriter<number>({
      write: (v) =>
        new Promise<void>((resolve) => {
          release = () => {
            written.push(v);
            resolve();
          };
        }),
      everyMs: 60_000,
      onError: () => undefined,
    });
    let answered = false;
    const offered = w.offer(1).then(() => {
      answered = true;
    });
    await new Promise((r) => setTimeout(r, 10));
    expect(answered, 'answered before the write ended').to.equal(false);
    release();
    await offered;
    expect(written).to.deep.equal([1]);
    w.close();
  });

  it('inside the interval answers at once, and one trailing write takes the latest value', async () => {
    const written: number[] = [];
    const w = pacedWriter<number>({
      write: async (v) => {
        written.push(v);
      },
      everyMs: 50,
      onError: () => undefined,
    });
    for (let i = 1; i <= 100; i += 1) await w.offer(i);
    expect(written).to.deep.equal([1]);
    await until(() => written.length === 2);
    expect(written).to.deep.equal([1, 100]);
    w.close();
  });

  it('a flush writes what the interval held back, once; a second flush writes nothing', async () => {
    const written: string[] = [];
    const w = pacedWriter<string>({
      write: async (v) => {
        written.push(v);
      },
      everyMs: 60_000,
      onError: () => undefined,
    });
    await w.offer('a');
    await w.offer('b');
    await w.offer('c');
    await w.flush();
    await w.flush();
    expect(written).to.deep.equal(['a', 'c']);
    w.close();
  });

  it('a failed write rejects its caller and keeps its value for the next write', async () => {
    const { written, write } = storeFailingAt(1);
    const w = pacedWriter<number>({ write, everyMs: 60_000, onError: () => undefined });
    let error: unknown;
    await w.offer(7).catch((e: unknown) => {
      error = e;
    });
    expect(error).to.be.instanceOf(Error);
    await w.flush();
    expect(written).to.deep.equal([7]);
    w.close();
  });

  it('a failed trailing write is reported and tried again by itself an interval later', async () => {
    const reported: unknown[] = [];
    const { written, write } = storeFailingAt(2);
    const w = pacedWriter<number>({ write, everyMs: 30, onError: (e) => reported.push(e) });
    await w.offer(1);
    await w.offer(2);
    // Nothing more is offered (an idle pipeline): the held value is written all the same.
    await until(() => written.length === 2);
    expect(written).to.deep.equal([1, 2]);
    expect(reported).to.have.length(1);
    w.close();
  });

  it('after a failed write, a newer value offered since is the one written next', async () => {
    const { written, write } = storeFailingAt(1);
    const w = pacedWriter<number>({ write, everyMs: 60_000, onError: () => undefined });
    await w.offer(7).catch(() => undefined);
    await w.offer(8);
    await w.flush();
    expect(written).to.deep.equal([8]);
    w.close();
  });

  it('never writes backwards, never overlaps, ends on the latest value, and paces its writes (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ advanceMs: fc.integer({ min: 0, max: 400 }), slow: fc.boolean() }), {
          minLength: 1,
          maxLength: 60,
        }),
        async (steps) => {
          let clock = 0;
          let inFlight = 0;
          let overlapped = false;
          const written: number[] = [];
          const w = pacedWriter<number>({
            write: async (v) => {
              inFlight += 1;
              if (inFlight > 1) overlapped = true;
              await new Promise((r) => setImmediate(r));
              written.push(v);
              inFlight -= 1;
            },
            everyMs: 1000,
            onError: () => undefined,
            now: () => clock,
          });
          const pending: Promise<void>[] = [];
          for (const [i, step] of steps.entries()) {
            clock += step.advanceMs;
            // A slow caller does not wait for its write before the next offer.
            if (step.slow) pending.push(w.offer(i));
            else await w.offer(i);
          }
          await Promise.all(pending);
          w.close();
          await w.flush();
          expect(overlapped).to.equal(false);
          expect(written.at(-1)).to.equal(steps.length - 1);
          for (let k = 1; k < written.length; k += 1)
            expect(written[k]).to.be.greaterThan(written[k - 1] ?? -1);
          // One write per started interval of the clock, and the flush.
          expect(written.length).to.be.at.most(Math.floor(clock / 1000) + 2);
        },
      ),
      { numRuns: 200 },
    );
  });
});
