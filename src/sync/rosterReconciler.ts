/**
 * Keeps the roster database (what tablets pull) equal to `rules/roster.ts` applied to the server's
 * records. Any change in the private or projections database, or the passing of time (sessions and
 * day keys roll over at UTC midnight), is a trigger; triggers are debounced and a reconcile runs one
 * at a time (a trigger during one runs one more after it), so a burst of writes costs one pass. The
 * debounce has a maximum wait: during a rush, when check-ins come closer together than the debounce,
 * tablets still see the roster change at least that often.
 */
import {
  asyncScheduler,
  defer,
  EMPTY,
  map,
  merge,
  type Observable,
  retry,
  type SchedulerLike,
  Subject,
  type Subscription,
  startWith,
  takeUntil,
  tap,
  timer,
} from 'rxjs';
import type { RosterDoc } from '../domain/roster.js';
import { heldWork } from '../lib/heldWork.js';
import type { IdSet } from '../lib/idSet.js';
import { debounceWithMaxWait, exhaustMapWithTrailing } from '../lib/operators.js';

/**
 * The private-database documents the roster is made of; any other write (idempotency records, rate
 * limits, sessions, users) is no reason to reconcile.
 */
const ROSTER_SOURCES = [
  'student:',
  'imageConsent:',
  'pickupEntry:',
  'pickupGrant:',
  'class:',
  'classSession:',
  'photo:',
  // Volunteers in a room: the tablets judge the ratio offline with the count.
  'volunteer:',
  // A revoked family pass: tablets refuse it from their next pull (0049).
  'familyPass:',
];
/** Singletons: the day keys' secret, and the configuration whose required fields tablets hold. */
const ROSTER_SINGLETONS = ['checkin-secret', 'checkin-config'];
export const feedsRoster = (docId: string): boolean =>
  ROSTER_SINGLETONS.includes(docId) || ROSTER_SOURCES.some((prefix) => docId.startsWith(prefix));
/** The projections the roster shows: check-in and attendance aspects. */
export const projectionFeedsRoster = (docId: string): boolean =>
  docId.startsWith('aspect:checkin:') || docId.startsWith('aspect:attendance:');

export interface RosterStreams {
  readonly triggers$: Observable<unknown>;
  /** Computes the wanted documents and writes the difference. */
  readonly reconcile: () => Observable<{ written: number; deleted: number }>;
  readonly debounceMs: number;
  /** The longest a trigger waits for its reconcile while triggers keep coming. */
  readonly maxWaitMs: number;
  readonly retryDelayMs: number;
  readonly scheduler?: SchedulerLike;
  readonly onError?: (error: unknown) => void;
}

export const rosterReconciles$ = (s: RosterStreams): Observable<{ written: number; deleted: number }> =>
  s.triggers$.pipe(
    startWith(undefined),
    debounceWithMaxWait(s.debounceMs, s.maxWaitMs, s.scheduler ?? asyncScheduler),
    exhaustMapWithTrailing(() =>
      defer(s.reconcile).pipe(
        retry({
          delay: (error: unknown) => {
            s.onError?.(error);
            return timer(s.retryDelayMs, s.scheduler ?? asyncScheduler);
          },
        }),
      ),
    ),
  );

export interface RosterReconciler {
  /** Resolves after a full reconcile that started after the call has finished. */
  refresh(): Promise<void>;
  /**
   * Puts off the passes the records' changes set off until the returned release is called (the
   * last one, when several hold): then one pass runs for all of them, if any change came (the
   * students' pass of the students changed meanwhile, or a full one where another record changed). A student
   * import writes its file in batches, and a full pass after each reads the whole roll again, so the
   * file cost a time quadratic in its length (issue #41). Aspect passes, the clock's passes and
   * `refresh` still run meanwhile; the tablets see the file's children after it.
   */
  holdFullPasses(): () => void;
  stop(): void;
}

/** What a partial reconcile needs from the last full one: which sessions and students are in. */
export interface RosterContext {
  readonly sessionIds: ReadonlySet<string>;
  /** Packed (`idSet.ts`): on CouchDB it is the one thing an instance holds per student. */
  readonly activeIds: IdSet;
}

/**
 * Students held by id while passes are held (an import's file and more): past this many, the release
 * runs a full pass, which reads them all at about the cost of reading them by id.
 */
export const STUDENTS_HELD = 50_000;

/**
 * A change to the server's records (or the clock) reconciles the whole roster; a change of some
 * students' own records, where `students` is given, reconciles just theirs and their families'
 * (decision 0069); a change to check-in or attendance aspects alone reconciles just their documents.
 * The last two use the sessions and students of the last pass. A failed pass is retried as a full
 * one, so no change is ever dropped.
 */
export const startRosterReconciler = (options: {
  /** Reconciles the whole roster, and tells the sessions and students it holds. */
  readonly full: () => Promise<{ written: number; deleted: number; context: RosterContext }>;
  readonly forAspects: (
    aspects: ReadonlyArray<string>,
    context: RosterContext,
  ) => Promise<ReadonlyArray<RosterDoc>>;
  readonly writeSome: (
    ids: ReadonlyArray<string>,
    docs: ReadonlyArray<RosterDoc>,
  ) => Promise<{ written: number; deleted: number }>;
  /**
   * Reconciles the documents of some students whose records changed (`rosterStudentsPass`), or
   * undefined when they need a full pass (a student deleted or gone). Absent: every change of a
   * student's record runs a full pass.
   */
  readonly students?: (
    studentIds: ReadonlyArray<string>,
    context: RosterContext,
  ) => Promise<{ written: number; deleted: number; context: RosterContext } | undefined>;
  /**
   * The most students a students' pass takes, given how many active students the roster holds: past
   * it, reading them by id costs more than reading the roll by ranges, and a full pass runs instead.
   * Absent: no bound.
   */
  readonly studentsPassAtMost?: (activeStudents: number) => number;
  /** Any change of the records that may alter the whole roster. */
  readonly fullTriggers$: Observable<unknown>;
  /**
   * The ids of students whose record changed: their own pass where `students` is given, a full pass
   * where it is not.
   */
  readonly studentTriggers$?: Observable<string>;
  /** The passing of time (sessions and day keys roll over): a full pass, with no second look. */
  readonly clockTriggers$?: Observable<unknown>;
  /** The names of check-in and attendance aspects that changed. */
  readonly aspectTriggers$: Observable<string>;
  readonly debounceMs?: number;
  readonly maxWaitMs?: number;
  /**
   * How long after a full pass that a change of the records set off to take a second look (another
   * full pass), or undefined for none. On a CouchDB cluster the pass reads the records by range, which one copy of
   * each shard serves, and a copy may lag a write the feed has already told: that pass misses the
   * change, and nothing else would set one off until the next change or the ten-minute timer (a new
   * child missing from the tablets). Asked at each pass, so it may be learnt after the start.
   */
  readonly secondLookMs?: () => number | undefined;
  readonly onError?: (error: unknown) => void;
}): RosterReconciler => {
  const manual$ = new Subject<void>();
  const look$ = new Subject<void>();
  const stop$ = new Subject<void>();
  /** Whether a change set off the full pass to come, so it is looked at again after it. */
  let lookAfter = false;
  let lookTimer: Subscription | undefined;
  /** What the look to come looks at again: the whole roster, or the students of the passes before it. */
  let lookFull = false;
  const lookStudents = new Set<string>();
  const scheduleLook = (full: boolean, studentIds: ReadonlyArray<string>) => {
    const ms = options.secondLookMs?.();
    if (ms === undefined) return;
    lookFull ||= full;
    for (const id of studentIds) lookStudents.add(id);
    // One look, after the last of a burst of passes.
    lookTimer?.unsubscribe();
    lookTimer = timer(ms)
      .pipe(takeUntil(stop$))
      .subscribe(() => look$.next());
  };
  const done$ = new Subject<{ run: number; full: boolean }>();
  let started = 0;
  let pendingFull = true;
  const pendingAspects = new Set<string>();
  // Students whose records changed, for their own pass; those a look asks again for take no look.
  const pendingStudents = new Set<string>();
  const pendingLookStudents = new Set<string>();
  // What came while passes were held: students for their pass at the release, unless something
  // asked for a full one (or the students grew past what is worth holding by id).
  const heldStudents = new Set<string>();
  let heldFull = false;
  const ownPass = options.students;
  const studentChanged = (id: string) => {
    if (ownPass === undefined) {
      if (!held.putOff()) {
        pendingFull = true;
        lookAfter = true;
      } else heldFull = true;
      return;
    }
    if (held.putOff()) {
      if (heldStudents.size >= STUDENTS_HELD) heldFull = true;
      else heldStudents.add(id);
    } else pendingStudents.add(id);
  };
  let context: RosterContext | undefined;
  const released$ = new Subject<void>();
  /** A change of the records that comes while passes are held has its pass at the release. */
  const held = heldWork(() => released$.next());
  const fullPass = async () => {
    const { written, deleted, context: passContext } = await options.full();
    context = passContext;
    return { written, deleted };
  };
  /** The pass, and whether it was a full one (a students' pass may need one). */
  const pass = async (
    full: boolean,
    aspects: ReadonlyArray<string>,
    studentIds: ReadonlyArray<string>,
  ): Promise<{ written: number; deleted: number; full: boolean }> => {
    if (full || context === undefined) return { ...(await fullPass()), full: true };
    let written = 0;
    let deleted = 0;
    const atMost = options.studentsPassAtMost?.(context.activeIds.size) ?? Number.POSITIVE_INFINITY;
    if (studentIds.length > atMost) return { ...(await fullPass()), full: true };
    if (studentIds.length > 0 && ownPass !== undefined) {
      const r = await ownPass(studentIds, context);
      if (r === undefined) return { ...(await fullPass()), full: true };
      context = r.context;
      written += r.written;
      deleted += r.deleted;
    }
    if (aspects.length > 0) {
      const r = await options.writeSome(aspects, await options.forAspects(aspects, context));
      written += r.written;
      deleted += r.deleted;
    }
    return { written, deleted, full: false };
  };
  const subscription: Subscription = rosterReconciles$({
    triggers$: merge(
      options.fullTriggers$.pipe(
        tap(() => {
          if (!held.putOff()) {
            pendingFull = true;
            lookAfter = true;
          } else heldFull = true;
        }),
      ),
      (options.studentTriggers$ ?? EMPTY).pipe(tap(studentChanged)),
      released$.pipe(
        tap(() => {
          if (heldFull) {
            pendingFull = true;
            lookAfter = true;
          } else for (const id of heldStudents) pendingStudents.add(id);
          heldFull = false;
          heldStudents.clear();
        }),
      ),
      options.aspectTriggers$.pipe(tap((aspect) => pendingAspects.add(aspect))),
      manual$.pipe(tap(() => (pendingFull = true))),
      // Neither the clock nor the second look sets off a look: no write was told before them.
      (options.clockTriggers$ ?? EMPTY).pipe(tap(() => (pendingFull = true))),
      look$.pipe(
        tap(() => {
          if (lookFull) pendingFull = true;
          for (const id of lookStudents) pendingLookStudents.add(id);
          lookFull = false;
          lookStudents.clear();
        }),
      ),
    ).pipe(takeUntil(stop$)),
    reconcile: () => {
      started += 1;
      const run = started;
      const full = pendingFull;
      const aspects = [...pendingAspects];
      // A change set off these students' pass: they are looked at again (not those of a look).
      const changed = full ? [] : [...pendingStudents];
      const studentIds = full ? [] : [...new Set([...pendingStudents, ...pendingLookStudents])];
      const look = (full && lookAfter) || changed.length > 0;
      pendingFull = false;
      pendingAspects.clear();
      pendingStudents.clear();
      pendingLookStudents.clear();
      if (full) lookAfter = false;
      return defer(async () => {
        try {
          return await pass(full, aspects, studentIds);
        } catch (e) {
          // Whatever this pass was to write is written by the next, full one (and looked at again).
          pendingFull = true;
          lookAfter ||= look;
          throw e;
        }
      }).pipe(
        tap((r) => {
          done$.next({ run, full: r.full });
          // A students' pass that needed the full one looks again as a full one did.
          if (look) scheduleLook(r.full, r.full ? [] : changed);
        }),
      );
    },
    debounceMs: options.debounceMs ?? 100,
    // A tablet's roster lags a rush by at most about a second (plus the pass itself).
    maxWaitMs: options.maxWaitMs ?? 1000,
    retryDelayMs: 1000,
    ...(options.onError === undefined ? {} : { onError: options.onError }),
  })
    .pipe(map(() => undefined))
    .subscribe({ error: (e: unknown) => options.onError?.(e) });
  return {
    refresh() {
      const after = started;
      return new Promise<void>((resolve) => {
        const sub = done$.subscribe(({ run, full }) => {
          if (run > after && full) {
            sub.unsubscribe();
            resolve();
          }
        });
        manual$.next();
      });
    },
    holdFullPasses: () => held.hold(),
    stop() {
      stop$.next();
      subscription.unsubscribe();
    },
  };
};
