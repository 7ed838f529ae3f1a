import { expect } from 'chai';
import { type Observable, of } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import {
  type AuditWriter,
  auditWriter,
  auditWrites$,
  type BatchResult,
  type ItemResult,
  WriteReportedNothing,
  WriterClosed,
} from '../../src/sync/auditWriter.js';

const newScheduler = () =>
  new TestScheduler((actual, expected) => {
    expect(actual).to.deep.equal(expected);
  });

const OK: ItemResult = { ok: true };
const stored = (items: ReadonlyArray<string>): BatchResult<string> => ({
  items,
  results: items.map(() => OK),
});
const allOk = (items: ReadonlyArray<string>): ReadonlyArray<ItemResult> => items.map(() => OK);

describe('audit writer batching (marbles)', () => {
  it('closes a batch when its time window ends, and writes nothing for an idle window', () => {
    newScheduler().run(({ hot, cold, expectObservable }) => {
      const written: string[][] = [];
      const entries$ = hot('-a-b 12ms c 30ms d');
      const write = (batch: ReadonlyArray<string>) => {
        written.push([...batch]);
        return cold('-r|', { r: allOk(batch) });
      };
      // Windows close at 10, 20, 30, ...: [a, b] at 10, [c] at 20, [d] at 50; the empty windows between are dropped.
      expectObservable(auditWrites$(entries$, write, { windowMs: 10, maxBatch: 100 }), '^ 60ms !').toBe(
        '11ms x 9ms y 29ms z',
        { x: stored(['a', 'b']), y: stored(['c']), z: stored(['d']) },
      );
    });
  });

  it('closes a batch as soon as it holds maxBatch entries', () => {
    newScheduler().run(({ hot, cold, expectObservable }) => {
      const entries$ = hot('-abcde');
      const write = (batch: ReadonlyArray<string>) => cold('-r|', { r: allOk(batch) });
      // [a, b] full at 2, [c, d] full at 4; [e] waits for the window opened at 4 to end at 14.
      expectObservable(auditWrites$(entries$, write, { windowMs: 10, maxBatch: 2 }), '^ 30ms !').toBe(
        '3ms x - y 9ms z',
        { x: stored(['a', 'b']), y: stored(['c', 'd']), z: stored(['e']) },
      );
    });
  });

  it('writes one batch at a time, in order, even when a write is slower than the window', () => {
    newScheduler().run(({ hot, cold, expectObservable }) => {
      let writes = 0;
      const entries$ = hot('-ab');
      const write = (batch: ReadonlyArray<string>) => {
        writes += 1;
        return writes === 1 ? cold('15ms r|', { r: allOk(batch) }) : cold('-r|', { r: allOk(batch) });
      };
      // [a] is full at 1 and its write reports at 16; [b], full at 2, waits for that, then takes 1 frame.
      expectObservable(auditWrites$(entries$, write, { windowMs: 10, maxBatch: 1 }), '^ 30ms !').toBe(
        '16ms x y',
        { x: stored(['a']), y: stored(['b']) },
      );
    });
  });

  it('reports a failed batch as failed and goes on writing the next batches', () => {
    const disk = new TypeError('disk');
    newScheduler().run(({ hot, cold, expectObservable }) => {
      let writes = 0;
      const entries$ = hot('-ab 12ms c');
      const write = (batch: ReadonlyArray<string>): Observable<ReadonlyArray<ItemResult>> => {
        writes += 1;
        return writes === 1 ? cold('-#', undefined, disk) : cold('-r|', { r: allOk(batch) });
      };
      expectObservable(auditWrites$(entries$, write, { windowMs: 10, maxBatch: 100 }), '^ 40ms !').toBe(
        '11ms x 9ms y',
        {
          x: {
            items: ['a', 'b'],
            results: [
              { ok: false, error: disk },
              { ok: false, error: disk },
            ],
          },
          y: stored(['c']),
        },
      );
    });
  });

  it('fails only the items a write reports as failed, and those it reports nothing for', () => {
    const conflict = new Error('conflict');
    newScheduler().run(({ hot, cold, expectObservable }) => {
      const entries$ = hot('-abc');
      const write = () => cold<ReadonlyArray<ItemResult>>('-r|', { r: [OK, { ok: false, error: conflict }] });
      expectObservable(auditWrites$(entries$, write, { windowMs: 10, maxBatch: 100 }), '^ 15ms !').toBe(
        '11ms x',
        {
          x: {
            items: ['a', 'b', 'c'],
            results: [OK, { ok: false, error: conflict }, { ok: false, error: new WriteReportedNothing() }],
          },
        },
      );
    });
  });

  it('writes what is still buffered when the entries end', () => {
    newScheduler().run(({ hot, cold, expectObservable }) => {
      const entries$ = hot('-ab|');
      const write = (batch: ReadonlyArray<string>) => cold('-r|', { r: allOk(batch) });
      expectObservable(auditWrites$(entries$, write, { windowMs: 10, maxBatch: 100 })).toBe('4ms (x|)', {
        x: stored(['a', 'b']),
      });
    });
  });
});

describe('audit writer promises', () => {
  let writer: AuditWriter<string> | undefined;
  afterEach(async () => {
    await writer?.close();
    writer = undefined;
  });

  it('resolves each entry once its batch is written and rejects only the failed batch', async () => {
    const batches: string[][] = [];
    writer = auditWriter<string>(
      async (batch) => {
        batches.push([...batch]);
        if (batch.includes('bad')) throw new TypeError('disk');
        return allOk(batch);
      },
      { windowMs: 5 },
    );
    const first = await Promise.allSettled([writer.submit('a'), writer.submit('b')]);
    const second = await Promise.allSettled([writer.submit('bad'), writer.submit('c')]);
    const third = await Promise.allSettled([writer.submit('d')]);
    expect(first.map((r) => r.status)).to.deep.equal(['fulfilled', 'fulfilled']);
    expect(second.map((r) => r.status)).to.deep.equal(['rejected', 'rejected']);
    expect(third.map((r) => r.status)).to.deep.equal(['fulfilled']);
    expect(batches).to.deep.equal([['a', 'b'], ['bad', 'c'], ['d']]);
  });

  it('flush waits for what was submitted before it, failures included, without rejecting', async () => {
    const settled: string[] = [];
    writer = auditWriter<string>(
      (batch) => of(batch.map((i): ItemResult => (i === 'x' ? { ok: false, error: new Error(i) } : OK))),
      {
        windowMs: 20,
      },
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
    const w = auditWriter<string>(
      (batch) => {
        batches.push([...batch]);
        return of(allOk(batch));
      },
      { windowMs: 10_000 },
    );
    writer = w;
    const pending = w.submit('a');
    await w.close();
    await pending;
    expect(batches).to.deep.equal([['a']]);
    let refused: unknown;
    await w.submit('b').catch((e: unknown) => {
      refused = e;
    });
    expect(refused).to.be.instanceOf(WriterClosed);
  });
});
