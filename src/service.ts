/**
 * Starting and stopping the whole service: store, app and HTTP server. `main.ts` calls it with the
 * process environment; black-box tests call it with their own configuration and a loopback port.
 */
import { hkdfSync } from 'node:crypto';
import type { Server } from 'node:http';
import type { Logger } from 'pino';
import { attendanceService } from './attendance/attendanceService.js';
import { checkinService } from './attendance/checkinService.js';
import { headcountService } from './attendance/headcountService.js';
import { pageService } from './attendance/pageService.js';
import { pickupService } from './attendance/pickupService.js';
import { volunteerService } from './attendance/volunteerService.js';
import { roleService } from './auth/roleService.js';
import { sessionService } from './auth/sessionService.js';
import { userService } from './auth/userService.js';
import { type BackupSource, backupStream, liveSource } from './backup/backup.js';
import { runServiceBackup } from './backup/backupFiles.js';
import type { BackupSchedule, Config } from './config/config.js';
import { resolveJwtSecret } from './config/jwtSecret.js';
import { webhookKey } from './crypto/webhookSignature.js';
import type { DeliveryLog } from './domain/notifications.js';
import { makeApp } from './http/app.js';
import { devAuthenticator, jwtAuthenticator, jwtKey, withPrintAgents } from './http/authenticate.js';
import { answerClientError } from './http/clientError.js';
import type { AppDeps } from './http/deps.js';
import { DEFAULT_IDEMPOTENCY_SETTINGS, type IdempotencySettings } from './http/idempotency.js';
import { routes as defaultRoutes } from './http/registry.js';
import type { Route } from './http/route.js';
import { type Disposers, disposers } from './lib/disposers.js';
import { waitAtMost } from './lib/timeouts.js';
import { createLogger } from './log/logger.js';
import { type Metrics, noMetrics, prometheusMetrics } from './metrics/metrics.js';
import { devNotifier, type Notifier, webhookNotifier } from './notify/notifier.js';
import { isAgentToken } from './printing/printAgentService.js';
import { consentService } from './registration/consentService.js';
import { demoDataService } from './registration/demoData.js';
import { familyPassService } from './registration/familyPassService.js';
import { photoService } from './registration/photoService.js';
import { retentionService } from './registration/retentionService.js';
import { studentExportService } from './registration/studentExport.js';
import { studentImportService } from './registration/studentImport.js';
import { studentService } from './registration/studentService.js';
import { reportService } from './reports/reportService.js';
import { nextBackupAt } from './rules/backupSchedule.js';
import { classService } from './schedules/classService.js';
import { scheduleService } from './schedules/scheduleService.js';
import { auditRetention } from './store/auditRetention.js';
import { backendProfile } from './store/backendProfile.js';
import { deliveryLog } from './store/deliveryLog.js';
import { isRemote } from './store/docs.js';
import type { EventStore } from './store/events.js';
import type { LevelDownFactory } from './store/guardedLevel.js';
import { replicationInstanceId } from './store/instance.js';
import { pageStore } from './store/pages.js';
import { photoStore } from './store/photos.js';
import type { ProjectionStore } from './store/projections.js';
import { replicaSource } from './store/replicaSource.js';
import { replicationCheckpoints } from './store/replicationCheckpoints.js';
import { retentionConfigStore } from './store/retentionConfig.js';
import { rosterStore } from './store/roster.js';
import { scheduleStore } from './store/schedules.js';
import {
  databaseAddress,
  type IndexMove,
  openStore,
  type Store,
  type StoreOpening,
  storeLocation,
} from './store/store.js';
import type { StudentStore } from './store/students.js';
import { subjectRecords } from './store/subjectRecords.js';
import type { UserStore } from './store/users.js';
import { volunteerStore } from './store/volunteers.js';
import { replicationService } from './sync/replicationService.js';
import { syncService } from './sync/syncService.js';
import { listen } from './wiring/httpServer.js';
import { type ServiceBackups, wireJobs } from './wiring/jobs.js';
import { wirePipeline } from './wiring/pipeline.js';
import { wirePrinting } from './wiring/printing.js';
import { wireRateLimits } from './wiring/rateLimits.js';
import { wireRecords } from './wiring/records.js';
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
  /** The embedded store's LevelDB (`guardedLevel.ts`); tests give one whose calls stall or fail. */
  readonly levelDown?: LevelDownFactory;
}

/**
 * The longest an import waits after a batch for the pipeline (embedded store, 0065): a pipeline that
 * cannot catch up (a failing page) holds the file this long a batch at most.
 */
const IMPORT_PACE_MS = 2_000;

/** The service's own backups (0044): each run reads the store as a live backup does. */
const serviceBackups = (backup: BackupSchedule, source: BackupSource, logger: Logger): ServiceBackups => ({
  run: (now) =>
    runServiceBackup({
      dir: backup.dir,
      keepDays: backup.keepDays,
      source: () => backupStream({ source }),
      now,
    }).catch((e: unknown) => {
      // The job keeps only the error's name; a file system's code (ENOSPC, EACCES) is what the
      // operator needs, and names no data.
      const code = e instanceof Error && 'code' in e && typeof e.code === 'string' ? e.code : undefined;
      logger.warn({ errorName: e instanceof Error ? e.name : typeof e, code }, 'service backup run failed');
      throw e;
    }),
  nextAt: (now) => nextBackupAt(now, backup.at, backup.timeZone),
});

export const startService = async (
  unresolved: Config,
  options: ServiceOptions = {},
): Promise<RunningService> => {
  const config = await resolveJwtSecret(unresolved);
  const store = await openStore(storeLocation(config), {
    requestTimeoutMs: config.storeTimeoutMs,
    ...(options.levelDown === undefined ? {} : { levelDown: options.levelDown }),
  });
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

const errorNameOf = (e: unknown): string => (e instanceof Error ? e.name : typeof e);

/** The retention job's next daily run (0045): the backups' rule of a wall-clock time in a zone. */
const nextRetentionAt = (config: Pick<Config, 'retention'>, now: Date): Date =>
  nextBackupAt(now, config.retention.at, config.retention.timeZone);

/** The webhook notifier when NOTIFY_WEBHOOK_URL is set (signed when NOTIFY_WEBHOOK_SECRET is), else the log. */
const notifierOf = (config: Config, deliveries: DeliveryLog, logger: Logger): Notifier => {
  if (config.notifyWebhookUrl === undefined) return devNotifier(logger);
  const signingKey =
    config.notifyWebhookSecret === undefined ? undefined : webhookKey(config.notifyWebhookSecret);
  return webhookNotifier({
    url: config.notifyWebhookUrl,
    ...(signingKey === undefined ? {} : { signingKey }),
    deliveries,
    onFailedDelivery: (d) =>
      logger.warn(
        { deliveryId: d.deliveryId, purpose: d.purpose, attempts: d.attempts.length },
        'a notification was not delivered',
      ),
    onLogFailure: (e) => logger.warn({ errorName: errorNameOf(e) }, 'notification delivery log write failed'),
  });
};

/** What opening the store changed in the events database (decision 0063), and what it left open. */
const logStoreOpening = (opening: StoreOpening, logger: Logger): void => {
  if (opening.eventsGuardRemoved)
    logger.info(
      'removed the events database guard an earlier version installed (validate_doc_update); the ' +
        'event pipeline reports events changed past the service instead',
    );
  if (opening.eventsSecurity === 'set')
    logger.info("the events database admitted every user: its _security now admits CouchDB's admins only");
  if (opening.eventsSecurity === 'members')
    logger.warn(
      "the events database's _security names members besides CouchDB's admins: they can write events " +
        'past the service (the event pipeline reports what they change)',
    );
};

/** The indexes an earlier version laid out one a design document, moved into one while the service runs. */
const logIndexMoves = (moves: Promise<ReadonlyArray<IndexMove>>, logger: Logger): void => {
  void moves.then((settled) => {
    for (const move of settled) {
      if (move.outcome === 'moved')
        logger.info(
          { database: move.database },
          "moved the database's indexes into one design document (built, then the old ones removed)",
        );
      else if (move.outcome === 'failed')
        logger.warn(
          { database: move.database, errorName: errorNameOf(move.error) },
          "moving the database's indexes into one design document failed; the old ones serve, and the next start tries again",
        );
    }
  });
};

const wire = async (
  config: Config & { readonly jwtSecret: string },
  options: ServiceOptions,
  store: Store,
  opened: Disposers,
): Promise<RunningService> => {
  const logger = options.logger ?? createLogger(config.logLevel);
  const clock = options.clock ?? (() => new Date());
  logStoreOpening(store.opening, logger);
  logIndexMoves(store.indexMoves, logger);
  const backupSource = liveSource(store, storeLocation(config));
  // Recorded only when someone may read them (0021).
  const metrics: Metrics = config.metrics === undefined ? noMetrics : prometheusMetrics({ clock });
  const key = jwtKey(config.jwtSecret);
  // Embedded or CouchDB, decided once: what the backend implies for caches, claims and feeds.
  const profile = backendProfile(store.backend);
  // Beside the private database's folder (its name carries the deployment's prefix).
  const directorySnapshot =
    store.backend === 'embedded'
      ? `${databaseAddress(storeLocation(config), 'private')}.directory.json`
      : undefined;
  const records = await wireRecords({ store, profile, clock, logger, metrics, opened, directorySnapshot });
  const { users, events, classes, students, directory, projections, checkins } = records;
  const volunteerSvc = volunteerService({
    volunteers: volunteerStore(store.db.private),
    classes,
    users,
    clock,
  });
  const sessionSvc = sessionService({
    users,
    sessions: records.sessions,
    roles: records.roles,
    key,
    clock,
    settings: {
      accessTokenTtlSeconds: config.accessTokenTtlSeconds,
      refreshTokenTtlSeconds: config.refreshTokenTtlSeconds,
      sessionTtlSeconds: config.sessionTtlSeconds,
    },
  });
  const pipeline = await wirePipeline({
    store,
    projections,
    auditTrail: records.auditTrail,
    students,
    classes,
    checkins,
    directory,
    clock,
    logger,
    metrics,
    opened,
    projectionFeed: records.projectionFeed,
  });
  const deliveries = deliveryLog(store.db.requests, {
    clock,
    onCleanupFailure: (e) =>
      logger.warn({ errorName: errorNameOf(e) }, 'notification delivery log cleanup failed'),
  });
  const notifier = options.notifier ?? notifierOf(config, deliveries, logger);
  const pickups = pickupService({ pickups: records.pickupRecords, students, events, notifier, clock });
  const settling = options.settleTimeoutMs === undefined ? {} : { settleTimeoutMs: options.settleTimeoutMs };
  const photos = photoStore(store.db.private);
  const studentSvc = studentService({
    students,
    photos,
    directory,
    classes,
    events,
    pipeline,
    clock,
    ...settling,
  });
  const ledger = profile.ledgerOf(store.db.requests);
  const retentionSvc = retentionService({
    config: retentionConfigStore(store.db.private),
    students,
    directory,
    photos,
    events,
    subjects: subjectRecords(store.db),
    consents: records.consents,
    pickups: records.pickupRecords,
    checkins,
    pages: pageStore(store.db.private),
    projections,
    audit: auditRetention(store.db.audit),
    idempotency: ledger,
    pipeline,
    clock,
    nextRunAt: (now) => nextRetentionAt(config, now),
  });
  const familyPassSvc = familyPassService({
    students,
    passes: records.familyPasses,
    secret: (at) => checkins.secret(at),
    rosterFamily: rosterStore(store.db.roster).family,
    clock,
  });
  const photoSvc = photoService({
    photos,
    students,
    studentService: studentSvc,
    consents: records.consents,
    directory,
    clock,
  });
  const syncSvc = syncService({
    events,
    students,
    classes,
    pipeline,
    clock,
    admission: {
      getSession: (id) => classes.getSession(id),
      getClass: (id) => classes.getClass(id),
      sessionAspects: (sessionId) => projections.projectPrefix(`checkin:${sessionId}:`),
      volunteersInRoom: (sessionId) => volunteerSvc.inRoom(sessionId),
      imageConsents: async (studentId) =>
        (await records.consents.listForSubject('STUDENT', studentId)).length,
      requiredFields: async () => (await checkins.config()).requiredFields,
      recordExceptions: (exceptions) => projections.recordAdmissionExceptions(exceptions),
    },
  });
  const rosterReconciler = wireRosterReconciler({
    store,
    profile,
    wanted: {
      students,
      directory,
      // The same rule of who may collect a child, over the held pickup lists.
      pickups: pickupService({
        pickups: {
          ...records.pickupRecords,
          allEntries: records.rosterListings.entries.read,
          allGrants: records.rosterListings.grants.read,
        },
        students,
        events,
        notifier,
        clock,
      }),
      classes: {
        listSessions: (filter) =>
          filter === undefined ? records.rosterListings.sessions.read() : classes.listSessions(filter),
        listClasses: records.rosterListings.classes.read,
      },
      checkins,
      volunteersInRoom: volunteerSvc.inRoom,
      projections,
      clock,
      familyPassGenerations: records.rosterListings.familyPasses.read,
      thumbnail: photoSvc.rosterThumbnail,
    },
    projections,
    pipeline,
    privateFeed: records.privateFeed,
    projectionFeed: records.projectionFeed,
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
  const schedules = scheduleService({ schedules: scheduleStore(store.db.private), classes, checkins, clock });
  const printing = wirePrinting({
    store,
    checkins,
    students,
    classes,
    settings: config.printing,
    // The stub carries the family's pass, as the kiosk's does online; a child without one prints none.
    passOf: async (studentId) => {
      const answer = await familyPassSvc.content(studentId);
      return answer._tag === 'Right' ? answer.right.content : undefined;
    },
    clock,
    logger,
    opened,
    agentTokenKey: new Uint8Array(
      hkdfSync('sha256', config.jwtSecret, 'chamada', 'print agent token key', 32),
    ),
  });
  const deps: AppDeps = {
    config,
    health: store,
    authenticator: withPrintAgents(
      config.authMode === 'dev'
        ? devAuthenticator(config.devTokens)
        : jwtAuthenticator({ key, clock, checkPrincipal: sessionSvc.checkPrincipal }),
      { isAgentToken, authenticate: (token) => printing.agents.authenticate(token) },
    ),
    logger,
    metrics,
    clock,
    rateLimiter: limits.rateLimiter,
    callerRateLimiter: limits.callers,
    auth: {
      sessions: sessionSvc,
      users: userService({ users, sessions: records.sessions, roles: records.roles, events, clock }),
      roles: roleService({ roles: records.roles, users, clock }),
    },
    classes: classService({
      classes,
      clock,
      afterClassReactivated: (classId) => schedules.materialiseClass(classId),
    }),
    schedules,
    registration: {
      students: studentSvc,
      directory,
      consents: consentService({
        consents: records.consents,
        students,
        users,
        directory,
        events,
        clock,
        onNoActiveConsent: photoSvc.erase,
      }),
      imports: studentImportService({
        students,
        activeMatching: records.activeMatching,
        studentService: studentSvc,
        classes,
        audit: records.auditTrail,
        clock,
        // Derived from the JWT secret, so every instance derives the same id for the same row.
        idKey: new Uint8Array(hkdfSync('sha256', config.jwtSecret, 'chamada', 'imported student ids', 32)),
        holdBackgroundWork: () => {
          const roster = rosterReconciler.holdFullPasses();
          const views = records.holdViewRefreshes?.();
          return () => {
            try {
              roster();
            } finally {
              views?.();
            }
          };
        },
        // On the embedded store the file and the pipeline share the service's one thread: without a
        // pause the pipeline fell 9,000 events behind a 10,000-row file, and check-ins with it (0065).
        ...(isRemote(store.db.events)
          ? {}
          : { paceBatches: () => waitAtMost(pipeline.catchUp(), IMPORT_PACE_MS) }),
      }),
      photos: photoSvc,
      familyPasses: familyPassSvc,
      exports: studentExportService({
        students,
        consents: records.consents,
        directory,
        records: subjectRecords(store.db),
        photos,
        audit: records.auditTrail,
        clock,
      }),
      demo: demoDataService({ classes, students: studentSvc, clock }),
      retention: retentionSvc,
    },
    audit: records.auditTrail,
    backups: { stream: () => backupStream({ source: backupSource }) },
    attendance: {
      checkins: checkinService({
        checkins,
        consents: records.consents,
        projections,
        volunteers: volunteerSvc,
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
      headcount: headcountService({ classes, projections, volunteers: volunteerSvc }),
      volunteers: volunteerSvc,
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
    notifications: { deliveries },
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
    printing: printing.service,
    printAgents: printing.agents,
    secrets: {
      cursorKey: new Uint8Array(hkdfSync('sha256', config.jwtSecret, 'chamada', 'paging cursor key', 32)),
    },
    idempotency: {
      ledger,
      settings: { ...DEFAULT_IDEMPOTENCY_SETTINGS, ...options.idempotency },
    },
  };
  wireJobs({
    ledger: deps.idempotency.ledger,
    retention: {
      job: { run: (signal) => retentionSvc.run(signal), nextAt: (now) => nextRetentionAt(config, now) },
      audit: records.auditTrail,
    },
    schedules: deps.schedules,
    clock,
    logger,
    metrics,
    opened,
    backups:
      config.backup === undefined
        ? undefined
        : { schedule: serviceBackups(config.backup, backupSource, logger), audit: records.auditTrail },
  });
  const app = makeApp(deps, options.routes ?? defaultRoutes);
  const listening = await listen(app, config, answerClientError(logger), opened);
  return {
    url: listening.url,
    server: listening.server,
    store,
    deps,
    stores: { users, students, events, projections },
    stop: listening.stop,
  };
};
