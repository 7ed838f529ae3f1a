import { expect } from 'chai';
import { type Observable, Subject } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import {
  feedsRoster,
  projectionFeedsRoster,
  type RosterContext,
  rosterReconciles$,
  startRosterReconciler,
} from '../../src/sync/rosterReconciler.js';

const newScheduler = () =>
  new TestScheduler((actual, expected) => {
    expect(actual).to.deep.equal(expected);
  });

describe('roster reconciler stream (marbles)', () => {
  it('debounces a burst into one reconcile, and runs one more after a trigger that came during one', () => {
    newScheduler().run(({ hot, cold, expectObservable }) => {
      let runs = 0;
      const triggers = hot('--a--b---------|');
      const reconcile = () => {
        runs += 1;
        return cold('------(r|)', { r: { written: runs, deleted: 0 } });
      };
      // The start and a (2) debounce into run 1 at 4..10; b (5) debounces at 7, while run 1 is busy, so
      // run 2 follows at 10..16; the triggers' end (15) waits for it.
      expectObservable(
        rosterReconciles$({ triggers$: triggers, reconcile, debounceMs: 2, maxWaitMs: 50, retryDelayMs: 5 }),
      ).toBe('----------x-----(y|)', { x: { written: 1, deleted: 0 }, y: { written: 2, deleted: 0 } });
    });
  });

  it('retries a failed reconcile after the delay', () => {
    const errors: unknown[] = [];
    newScheduler().run(({ hot, cold, expectObservable }) => {
      let runs = 0;
      const reconcile = (): Observable<{ written: number; deleted: number }> => {
        runs += 1;
        return runs === 1
          ? cold<{ written: number; deleted: number }>('-#', undefined, new Error('store down'))
          : cold('-(r|)', { r: { written: 1, deleted: 0 } });
      };
      expectObservable(
        rosterReconciles$({
          triggers$: hot('-------|'),
          reconcile,
          debounceMs: 1,
          maxWaitMs: 50,
          retryDelayMs: 3,
          onError: (e) => errors.push(e),
        }),
      ).toBe('------x|', { x: { written: 1, deleted: 0 } });
    });
    expect(errors).to.have.length(1);
  });
});

describe('roster triggers', () => {
  it('reconciles for roster sources only, not for every private write', () => {
    const table: ReadonlyArray<readonly [string, boolean]> = [
      ['student:1', true],
      ['imageConsent:1', true],
      ['pickupEntry:1', true],
      ['pickupGrant:1', true],
      ['class:1', true],
      ['classSession:1', true],
      ['checkin-secret', true],
      ['checkin-config', true],
      ['volunteer:s1:2026-11-26T09:00:00.000Z:v1', true],
      ['idem:abc', false],
      ['ratelimit:x', false],
      ['session:1', false],
      ['user:1', false],
      ['checkin:1', false],
    ];
    for (const [id, feeds] of table) expect(feedsRoster(id), id).to.equal(feeds);
    expect(projectionFeedsRoster('aspect:checkin:s:st')).to.equal(true);
    expect(projectionFeedsRoster('aspect:attendance:st:s')).to.equal(true);
    expect(projectionFeedsRoster('aspect:student:st:displayName')).to.equal(false);
    expect(projectionFeedsRoster('conflict:e1')).to.equal(false);
  });
});

describe('roster reconciler during a rush', () => {
  it('writes the changed aspects while triggers keep coming closer together than the debounce', async () => {
    const aspects$ = new Subject<string>();
    const writtenDuringRush: string[][] = [];
    let rushing = true;
    const projector = startRosterReconciler({
      full: async () => ({
        written: 0,
        deleted: 0,
        context: { sessionIds: new Set(), activeIds: new Set() },
      }),
      forAspects: async () => [],
      writeSome: async (ids) => {
        if (rushing) writtenDuringRush.push([...ids]);
        return { written: ids.length, deleted: 0 };
      },
      fullTriggers$: new Subject<unknown>(),
      aspectTriggers$: aspects$,
      debounceMs: 100,
      maxWaitMs: 300,
    });
    try {
      await projector.refresh();
      // A trigger every 10 ms: the 100 ms debounce alone would wait for the end of the rush. Bounded:
      // it stops at the first partial pass, or after three seconds.
      const deadline = Date.now() + 3000;
      for (let i = 0; writtenDuringRush.length === 0 && Date.now() < deadline; i += 1) {
        aspects$.next(`checkin:s:child-${i}`);
        await new Promise((r) => setTimeout(r, 10));
      }
      rushing = false;
      expect(writtenDuringRush, 'no partial pass while the triggers kept coming').not.to.be.empty;
      expect(writtenDuringRush[0]).to.include('checkin:s:child-0');
    } finally {
      projector.stop();
    }
  });
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Until `done`, at most five seconds. */
const until = async (done: () => boolean) => {
  for (let i = 0; i < 500 && !done(); i += 1) await sleep(10);
};
/**
 * A reconciler over stores that answer at once, its full passes timed; `look` is its second look's
 * delay (none where reads cannot lag).
 */
const counting = (look: number | undefined, ownPasses = false, atMost?: number) => {
  const fullAt: number[] = [];
  const partial: string[][] = [];
  /** The students' passes, each with its students; a student in `needsFull` makes its pass ask for a full one. */
  const studentPasses: string[][] = [];
  const needsFull = new Set<string>();
  const students$ = new Subject<string>();
  const changes$ = new Subject<unknown>();
  const clock$ = new Subject<unknown>();
  const aspects$ = new Subject<string>();
  /** The next full passes that fail, as a store away would. */
  let failures = 0;
  const reconciler = startRosterReconciler({
    full: async () => {
      fullAt.push(Date.now());
      if (failures > 0) {
        failures -= 1;
        throw new Error('store away');
      }
      return { written: 0, deleted: 0, context: { sessionIds: new Set(), activeIds: new Set() } };
    },
    forAspects: async () => [],
    writeSome: async (ids) => {
      partial.push([...ids]);
      return { written: 0, deleted: 0 };
    },
    fullTriggers$: changes$,
    ...(ownPasses
      ? {
          students: async (ids: ReadonlyArray<string>, context: RosterContext) => {
            studentPasses.push([...ids].sort());
            return ids.some((id) => needsFull.has(id)) ? undefined : { written: 0, deleted: 0, context };
          },
          studentTriggers$: students$,
        }
      : {}),
    ...(atMost === undefined ? {} : { studentsPassAtMost: () => atMost }),
    clockTriggers$: clock$,
    aspectTriggers$: aspects$,
    debounceMs: 10,
    maxWaitMs: 50,
    secondLookMs: () => look,
  });
  const failNext = (n: number) => {
    failures = n;
  };
  const fullPasses = () => fullAt.length;
  return {
    fullAt,
    fullPasses,
    partial,
    changes$,
    clock$,
    aspects$,
    reconciler,
    failNext,
    studentPasses,
    needsFull,
    students$,
  };
};

describe('roster reconciler where a range read may lag its feed (a cluster)', () => {
  it('looks once more, a while after the pass a change set off', async () => {
    const { fullAt, changes$, reconciler } = counting(150);
    try {
      await reconciler.refresh();
      const before = fullAt.length;
      changes$.next('student:1');
      await until(() => fullAt.length >= before + 2);
      // Long enough for a third pass, were a look to set off another.
      await sleep(400);
      expect(fullAt.length - before, 'the pass the change set off, and one look').to.equal(2);
      const [pass = 0, look = 0] = fullAt.slice(before);
      expect(look - pass, 'the look waits its delay after the pass').to.be.at.least(140);
    } finally {
      reconciler.stop();
    }
  });

  it('takes one look after a burst of changes, not one per pass', async () => {
    const { fullAt, changes$, reconciler } = counting(150);
    try {
      await reconciler.refresh();
      const before = fullAt.length;
      // A change every 30 ms for 300 ms: one pass per change, each putting the look off again.
      let lastChangeAt = 0;
      for (let i = 0; i < 10; i += 1) {
        changes$.next(`student:${i}`);
        lastChangeAt = Date.now();
        await sleep(30);
      }
      // Told by the clock of the passes, not by waiting for a quiet spell: on a starved machine a
      // sleep lasts far longer than asked, and the look may come before the test looks. Every pass
      // that starts after the last change covers it; the first is the one it set off (or a look
      // that came then), and exactly one look follows it. Starved, the debounce's maximum wait may
      // run out as the last change comes: its pass starts at once and the debounce's own follows
      // it within a few milliseconds (seen: 0 and 10 ms after the change, the look at 176).
      const afterBurst = () => fullAt.slice(before).filter((at) => at >= lastChangeAt);
      await until(() => afterBurst().filter((at) => at - (afterBurst()[0] ?? 0) > 50).length >= 1);
      // Long enough for another pass, were a look to set off another.
      await sleep(600);
      const [lastPass = 0, ...rest] = afterBurst();
      const looks = rest.filter((at) => at - lastPass > 50);
      expect(
        looks.length,
        `one look after the burst; passes ${JSON.stringify(fullAt.slice(before).map((t) => t - lastChangeAt))} ms after the last change`,
      ).to.equal(1);
      expect((looks[0] ?? 0) - lastPass, 'after the last pass of the burst').to.be.at.least(140);
    } finally {
      reconciler.stop();
    }
  });

  it('keeps the look of a pass that failed, for the pass that retries it', async () => {
    const { fullAt, changes$, reconciler, failNext } = counting(150);
    try {
      await reconciler.refresh();
      const before = fullAt.length;
      failNext(1);
      changes$.next('student:1');
      // The failed pass, its retry (1 s later), and the retry's look.
      await until(() => fullAt.length >= before + 3);
      await sleep(400);
      expect(fullAt.length - before).to.equal(3);
    } finally {
      reconciler.stop();
    }
  });

  it('takes no look after a refresh, the clock’s pass or an aspect’s pass, nor where reads cannot lag', async () => {
    const lagging = counting(100);
    const single = counting(undefined);
    try {
      await lagging.reconciler.refresh();
      await single.reconciler.refresh();
      const before = [lagging.fullAt.length, single.fullAt.length] as const;
      await lagging.reconciler.refresh();
      lagging.clock$.next(0);
      await until(() => lagging.fullAt.length >= before[0] + 2);
      lagging.aspects$.next('checkin:s:child');
      single.changes$.next('student:1');
      await until(() => lagging.partial.length > 0 && single.fullAt.length > before[1]);
      await sleep(400);
      expect(lagging.fullAt.length - before[0], 'the refresh and the clock’s pass alone').to.equal(2);
      expect(lagging.partial).to.deep.equal([['checkin:s:child']]);
      expect(single.fullAt.length - before[1], 'the change’s pass alone').to.equal(1);
    } finally {
      lagging.reconciler.stop();
      single.reconciler.stop();
    }
  });
});

describe('roster reconciler held while a file is imported', () => {
  const reconcilerOf = () => counting(undefined);

  it('runs no full pass for the changes while held, and one for all of them at the release', async () => {
    const { fullPasses, changes$, reconciler } = reconcilerOf();
    try {
      await reconciler.refresh();
      const before = fullPasses();
      const release = reconciler.holdFullPasses();
      // Changes for longer than the debounce's maximum wait, as the batches of a file come.
      for (let i = 0; i < 10; i += 1) {
        changes$.next(`student:${i}`);
        await sleep(20);
      }
      await sleep(100);
      expect(fullPasses() - before, 'passes while held').to.equal(0);
      release();
      await until(() => fullPasses() > before);
      await sleep(100);
      expect(fullPasses() - before, 'passes after the release').to.equal(1);
      // Released once only: a second call changes nothing, and later changes pass again as before.
      release();
      changes$.next('student:after');
      await until(() => fullPasses() > before + 1);
      expect(fullPasses() - before).to.equal(2);
    } finally {
      reconciler.stop();
    }
  });

  it('waits for the last of several holds, passes nothing where no change came, and writes aspects meanwhile', async () => {
    const { fullPasses, partial, changes$, aspects$, reconciler } = reconcilerOf();
    try {
      await reconciler.refresh();
      const before = fullPasses();
      reconciler.holdFullPasses()();
      await sleep(100);
      expect(fullPasses() - before, 'a release with no change held').to.equal(0);
      const first = reconciler.holdFullPasses();
      const second = reconciler.holdFullPasses();
      changes$.next('student:1');
      aspects$.next('checkin:s:child');
      await until(() => partial.length > 0);
      expect(partial).to.deep.equal([['checkin:s:child']]);
      first();
      await sleep(100);
      expect(fullPasses() - before, 'one hold left').to.equal(0);
      second();
      await until(() => fullPasses() > before);
      expect(fullPasses() - before).to.equal(1);
    } finally {
      reconciler.stop();
    }
  });

  it('still runs the pass a refresh asks for while held', async () => {
    const { fullPasses, reconciler } = reconcilerOf();
    try {
      await reconciler.refresh();
      const release = reconciler.holdFullPasses();
      const before = fullPasses();
      await reconciler.refresh();
      expect(fullPasses() - before).to.equal(1);
      release();
    } finally {
      reconciler.stop();
    }
  });
});

describe("roster reconciler: a student's record changed, that student's own pass", () => {
  it('reconciles the students of a burst in one pass of their own, with no full pass', async () => {
    const { fullPasses, studentPasses, students$, reconciler } = counting(undefined, true);
    try {
      await reconciler.refresh();
      const before = fullPasses();
      students$.next('a');
      students$.next('b');
      students$.next('a');
      await until(() => studentPasses.length > 0);
      await sleep(100);
      expect(studentPasses).to.deep.equal([['a', 'b']]);
      expect(fullPasses() - before).to.equal(0);
    } finally {
      reconciler.stop();
    }
  });

  it('runs the full pass when the students’ pass asks for it (a student deleted), and on a change of any other record', async () => {
    const { fullPasses, studentPasses, needsFull, students$, changes$, reconciler } = counting(
      undefined,
      true,
    );
    try {
      await reconciler.refresh();
      const before = fullPasses();
      needsFull.add('gone');
      students$.next('gone');
      await until(() => fullPasses() > before);
      expect(studentPasses).to.deep.equal([['gone']]);
      changes$.next('class:1');
      students$.next('c');
      await until(() => fullPasses() > before + 1);
      await sleep(100);
      expect(fullPasses() - before).to.equal(2);
      expect(studentPasses, 'the full pass covers the student changed beside it').to.deep.equal([['gone']]);
    } finally {
      reconciler.stop();
    }
  });

  it('held while a file is imported: one pass of the file’s students at the release, or a full one if another record changed', async () => {
    const { fullPasses, studentPasses, students$, changes$, reconciler } = counting(undefined, true);
    try {
      await reconciler.refresh();
      const before = fullPasses();
      let release = reconciler.holdFullPasses();
      for (let i = 0; i < 10; i += 1) {
        students$.next(`s${i}`);
        await sleep(20);
      }
      await sleep(100);
      expect(studentPasses, 'nothing while held').to.deep.equal([]);
      release();
      await until(() => studentPasses.length > 0);
      expect(studentPasses).to.deep.equal([Array.from({ length: 10 }, (_, i) => `s${i}`)]);
      release = reconciler.holdFullPasses();
      students$.next('t');
      changes$.next('pickupGrant:1');
      await sleep(100);
      release();
      await until(() => fullPasses() > before);
      await sleep(100);
      expect(fullPasses() - before).to.equal(1);
      expect(studentPasses).to.have.length(1);
    } finally {
      reconciler.stop();
    }
  });

  it('where reads may lag (a cluster), looks at the same students once more, and not again', async () => {
    const { fullPasses, studentPasses, students$, reconciler } = counting(150, true);
    try {
      await reconciler.refresh();
      const before = fullPasses();
      students$.next('a');
      await until(() => studentPasses.length >= 2);
      await sleep(400);
      expect(studentPasses).to.deep.equal([['a'], ['a']]);
      expect(fullPasses() - before).to.equal(0);
    } finally {
      reconciler.stop();
    }
  });

  it('runs the full pass for more students than a students’ pass takes', async () => {
    const { fullPasses, studentPasses, students$, reconciler } = counting(undefined, true, 2);
    try {
      await reconciler.refresh();
      const before = fullPasses();
      students$.next('a');
      students$.next('b');
      await until(() => studentPasses.length > 0);
      students$.next('c');
      students$.next('d');
      students$.next('e');
      await until(() => fullPasses() > before);
      await sleep(100);
      expect(studentPasses).to.deep.equal([['a', 'b']]);
      expect(fullPasses() - before).to.equal(1);
    } finally {
      reconciler.stop();
    }
  });
});
