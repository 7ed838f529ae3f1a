/**
 * Starting and stopping the whole service: store, app and HTTP server. `main.ts` calls it with the
 * process environment; black-box tests call it with their own configuration and a loopback port.
 */
import { hkdfSync } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { share } from 'rxjs';
import { attendanceService } from './attendance/attendanceService.js';
import { checkinService } from './attendance/checkinService.js';
import { headcountService } from './attendance/headcountService.js';
import { pageService } from './attendance/pageService.js';
import { pickupService } from './attendance/pickupService.js';
import { roleService } from './auth/roleService.js';
import { sessionService } from './auth/sessionService.js';
import { userService } from './auth/userService.js';
import type { Config } from './config/config.js';
import { resolveJwtSecret } from './config/jwtSecret.js';
import type { ClassDoc, ClassSessionDoc } from './domain/classes.js';
import type { SessionDoc } from './domain/session.js';
import type { StudentDoc } from './domain/student.js';
import type { UserDoc } from './domain/user.js';
import { makeApp } from './http/app.js';
import { devAuthenticator, jwtAuthenticator, jwtKey } from './http/authenticate.js';
import { answerClientError } from './http/clientError.js';
import type { AppDeps } from './http/deps.js';
import { DEFAULT_IDEMPOTENCY_SETTINGS, type IdempotencySettings } from './http/idempotency.js';
import { routes as defaultRoutes } from './http/registry.js';
import type { Route } from './http/route.js';
import { type Disposers, disposers } from './lib/disposers.js';
import { createLogger } from './log/logger.js';
import { type Metrics, noMetrics, prometheusMetrics } from './metrics/metrics.js';
import { devNotifier, type Notifier, webhookNotifier } from './notify/notifier.js';
import { consentService } from './registration/consentService.js';
import { demoDataService } from './registration/demoData.js';
import { photoService } from './registration/photoService.js';
import { studentExportService } from './registration/studentExport.js';
import { studentImportService } from './registration/studentImport.js';
import { studentService } from './registration/studentService.js';
import { reportService } from './reports/reportService.js';
import { classService } from './schedules/classService.js';
import { scheduleService } from './schedules/scheduleService.js';
import { auditLog } from './store/auditLog.js';
import { backendProfile } from './store/backendProfile.js';
import { type CheckinCaches, checkinStore } from './store/checkins.js';
import { classStore } from './store/classes.js';
import { consentStore } from './store/consents.js';
import { type DocCache, forgetChanged, listingCache, storedRev } from './store/docCache.js';
import { type EventStore, eventStore } from './store/events.js';
import { replicationInstanceId } from './store/instance.js';
import { pageStore } from './store/pages.js';
import { photoStore } from './store/photos.js';
import { pickupStore } from './store/pickups.js';
import {
  aspectChanged,
  type LoadedAspect,
  type ProjectionStore,
  projectionStore,
} from './store/projections.js';
import { replicaSource } from './store/replicaSource.js';
import { replicationCheckpoints } from './store/replicationCheckpoints.js';
import { roleStore } from './store/roles.js';
import { scheduleStore } from './store/schedules.js';
import { sessionStore } from './store/sessions.js';
import { openStore, type Store, storeLocation } from './store/store.js';
import { type StudentStore, studentStore } from './store/students.js';
import { subjectRecords } from './store/subjectRecords.js';
import { type UserStore, userStore } from './store/users.js';
import { followChanges$ } from './sync/changeFeed.js';
import { replicationService } from './sync/replicationService.js';
import { studentDirectory } from './sync/studentDirectory.js';
import { syncService } from './sync/syncService.js';
import { wireJobs } from './wiring/jobs.js';
import { wirePipeline } from './wiring/pipeline.js';
import { wireRateLimits } from './wiring/rateLimits.js';
import { wireRosterReconciler } from './wiring/rosterReconciler.js';

/** The stores behind the services, for tests that look beneath the API; routes never see them. */
export interface ServiceStores {
  readonly users: UserStore;
  readonly students: StudentStore;
  readonly events: EventStore;
  readonly projections: ProjectionStore;
}

export interface RunningService {
  readonly url: string;
  readonly server: Server;
  readonly store: Store;
  readonly deps: AppDeps;
  readonly stores: ServiceStores;
  /** Stops accepting, lets in-flight requests finish (up to `graceMs`), then closes the store. */
  stop(graceMs?: number): Promise<void>;
}

export interface ServiceOptions {
  readonly logger?: Logger;
  readonly clock?: () => Date;
  readonly routes?: ReadonlyArray<Route>;
  readonly idempotency?: Partial<IdempotencySettings>;
  readonly notifier?: Notifier;
  /**
   * How long a check-in or a student change waits for the pipeline's decision before it answers 503
   * "recorded but not applied yet" (5 s). Tests shorten it to reach that answer.
   */
  readonly settleTimeoutMs?: number;
}

export const startService = async (
  unresolved: Config,
  options: ServiceOptions = {},
): Promise<RunningService> => {
  const config = await resolveJwtSecret(unresolved);
  const store = await openStore(storeLocation(config), { requestTimeoutMs: config.storeTimeoutMs });
  // What was opened, closed in reverse order: by the graceful stop, or by a start that fails half-way.
  const opened = disposers();
  opened.add('store', () => store.close());
  try {
    return await wire(config, options, store, opened);
  } catch (e) {
    await opened.disposeAll();
    throw e;
  }
};

const wire = async (
  config: Config & { readonly jwtSecret: string },
  options: ServiceOptions,
  store: Store,
  opened: Disposers,
): Promise<RunningService> => {
  const logger = options.logger ?? createLogger(config.logLevel);
  const clock = options.clock ?? (() => new Date());
  // Recorded only when someone may read them (0021).
  const metrics: Metrics = config.metrics === undefined ? noMetrics : prometheusMetrics({ clock });
  const key = jwtKey(config.jwtSecret);
  // Embedded or CouchDB, decided once: what the backend implies for caches, claims and feeds.
  const profile = backendProfile(store.backend);
  const { cacheOf, sharedCacheOf } = profile;
  // Every request reads its session and its user.
  const userCache = cacheOf<UserDoc>(10_000);
  const sessionCache = cacheOf<SessionDoc>(10_000);
  // Check-ins read the session, the child, the record and the configuration. A class session and the
  // configuration may lag another instance's change by the private feed's delay: a check-in then goes
  // as it would have a moment earlier, and their writes are compare-and-swap (issue #23).
  const classSessionCache = sharedCacheOf<ClassSessionDoc>(1_000);
  // Every new student's class is read; classes are never deleted, and a change lags as a session's does.
  const classCache = sharedCacheOf<ClassDoc>(1_000);
  // Every check-in reads its child, and in a session's rush each child once: a cache smaller than the
  // roll misses on nearly every check-in. It is filled at start from the records the directory loads.
  const studentCache = cacheOf<StudentDoc>(20_000);
  const checkinCaches: CheckinCaches = {
    // Every write of a record is a compare-and-swap, and the answer after a settled event re-reads a
    // copy that cannot be what the event left (`checkinService`, `settledRecord`).
    records: sharedCacheOf(5_000),
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
  const sessionSvc = sessionService({
    users,
    sessions,
    roles,
    key,
    clock,
    settings: {
      accessTokenTtlSeconds: config.accessTokenTtlSeconds,
      refreshTokenTtlSeconds: config.refreshTokenTtlSeconds,
      sessionTtlSeconds: config.sessionTtlSeconds,
    },
  });
  const classes = classStore(store.db.private, classSessionCache, classCache);
  const students = studentStore(store.db.private, studentCache);
  const consents = consentStore(store.db.private);
  const pickupRecords = pickupStore(store.db.private);
  // What the roster's full pass lists besides the students (the directory holds those): held until the
  // private feed, which triggers the pass, tells of a change of their kind.
  const rosterListings = {
    sessions: listingCache(['classSession:'], () => classes.listSessions()),
    classes: listingCache(['class:'], () => classes.listClasses()),
    entries: listingCache(['pickupEntry:'], () => pickupRecords.allEntries()),
    grants: listingCache(['pickupGrant:'], () => pickupRecords.allGrants()),
  };
  const listings = Object.values(rosterListings);
  const directory = studentDirectory();
  // Read the sequence first and follow from it after loading: a change in between is applied twice
  // (harmlessly: the directory keeps the newest), never missed.
  const privateSeq = (await store.db.private.info()).update_seq;
  const allStudents = await students.listAll();
  directory.load(allStudents, await consents.listAll());
  // Nothing writes yet (the pipeline and the server start below), so these are the current records;
  // they share the directory's objects, so the cache adds only its index.
  for (const s of allStudents) studentCache.remember(s._id, s);
  // One live feed of the private database serves the directory and the roster's triggers: every feed
  // re-reads the database after each write, and the private database is written on every mutation.
  const feed = followChanges$(store.db.private, {
    since: privateSeq,
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
  const following = directory.follow(feed, (id) =>
    logger.warn({ id }, 'undecodable document in the private database; skipped by the student directory'),
  );
  opened.add('private feed: directory', () => following.unsubscribe());
  const auditTrail = auditLog(store.db.audit, { clock });
  // In-flight requests and the pipeline have finished by then: the entries still buffered are written.
  opened.add('audit log', () => auditTrail.close());
  // Aspects are cached on both backends. On CouchDB other instances' pipelines commit them too, so the
  // projections' feed forgets what they change; until it does, a stale aspect can only make a commit
  // meet a 409 (compare-and-swap on its revision: the retry reads the store) or base a decision on the
  // version of a moment ago, which the conflict rule resolves as it does a race (issue #23).
  const aspectCache = sharedCacheOf<LoadedAspect>(20_000);
  const projectionFeed = profile.oneProjectionWriter
    ? undefined
    : followChanges$(store.db.projections, {
        since: (await store.db.projections.info()).update_seq,
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
  const pipeline = await wirePipeline({
    store,
    projections,
    auditTrail,
    students,
    classes,
    checkins,
    directory,
    clock,
    logger,
    metrics,
    opened,
  });
  const notifier =
    options.notifier ??
    (config.notifyWebhookUrl === undefined ? devNotifier(logger) : webhookNotifier(config.notifyWebhookUrl));
  const pickups = pickupService({ pickups: pickupRecords, students, events, notifier, clock });
  const settling = options.settleTimeoutMs === undefined ? {} : { settleTimeoutMs: options.settleTimeoutMs };
  const studentSvc = studentService({ students, directory, classes, events, pipeline, clock, ...settling });
  const photos = photoStore(store.db.private);
  const photoSvc = photoService({
    photos,
    students,
    studentService: studentSvc,
    consents,
    directory,
    clock,
  });
  const syncSvc = syncService({ events, students, classes, pipeline, clock });
  const rosterReconciler = wireRosterReconciler({
    store,
    profile,
    wanted: {
      students,
      directory,
      // The same rule of who may collect a child, over the held pickup lists.
      pickups: pickupService({
        pickups: {
          ...pickupRecords,
          allEntries: rosterListings.entries.read,
          allGrants: rosterListings.grants.read,
        },
        students,
        events,
        notifier,
        clock,
      }),
      classes: {
        listSessions: (filter) =>
          filter === undefined ? rosterListings.sessions.read() : classes.listSessions(filter),
        listClasses: rosterListings.classes.read,
      },
      checkins,
      projections,
      clock,
      thumbnail: photoSvc.rosterThumbnail,
    },
    projections,
    pipeline,
    privateFeed: feed,
    projectionFeed,
    logger,
    metrics,
    opened,
  });
  const limits = wireRateLimits({
    store,
    profile,
    jwtSecret: config.jwtSecret,
    exchangeMs: config.rateLimitExchangeMs,
    clock,
    logger,
    metrics,
    opened,
  });
  const deps: AppDeps = {
    config,
    health: store,
    authenticator:
      config.authMode === 'dev'
        ? devAuthenticator(config.devTokens)
        : jwtAuthenticator({ key, clock, checkPrincipal: sessionSvc.checkPrincipal }),
    logger,
    metrics,
    clock,
    rateLimiter: limits.rateLimiter,
    callerRateLimiter: limits.callers,
    auth: {
      sessions: sessionSvc,
      users: userService({ users, sessions, roles, events, clock }),
      roles: roleService({ roles, users, clock }),
    },
    classes: classService({ classes, clock }),
    schedules: scheduleService({ schedules: scheduleStore(store.db.private), classes, checkins, clock }),
    registration: {
      students: studentSvc,
      directory,
      consents: consentService({
        consents,
        students,
        users,
        directory,
        events,
        clock,
        onNoActiveConsent: photoSvc.erase,
      }),
      imports: studentImportService({
        students,
        studentService: studentSvc,
        classes,
        audit: auditTrail,
        clock,
        // Derived from the JWT secret, so every instance derives the same id for the same row.
        idKey: new Uint8Array(hkdfSync('sha256', config.jwtSecret, 'chamada', 'imported student ids', 32)),
      }),
      photos: photoSvc,
      exports: studentExportService({
        students,
        consents,
        directory,
        records: subjectRecords(store.db),
        photos,
        audit: auditTrail,
        clock,
      }),
      demo: demoDataService({ classes, students: studentSvc, clock }),
    },
    audit: auditTrail,
    attendance: {
      checkins: checkinService({
        checkins,
        pipeline,
        students,
        directory,
        studentService: studentSvc,
        classes,
        pickups,
        events,
        clock,
        ...settling,
      }),
      pickups,
      marks: attendanceService({ events, students, classes, pipeline, clock }),
      headcount: headcountService({ classes, projections }),
      pages: pageService({
        checkins,
        students,
        classes,
        pages: pageStore(store.db.private),
        notifier,
        clock,
        onNotifierFailure: (e) =>
          logger.warn(
            { errorName: e instanceof Error ? e.name : typeof e },
            'a page to a guardian was not delivered',
          ),
      }),
    },
    sync: { pipeline, service: syncSvc },
    replication: {
      service: replicationService({
        instanceId: await replicationInstanceId(store.db.private),
        roster: replicaSource(store.db.roster, 'roster'),
        eventsInfo: async () => {
          const info = await store.db.events.info();
          return { db_name: 'events', update_seq: info.update_seq, doc_count: info.doc_count };
        },
        checkpoints: replicationCheckpoints(store.db.private),
        events,
        sync: syncSvc,
      }),
      reconciler: rosterReconciler,
    },
    reports: reportService({ projections, students, classes }),
    secrets: {
      cursorKey: new Uint8Array(hkdfSync('sha256', config.jwtSecret, 'chamada', 'paging cursor key', 32)),
    },
    idempotency: {
      ledger: profile.ledgerOf(store.db.requests),
      settings: { ...DEFAULT_IDEMPOTENCY_SETTINGS, ...options.idempotency },
    },
  };
  wireJobs({ ledger: deps.idempotency.ledger, schedules: deps.schedules, clock, logger, metrics, opened });
  const app = makeApp(deps, options.routes ?? defaultRoutes);
  const server = createServer(app);
  // What Node's parser refuses never reaches Express: answered in the envelope here (0005).
  server.on('clientError', answerClientError(logger));
  // Slow or idle clients must not hold sockets for ever (tablets on bad Wi-Fi open many).
  server.headersTimeout = 20_000;
  server.requestTimeout = 60_000;
  server.keepAliveTimeout = 5_000;
  // A port already taken rejects here, and `startService` closes what was opened.
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the server has no TCP address');
  const { port } = address satisfies AddressInfo;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  let stopping: Promise<void> | undefined;
  return {
    url: `http://${host}:${port}`,
    server,
    store,
    deps,
    stores: { users, students, events, projections },
    stop(graceMs = 10_000) {
      stopping ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        const timer = setTimeout(() => server.closeAllConnections(), graceMs);
        await closed;
        clearTimeout(timer);
        const failures = await opened.disposeAll();
        const first = failures[0];
        if (first !== undefined) throw first.error;
      })();
      return stopping;
    },
  };
};
