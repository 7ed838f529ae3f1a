import type { Logger } from 'pino';
import type { AttendanceService } from '../attendance/attendanceService.js';
import type { CheckinService } from '../attendance/checkinService.js';
import type { HeadcountService } from '../attendance/headcountService.js';
import type { PageService } from '../attendance/pageService.js';
import type { PickupService } from '../attendance/pickupService.js';
import type { VolunteerService } from '../attendance/volunteerService.js';
import type { RoleService } from '../auth/roleService.js';
import type { SessionService } from '../auth/sessionService.js';
import type { UserService } from '../auth/userService.js';
import type { Config } from '../config/config.js';
import type { AuditLog } from '../domain/audit.js';
import type { LiveBackups } from '../domain/backup.js';
import type { IdempotencyLedger } from '../domain/idempotencyRecord.js';
import type { DeliveryLog } from '../domain/notifications.js';
import type { Metrics } from '../metrics/metrics.js';
import type { PrintAgentService } from '../printing/printAgentService.js';
import type { PrintService } from '../printing/printService.js';
import type { ConsentService } from '../registration/consentService.js';
import type { DemoDataService } from '../registration/demoData.js';
import type { FamilyPassService } from '../registration/familyPassService.js';
import type { PhotoService } from '../registration/photoService.js';
import type { RetentionService } from '../registration/retentionService.js';
import type { StudentExportService } from '../registration/studentExport.js';
import type { StudentImportService } from '../registration/studentImport.js';
import type { StudentService } from '../registration/studentService.js';
import type { ReportService } from '../reports/reportService.js';
import type { RateLimitDecision, RateLimitPolicy } from '../rules/rateLimit.js';
import type { ClassService } from '../schedules/classService.js';
import type { ScheduleService } from '../schedules/scheduleService.js';
import type { DirectoryPort } from '../sync/directoryPort.js';
import type { EventPipeline } from '../sync/pipelineRuntime.js';
import type { ReplicationService } from '../sync/replicationService.js';
import type { RosterReconciler } from '../sync/rosterReconciler.js';
import type { SyncService } from '../sync/syncService.js';
import type { Authenticator } from './authenticate.js';
import type { IdempotencySettings } from './idempotency.js';

/** A rate limit as the route path counts it: one request of `clientKey` in `scope`, decided. */
export interface RateLimitCounter<D> {
  check(scope: string, clientKey: string, policy: RateLimitPolicy): D;
}

/** Whether the store answers, for the health route; the store itself stays behind the services. */
export interface StoreHealth {
  /** Embedded databases that refuse writes after an I/O error, until they reopen. */
  failedDatabases(): ReadonlyArray<string>;
  ping(): Promise<boolean>;
}

/**
 * Everything a handler may use: services, never stores (a route calls a service, the service owns
 * the store). `makeApp` receives it whole, so tests can swap any part.
 */
export interface AppDeps {
  readonly config: Config;
  readonly health: StoreHealth;
  readonly authenticator: Authenticator;
  readonly logger: Logger;
  /** What operators scrape at `/metrics` (0021); records nothing when nobody may read it. */
  readonly metrics: Metrics;
  /** The only source of "now" for handlers, so tests control time. */
  readonly clock: () => Date;
  readonly idempotency: { readonly ledger: IdempotencyLedger; readonly settings: IdempotencySettings };
  /** Login and refresh, per client IP: store-backed, exact across instances. */
  readonly rateLimiter: RateLimitCounter<Promise<RateLimitDecision>>;
  /** Every authenticated route, per principal and device: in memory, shared by background exchange. */
  readonly callerRateLimiter: RateLimitCounter<RateLimitDecision>;
  /** Nuclei, classes and class sessions. */
  readonly classes: ClassService;
  readonly schedules: ScheduleService;
  readonly registration: {
    readonly students: StudentService;
    readonly directory: DirectoryPort;
    readonly consents: ConsentService;
    readonly imports: StudentImportService;
    readonly photos: PhotoService;
    /** Family passes: the printable card, the stub's QR text, revocation (0049). */
    readonly familyPasses: FamilyPassService;
    /** The data-subject export (LGPD art. 18). */
    readonly exports: StudentExportService;
    /** The development seed's demo data (its response still calls it `roster`: the published field). */
    readonly demo: DemoDataService;
    /** Retention periods, their preview and the runs of the job (0045). */
    readonly retention: RetentionService;
  };
  readonly audit: AuditLog;
  /** The whole store as a backup file, read while the service runs (0044). */
  readonly backups: LiveBackups;
  readonly attendance: {
    readonly checkins: CheckinService;
    readonly pickups: PickupService;
    readonly marks: AttendanceService;
    readonly headcount: HeadcountService;
    readonly volunteers: VolunteerService;
    /** Pages to a checked-in child's guardians (0037). */
    readonly pages: PageService;
  };
  /** What the notification webhook was sent (0041); written by the notifier, read by the ADMIN's route. */
  readonly notifications: { readonly deliveries: Pick<DeliveryLog, 'newest'> };
  readonly sync: {
    readonly pipeline: EventPipeline;
    readonly service: SyncService;
  };
  readonly reports: ReportService;
  /** Printers and print jobs (0051); the worker that sends the jobs is wired beside it. */
  readonly printing: PrintService;
  /** Print agents and the jobs they print (0054). */
  readonly printAgents: PrintAgentService;
  readonly replication: {
    /** The roster replica, checkpoints and pushed events behind the CouchDB-protocol routes (0018). */
    readonly service: ReplicationService;
    readonly reconciler: RosterReconciler;
  };
  readonly secrets: {
    /** Signs paging cursors; derived from JWT_SECRET so every instance accepts every other's cursors. */
    readonly cursorKey: Uint8Array;
  };
  readonly auth: {
    readonly sessions: SessionService;
    readonly users: UserService;
    readonly roles: RoleService;
  };
}
