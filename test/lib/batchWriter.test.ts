import { expect } from 'chai';
import { delay, type Observable, of } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import {
  type BatchResult,
  type BatchWriter,
  batchWriter,
  batchWrites$,
  type ItemResult,
  WriteReportedNothing,
  WriterClosed,
} from '../../src/lib/batchWriter.js';

const newScheduler = () =>
  new TestScheduler((actual, expected) => {
    expect(actual).to.deep.equal(expected);
  });

const OK: ItemResult = { ok: true, value: undefined };
const stored = (items: ReadonlyArray<string>): BatchResult<string> => ({
  items,
  results: items.map(() => OK),
});
const allOk = (items: ReadonlyArray<string>): ReadonlyArray<ItemResult> => items.map(() => OK);

describe('batch writer batching (marbles)', () => {
  it('writes an item at once when no write is under way', () => {
    newScheduler().run(({ hot, cold, expectObservable }) => {
      const entries$ = hot('-a 5ms b');
      const write = (batch: ReadonlyArray<string>) => cold('-r|', { r: allOk(batch) });
      // a at 1 reports at 2; b at 7 reports at 8: no window to wait for.
      expectObservable(batchWrites$(entries$, write, { maxBatch: 100 }), '^ 20ms !').toBe('--x 5ms y', {
        x: stored(['a']),
        y: stored(['b']),
      });
    });
  });

  it('gathers what arrives during a write into the next batch', () => {
    newScheduler().run(({ hot, cold, expectObservable }) => {
      const written: string[][] = [];
      const entries$ = hot('-abc');
      const write = (batch: ReadonlyArray<string>) => {
        written.push([...batch]);
        return cold('---r|', { r: allOk(batch) });
      };
      // A write is done with its report. [a] is written at 1 and reports at 4; b and c queue
      // meanwhile and are written together at 4, reporting at 7.
      expectObservable(batchWrites$(entries$, write, { maxBatch: 100 }), '^ 20ms !').toBe('4ms x 2ms y', {
        x: stored(['a']),
        y: stored(['b', 'c']),
      });
    });
  });

  it('takes at most maxBatch items a write', () => {
    newScheduler().run(({ hot, cold, expectObservable }) => {
      const entries$ = hot('-abcd');
      const write = (batch: ReadonlyArray<string>) => cold('----r|', { r: allOk(batch) });
      // [a] 1→5; [b, c] 5→9; [d] 9→13.
      expectObservable(batchWrites$(entries$, write, { maxBatch: 2 }), '^ 30ms !').toBe('5ms x 3ms y 3ms z', {
        x: stored(['a']),
        y: stored(['b', 'c']),
        z: stored(['d']),
      });
    });
  });

  it('reports a failed batch as failed and goes on writing the next batches', () => {
    const disk = new TypeError('disk');
    newScheduler().run(({ hot, cold, expectObservable }) => {
      let writes = 0;
      const entries$ = hot('-ab');
      const write = (batch: ReadonlyArray<string>): Observable<ReadonlyArray<ItemResult>> => {
        writes += 1;
        return writes === 1 ? cold('--#', undefined, disk) : cold('-r|', { r: allOk(batch) });
      };
      expectObservable(batchWrites$(entries$, write, { maxBatch: 100 }), '^ 20ms !').toBe('3ms x y', {
        x: { items: ['a'], results: [{ ok: false, error: disk }] },
        y: stored(['b']),
      });
    });
  });

  it('fails only the items a write reports as failed, and those it reports nothing for', () => {
    const conflict = new Error('conflict');
    newScheduler().run(({ hot, cold, expectObservable }) => {
      let writes = 0;
      const entries$ = hot('-abcd');
      const write = (batch: ReadonlyArray<string>) => {
        writes += 1;
        return writes === 1
          ? cold('----r|', { r: allOk(batch) })
          : cold<ReadonlyArray<ItemResult>>('-r|', { r: [OK, { ok: false, error: conflict }] });
      };
      expectObservable(batchWrites$(entries$, write, { maxBatch: 100 }), '^ 20ms !').toBe('5ms x y', {
        x: stored(['a']),
        y: {
          items: ['b', 'c', 'd'],
          results: [OK, { ok: false, error: conflict }, { ok: false, error: new WriteReportedNothing() }],
        },
      });
    });
  });

  it('writes what is still queued when the entries end, then completes', () => {
    newScheduler().run(({ hot, cold, expectObservable }) => {
      const entries$ = hot('-ab|');
      const write = (batch: ReadonlyArray<string>) => cold('--r|', { r: allOk(batch) });
      expectObservable(batchWrites$(entries$, write, { maxBatch: 100 })).toBe('3ms x - (y|)', {
        x: stored(['a']),
        y: stored(['b']),
      });
    });
  });

  it('copes with writes that complete synchronously', () => {
    newScheduler().run(({ hot, expectObservable }) => {
      const entries$ = hot('-a(bc)|');
      const write = (batch: ReadonlyArray<string>) => of(allOk(batch));
      expectObservable(batchWrites$(entries$, write, { maxBatch: 100 })).toBe('-a(bc)|', {
        a: stored(['a']),
        b: stored(['b']),
        c: stored(['c']),
      });
    });
  });
});

describe('batch writer promises', () => {
  let writer: BatchWriter<string> | undefined;
  afterEach(async () => {
    await writer?.close();
    writer = undefined;
  });

  it('resolves each entry once its batch is written and rejects only the failed batch', async () => {
    const batches: string[][] = [];
    writer = batchWriter<string>(
      async (batch) => {
        batches.push([...batch]);
        if (batch.includes('bad')) throw new TypeError('disk');
        return allOk(batch);
      },
      { maxBatch: 100 },
    );
    // The first item of a burst goes alone (nothing was being written); the rest gather behind it.
    const first = await Promise.allSettled([writer.submit('a'), writer.submit('b'), writer.submit('c')]);
    const second = await Promise.allSettled([writer.submit('x'), writer.submit('bad'), writer.submit('y')]);
    const third = await Promise.allSettled([writer.submit('d')]);
    expect(first.map((r) => r.status)).to.deep.equal(['fulfilled', 'fulfilled', 'fulfilled']);
    expect(second.map((r) => r.status)).to.deep.equal(['fulfilled', 'rejected', 'rejected']);
    expect(third.map((r) => r.status)).to.deep.equal(['fulfilled']);
    expect(batches).to.deep.equal([['a'], ['b', 'c'], ['x'], ['bad', 'y'], ['d']]);
  });

  it('flush waits for what was submitted before it, failures included, without rejecting', async () => {
    const settled: string[] = [];
    writer = batchWriter<string>((batch) =>
      of(batch.map((i): ItemResult => (i === 'x' ? { ok: false, error: new Error(i) } : OK))).pipe(delay(5)),
    );
    for (const item of ['a', 'x', 'b']) {
      writer.submit(item).then(
        () => settled.push(item),
        () => settled.push(`!${item}`),
      );
    }
    await writer.flush();
    expect(settled).to.deep.equal(['a', '!x', 'b']);
  });

  it('close writes what is queued, then refuses new entries', async () => {
    const batches: string[][] = [];
    const w = batchWriter<string>((batch) => {
      batches.push([...batch]);
      return of(allOk(batch)).pipe(delay(20));
    });
    writer = w;
    const pending = [w.submit('a'), w.submit('b')];
    await w.close();
    await Promise.all(pending);
    expect(batches).to.deep.equal([['a'], ['b']]);
    let refused: unknown;
    await w.submit('b').catch((e: unknown) => {
      refused = e;
    });
    expect(refused).to.be.instanceOf(WriterClosed);
  });
});

describe('batch writer results', () => {
  it('hands each item its own value', async () => {
    const w = batchWriter<number, number>((batch) =>
      of(batch.map((n) => ({ ok: true as const, value: n * 2 }))),
    );
    expect(await Promise.all([1, 2, 3].map((n) => w.submit(n)))).to.deep.equal([2, 4, 6]);
    await w.close();
  });
});
