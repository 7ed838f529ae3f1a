/**
 * The roster the tablets replicate, kept in line with the records and the projections: a pass of
 * the students whose records changed (decision 0069), a full reconcile on other changes of the
 * private database (and every ten minutes, as sessions and day keys roll over), and one of the
 * aspects each commit names.
 */
import type { Logger } from 'pino';
import { filter, interval, map, mergeMap, type Observable } from 'rxjs';
import type { Disposers } from '../lib/disposers.js';
import type { Metrics } from '../metrics/metrics.js';
import type { BackendProfile } from '../store/backendProfile.js';
import { copiesOf } from '../store/copies.js';
import type { ProjectionStore } from '../store/projections.js';
import { rosterStore } from '../store/roster.js';
import type { Store } from '../store/store.js';
import type { StudentStore } from '../store/students.js';
import { type Change, followChanges$ } from '../sync/changeFeed.js';
import type { EventPipeline } from '../sync/pipelineRuntime.js';
import { rosterForAspects, rosterFullPass, rosterStudentsPass } from '../sync/rosterInput.js';
import {
  feedsRoster,
  projectionFeedsRoster,
  type RosterReconciler,
  startRosterReconciler,
} from '../sync/rosterReconciler.js';

export interface RosterReconcilerWiring {
  readonly store: Store;
  readonly profile: BackendProfile;
  /** What the roster should hold (`rosterFullPass`'s dependencies, but the roster). */
  readonly wanted: Omit<Parameters<typeof rosterFullPass>[0], 'roster' | 'students'> & {
    readonly students: Pick<StudentStore, 'eachPage' | 'getMany'>;
  };
  readonly projections: ProjectionStore;
  readonly pipeline: EventPipeline;
  /** The private database's live feed, shared with the student directory. */
  readonly privateFeed: Observable<Change>;
  /** The projections database's live feed where other instances commit aspects too, shared with the aspect cache. */
  readonly projectionFeed: Observable<Change> | undefined;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly opened: Disposers;
}

const STUDENT_PREFIX = 'student:';

/**
 * A students' pass reads each student's documents by id, a full pass the roll by ranges: past a
 * share of the roll the full pass costs less (`bench/rosterPassProbe.ts`, decision 0069: by id some
 * 0.45 ms of the service's CPU a student embedded, against 0.3 ms a student of the roll; on CouchDB
 * 7.6–9.1 ms of its CPU a student, against 1.1–1.5 ms). A page of students always goes by id.
 */
const STUDENTS_PASS_FLOOR = 2_500;

/** How long after a pass a change set off the roster looks again, where copies may lag (a cluster). */
export const SECOND_LOOK_MS = 2_000;

export const wireRosterReconciler = (w: RosterReconcilerWiring): RosterReconciler => {
  const roster = rosterStore(w.store.db.roster);
  // A cluster's range reads may lag what its feed told (one copy of each shard serves them); a single
  // node's, or the embedded store's, never do. Until the database has said, a second look is taken,
  // and it is asked again at the next pass (a start while CouchDB did not answer).
  let copies = w.store.backend === 'embedded' ? 1 : undefined;
  let asking = false;
  const learnCopies = () => {
    if (copies !== undefined || asking) return;
    asking = true;
    copiesOf(w.store.db.private)
      .then(
        (n) => {
          copies = n;
        },
        () => undefined,
      )
      .finally(() => {
        asking = false;
      });
  };
  learnCopies();
  const reconciler = startRosterReconciler({
    full: rosterFullPass({ ...w.wanted, roster }),
    students: rosterStudentsPass({ ...w.wanted, roster }),
    studentsPassAtMost: (active) =>
      Math.max(STUDENTS_PASS_FLOOR, active * (w.store.backend === 'embedded' ? 0.5 : 0.125)),
    forAspects: rosterForAspects({ projections: w.projections }),
    writeSome: (ids, docs) => roster.reconcileSome(ids, docs),
    secondLookMs: () => {
      learnCopies();
      return copies === 1 ? undefined : SECOND_LOOK_MS;
    },
    // A student's own record: that student's pass; anything else the roster is made of: a full one.
    fullTriggers$: w.privateFeed.pipe(filter((c) => feedsRoster(c.id) && !c.id.startsWith(STUDENT_PREFIX))),
    studentTriggers$: w.privateFeed.pipe(
      filter((c) => c.id.startsWith(STUDENT_PREFIX)),
      map((c) => c.id.slice(STUDENT_PREFIX.length)),
    ),
    // Sessions and day keys roll over with the UTC day.
    clockTriggers$: interval(10 * 60_000),
    // Where this process's pipeline is the projections' one writer it names every aspect it commits:
    // no live feed (a changes query and a read per commit) is needed. Where other instances commit
    // aspects too, the database's feed is followed.
    aspectTriggers$: w.profile.oneProjectionWriter
      ? w.pipeline.outcomes$.pipe(
          mergeMap((o) => o.events.map((e) => e.aspect)),
          filter((aspect) => projectionFeedsRoster(`aspect:${aspect}`)),
        )
      : (w.projectionFeed ?? followChanges$(w.store.db.projections, { since: 'now' })).pipe(
          filter((c) => projectionFeedsRoster(c.id)),
          map((c) => c.id.slice('aspect:'.length)),
        ),
    onError: (e) => {
      // The metric label and the log line keep the words operators' dashboards and alerts know them by.
      w.metrics.storeError('roster_projector');
      w.logger.warn(
        { errorName: e instanceof Error ? e.name : typeof e },
        'roster projection failed; retrying',
      );
    },
  });
  w.opened.add('roster reconciler', () => reconciler.stop());
  return reconciler;
};
