import { expect } from 'chai';
import fc from 'fast-check';
import { debounceTime, type Observable } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { debounceWithMaxWait, exhaustMapWithTrailing } from '../../src/lib/operators.js';

const newScheduler = () =>
  new TestScheduler((actual, expected) => {
    expect(actual).to.deep.equal(expected);
  });

describe('exhaustMapWithTrailing (marbles)', () => {
  it('runs one inner stream at a time and one more for any values that arrived meanwhile', () => {
    newScheduler().run(({ hot, cold, expectObservable }) => {
      let runs = 0;
      const source = hot('a-bc------d-|');
      const inner = () => {
        runs += 1;
        return cold('---(x|)', { x: runs });
      };
      // a starts run 1 (ends at 3); b and c collapse into run 2 (3..6); d starts run 3 at 10, and the
      // source's end at 12 waits for it to finish at 13.
      expectObservable(source.pipe(exhaustMapWithTrailing(inner))).toBe('---x--y------(z|)', {
        x: 1,
        y: 2,
        z: 3,
      });
    });
  });
});

describe('debounce with a maximum wait (marbles)', () => {
  it('is a debounce while the source pauses', () => {
    newScheduler().run(({ hot, expectObservable }) => {
      expectObservable(hot('a-b------c---|').pipe(debounceWithMaxWait(3, 10))).toBe('-----b------c|');
    });
  });

  it('emits at the maximum wait while values keep coming, counted from the first one held', () => {
    newScheduler().run(({ hot, expectObservable }) => {
      // A value every frame from 0 to 24: quiet never lasts 3 frames, so the ceiling decides: a at 0
      // is held until 8 (emitting i, the latest), j at 9 until 17 (r), then the end at 25 emits y.
      const values = 'abcdefghijklmnopqrstuvwxy';
      expectObservable(hot(`${values}|`).pipe(debounceWithMaxWait(3, 8))).toBe(
        '--------i--------r-------(y|)',
      );
    });
  });

  it('emits what it holds when the source completes, and passes an error on', () => {
    newScheduler().run(({ hot, expectObservable }) => {
      expectObservable(hot('a-|').pipe(debounceWithMaxWait(5, 10))).toBe('--(a|)');
      expectObservable(hot('a-#').pipe(debounceWithMaxWait(5, 10))).toBe('--#');
    });
  });

  it('equals debounceTime when the maximum wait is never reached, and never holds a value longer', () => {
    const gaps = fc.array(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: 30 });
    fc.assert(
      fc.property(
        gaps,
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 1, max: 12 }),
        (gs, due, maxWait) => {
          let t = 0;
          const times = gs.map((g) => (t += g));
          const end = t + 1;
          // One value per frame at most, so the marble has one character per frame.
          const chars = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJ';
          const frames = Array.from({ length: end }, () => '-');
          const values: Record<string, number> = {};
          times.forEach((frame, i) => {
            frames[frame] = chars.charAt(i);
            values[chars.charAt(i)] = i;
          });
          const marble = `${frames.join('')}|`;
          const run = (op: (scheduler: TestScheduler) => (o: Observable<number>) => Observable<number>) => {
            const seen: Array<{ frame: number; value: number }> = [];
            const scheduler = new TestScheduler(() => undefined);
            scheduler.run(({ hot }) => {
              hot(marble, values)
                .pipe(op(scheduler))
                .subscribe((value) => seen.push({ frame: scheduler.now(), value }));
            });
            return seen;
          };
          const bounded = run((s) => debounceWithMaxWait(due, maxWait, s));
          const unbounded = run((s) => debounceWithMaxWait(due, 10_000, s));
          const plain = run((s) => debounceTime(due, s));
          expect(unbounded).to.deep.equal(plain);
          // Every value is emitted, or overtaken by a later one that is, within the maximum wait.
          times.forEach((frame, i) => {
            const next = bounded.find((e) => e.value >= i);
            expect(next, `value ${i}`).not.to.equal(undefined);
            expect((next?.frame ?? Number.POSITIVE_INFINITY) - frame).to.be.at.most(
              Math.max(maxWait, end - frame),
            );
          });
          // And it is still a debounce: at most one emission per maximum wait while values keep coming.
          expect(bounded.length).to.be.at.most(plain.length + Math.ceil(end / maxWait));
        },
      ),
      { numRuns: 300 },
    );
  });
});
