/**
 * The records the service keeps, and what keeps its memory of them true: the caches of each backend
 * (decided by the backend profile), the repositories over the private, events, projections and audit
 * databases, the student directory loaded at start, and the two change feeds that keep both current
 * (the private one: this instance's caches, the directory and the roster's listings; the projections
 * one, on CouchDB only: the aspects other instances' pipelines commit). Each feed's subscription is
 * on the disposer stack.
 */
import type { Logger } from 'pino';
import { share, tap } from 'rxjs';
import type { ClassDoc, ClassSessionDoc } from '../domain/classes.js';
import type { SessionDoc } from '../domain/session.js';
import type { StudentDoc } from '../domain/student.js';
import type { UserDoc } from '../domain/user.js';
import type { Disposers } from '../lib/disposers.js';
import type { Metrics } from '../metrics/metrics.js';
import { auditLog } from '../store/auditLog.js';
import type { BackendProfile } from '../store/backendProfile.js';
import { type CheckinCaches, checkinStore } from '../store/checkins.js';
import { classStore } from '../store/classes.js';
import { consentStore } from '../store/consents.js';
import { type DocCache, forgetChanged, listingCache, storedRev } from '../store/docCache.js';
import { eventStore } from '../store/events.js';
import { familyPassStore } from '../store/familyPasses.js';
import { pickupStore } from '../store/pickups.js';
import { instanceIdOf } from '../store/pouch.js';
import { aspectChanged, type LoadedAspect, projectionStore } from '../store/projections.js';
import { roleStore } from '../store/roles.js';
import { sessionStore } from '../store/sessions.js';
import type { Store } from '../store/store.js';
import { studentStore } from '../store/students.js';
import { activeMatching } from '../store/studentViews.js';
import { userStore } from '../store/users.js';
import { followChanges$ } from '../sync/changeFeed.js';
import { type DirectoryPort, inMemoryDirectory } from '../sync/directoryPort.js';
import { takeDirectorySnapshot, writeDirectorySnapshot } from '../sync/directorySnapshot.js';
import { directoryMatching, type StudentDirectory, studentDirectory } from '../sync/studentDirectory.js';
import { wireCouchDirectory } from './couchDirectory.js';

/** The full student records held (about 1.5 KB of heap each). */
const STUDENT_CACHE_ENTRIES = 5_000;
/** Student records read at once while the directory loads. */
const LOAD_PAGE = 1_000;

export interface RecordsWiring {
  readonly store: Store;
  readonly profile: BackendProfile;
  readonly clock: () => Date;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly opened: Disposers;
  /**
   * The file the student directory is kept in across a graceful restart (embedded store only;
   * `src/sync/directorySnapshot.ts`). Without it every start reads every student record.
   */
  readonly directorySnapshot: string | undefined;
}

/**
 * Loads the directory from the snapshot when there is a usable one, else from the student records;
 * answers the private database's sequence the directory holds every change up to.
 */
const loadDirectory = async (
  directory: StudentDirectory,
  eachStudentPage: Parameters<StudentDirectory['loadPages']>[0],
  privateDb: Store['db']['private'],
  privateSeq: string | number,
  file: string | undefined,
  logger: Logger,
): Promise<string | number> => {
  // Sequences are numbers on the embedded store, the one backend with a snapshot.
  if (file !== undefined && typeof privateSeq === 'number') {
    const taken = await takeDirectorySnapshot(file, {
      databaseId: await instanceIdOf(privateDb),
      seq: privateSeq,
    });
    if (taken.kind === 'read') {
      directory.loadSummaries(taken.summaries);
      logger.info(
        { students: taken.summaries.length, changesSince: privateSeq - taken.seq },
        'student directory read from its snapshot',
      );
      return taken.seq;
    }
    if (taken.reason !== 'none')
      logger.warn({ reason: taken.reason }, 'student directory snapshot not used; reading the records');
  }
  await directory.loadPages(eachStudentPage);
  return privateSeq;
};

export const wireRecords = async (wiring: RecordsWiring) => {
  const { store, profile, clock, logger, metrics, opened, directorySnapshot } = wiring;
  const { cacheOf, sharedCacheOf, heldBackCacheOf } = profile;
  // Every request reads its session and its user.
  const userCache = cacheOf<UserDoc>(10_000);
  const sessionCache = cacheOf<SessionDoc>(10_000);
  // Check-ins read the session, the child, the record and the configuration. A class session and the
  // configuration may lag another instance's change by the private feed's delay: a check-in then goes
  // as it would have a moment earlier, and their writes are compare-and-swap (issue #23).
  const classSessionCache = sharedCacheOf<ClassSessionDoc>(1_000);
  // Every new student's class is read; classes are never deleted, and a change lags as a session's does.
  const classCache = sharedCacheOf<ClassDoc>(1_000);
  // Full records: a student's page, a change, an export. A check-in reads its child in the directory,
  // so the cache need not hold the roll; at 100,000 students the whole roll held did not fit the heap.
  const studentCache = cacheOf<StudentDoc>(STUDENT_CACHE_ENTRIES);
  const checkinCaches: CheckinCaches = {
    // Every write of a record is a compare-and-swap, and the answer after a settled event re-reads a
    // copy that cannot be what the event left (`checkinService`, `settledRecord`). Written by every
    // instance's pipeline: not cached on CouchDB (`backendProfile.ts` says why).
    records: heldBackCacheOf(5_000),
    config: sharedCacheOf(1),
  };
  const privateCaches: ReadonlyArray<DocCache<unknown>> = [
    userCache,
    sessionCache,
    classSessionCache,
    classCache,
    studentCache,
    checkinCaches.records,
    checkinCaches.config,
  ];
  const users = userStore(store.db.private, userCache);
  const sessions = sessionStore(store.db.private, sessionCache);
  const roles = roleStore(store.db.private, clock);
  const events = eventStore(store.db.events);
  await roles.ensureSystemRoles(clock().toISOString());
  // Repairs the last-admin guard if a change was interrupted half-way before the last stop.
  await users.rebuildActiveAdmins();
  const classes = classStore(store.db.private, classSessionCache, classCache);
  const students = studentStore(store.db.private, studentCache);
  const consents = consentStore(store.db.private);
  const pickupRecords = pickupStore(store.db.private);
  const familyPasses = familyPassStore(store.db.private);
  // What the roster's full pass lists besides the students (the directory holds those): held until the
  // private feed, which triggers the pass, tells of a change of their kind.
  const rosterListings = {
    sessions: listingCache(['classSession:'], () => classes.listSessions()),
    classes: listingCache(['class:'], () => classes.listClasses()),
    entries: listingCache(['pickupEntry:'], () => pickupRecords.allEntries()),
    grants: listingCache(['pickupGrant:'], () => pickupRecords.allGrants()),
    familyPasses: listingCache(['familyPass:'], () => familyPasses.all()),
  };
  const listings = Object.values(rosterListings);
  const directory = studentDirectory();
  // Read the sequence first and follow from it after loading: a change in between is applied twice
  // (harmlessly: the directory keeps the newest), never missed.
  const privateSeq = (await store.db.private.info()).update_seq;
  let port: DirectoryPort;
  let heldTo: string | number;
  // The import's matching: CouchDB's index of active students by name and birth date (0064), or the
  // directory on the embedded store (0068).
  let matching: ReturnType<typeof activeMatching>;
  // On CouchDB, puts off the student views' refreshes (an import holds it while its file is written).
  let holdViewRefreshes: (() => () => void) | undefined;
  if (store.backend === 'couchdb') {
    // CouchDB serves the roll from its views (decision 0056): nothing of it is read here but the
    // visitors; the consents are held as before.
    const couch = await wireCouchDirectory(
      store.db.private,
      directory,
      await consents.listAll(),
      clock,
      logger,
      opened,
    );
    port = couch.port;
    holdViewRefreshes = couch.holdRefreshes;
    heldTo = privateSeq;
    matching = activeMatching(store.db.private);
  } else {
    directory.load([], await consents.listAll());
    // A page at a time: the directory keeps a summary of each record, and the page is let go.
    heldTo = await loadDirectory(
      directory,
      (visit) => students.eachPage(LOAD_PAGE, visit),
      store.db.private,
      privateSeq,
      directorySnapshot,
      logger,
    );
    port = inMemoryDirectory(directory);
    matching = directoryMatching(directory);
  }
  // One live feed of the private database serves the directory and the roster's triggers: every feed
  // re-reads the database after each write, and the private database is written on every mutation.
  // From a snapshot it starts where the snapshot ends: what changed since reaches every follower.
  const feed = followChanges$(store.db.private, {
    since: heldTo,
    includeDocs: true,
    onRetry: (attempt) => {
      metrics.storeError('change_feed');
      logger.warn({ attempt }, 'private change feed lost; reconnecting');
      // What changed while the feed was down is told again from its last sequence; meanwhile nothing
      // held from before is trusted.
      for (const cache of privateCaches) cache.clear();
      for (const listing of listings) listing.clear();
    },
  }).pipe(share());
  // On the embedded store, belt and braces (every write passes through the stores, which keep their
  // caches); on CouchDB, how other instances' writes reach the shared caches. This process's own
  // writes come back with the revision the cache already holds, and stay.
  const forgetting = feed.subscribe((c) => {
    for (const cache of privateCaches) forgetChanged(cache, c.id, c.rev, storedRev);
    for (const listing of listings) listing.changed(c.id);
  });
  opened.add('private feed: caches', () => forgetting.unsubscribe());
  // The sequence of the last change the directory was given: a snapshot is current to it.
  let applied = heldTo;
  if (directorySnapshot !== undefined) {
    const file = directorySnapshot;
    // Closed after the feed below (the stack closes in reverse), so nothing changes the directory
    // while it is written; the HTTP server and the pipeline are closed before both.
    opened.add('student directory: snapshot', async () => {
      if (typeof applied !== 'number') return;
      try {
        await writeDirectorySnapshot(file, directory.summaries(), {
          databaseId: await instanceIdOf(store.db.private),
          seq: applied,
        });
      } catch (e) {
        // The next start reads the records instead: slower, never wrong.
        logger.warn(
          { errorName: e instanceof Error ? e.name : typeof e },
          'student directory snapshot not written',
        );
      }
    });
  }
  const following = port.follow(
    feed.pipe(
      tap((c) => {
        applied = c.seq;
      }),
    ),
    (id) =>
      logger.warn({ id }, 'undecodable document in the private database; skipped by the student directory'),
  );
  opened.add('private feed: directory', () => following.unsubscribe());
  // Where instances share the log, a keyed entry claims its decision in the requests database first.
  const auditTrail = auditLog(store.db.audit, {
    clock,
    ...(profile.oneProjectionWriter ? {} : { claims: store.db.requests }),
  });
  // In-flight requests and the pipeline have finished by then: the entries still buffered are written.
  opened.add('audit log', () => auditTrail.close());
  // Aspects: held on the embedded store, not on CouchDB (`backendProfile.ts` says why). Where
  // other instances' pipelines commit too, the projections' feed below forgets what they change and
  // names the forks the pipeline settles (decision 0038).
  const aspectCache = heldBackCacheOf<LoadedAspect>(20_000);
  const projectionFeed = profile.oneProjectionWriter
    ? undefined
    : followChanges$(store.db.projections, {
        since: (await store.db.projections.info()).update_seq,
        // Every leaf of each change: a fork shows as several (decision 0038).
        allLeaves: true,
        onRetry: (attempt) => {
          metrics.storeError('change_feed');
          logger.warn({ attempt }, 'projections change feed lost; reconnecting');
          aspectCache.clear();
        },
      }).pipe(share());
  if (projectionFeed !== undefined) {
    const forgettingAspects = projectionFeed.subscribe((c) => aspectChanged(aspectCache, c));
    opened.add('projections feed: aspect cache', () => forgettingAspects.unsubscribe());
  }
  const projections = projectionStore(store.db.projections, aspectCache);
  const checkins = checkinStore(store.db.private, checkinCaches);
  return {
    users,
    sessions,
    roles,
    events,
    classes,
    students,
    consents,
    pickupRecords,
    familyPasses,
    rosterListings,
    directory: port,
    holdViewRefreshes,
    activeMatching: matching,
    privateFeed: feed,
    projectionFeed,
    auditTrail,
    projections,
    checkins,
  };
};

export type Records = Awaited<ReturnType<typeof wireRecords>>;
