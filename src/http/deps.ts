// biome-ignore-all lint/style/noRestrictedImports: AppDeps still hands routes raw stores beside the services; issue #22 (part 4) gives routes services only.
import type { Logger } from 'pino';
import type { AttendanceService } from '../attendance/attendanceService.js';
import type { CheckinService } from '../attendance/checkinService.js';
import type { HeadcountService } from '../attendance/headcountService.js';
import type { PageService } from '../attendance/pageService.js';
import type { PickupService } from '../attendance/pickupService.js';
import type { SessionService } from '../auth/sessionService.js';
import type { UserService } from '../auth/userService.js';
import type { Config } from '../config/config.js';
import type { Metrics } from '../metrics/metrics.js';
import type { ReportService } from '../reports/reportService.js';
import type { ConsentService } from '../roster/consentService.js';
import type { PhotoService } from '../roster/photoService.js';
import type { RosterImportService } from '../roster/rosterImport.js';
import type { StudentService } from '../roster/studentService.js';
import type { ScheduleService } from '../schedules/scheduleService.js';
import type { AuditLog } from '../store/auditLog.js';
import type { CallerRateLimiter } from '../store/callerRateLimiter.js';
import type { ClassStore } from '../store/classes.js';
import type { ConsentStore } from '../store/consents.js';
import type { EventStore } from '../store/events.js';
import type { IdempotencyLedger } from '../store/idempotencyLedger.js';
import type { ProjectionStore } from '../store/projections.js';
import type { RateLimiter } from '../store/rateLimiter.js';
import type { ReplicaSource } from '../store/replicaSource.js';
import type { ReplicationCheckpoints } from '../store/replicationCheckpoints.js';
import type { RoleStore } from '../store/roles.js';
import type { Store } from '../store/store.js';
import type { StudentStore } from '../store/students.js';
import type { UserStore } from '../store/users.js';
import type { EventPipeline } from '../sync/pipelineRuntime.js';
import type { RosterProjector } from '../sync/rosterProjector.js';
import type { StudentDirectory } from '../sync/studentDirectory.js';
import type { SyncService } from '../sync/syncService.js';
import type { Authenticator } from './authenticate.js';
import type { IdempotencySettings } from './idempotency.js';

/** Everything a handler may use; `makeApp` receives it whole, so tests can swap any part. */
export interface AppDeps {
  readonly config: Config;
  readonly store: Store;
  readonly authenticator: Authenticator;
  readonly logger: Logger;
  /** What operators scrape at `/metrics` (0021); records nothing when nobody may read it. */
  readonly metrics: Metrics;
  /** The only source of "now" for handlers, so tests control time. */
  readonly clock: () => Date;
  readonly idempotency: { readonly ledger: IdempotencyLedger; readonly settings: IdempotencySettings };
  /** Login and refresh, per client IP: store-backed, exact across instances. */
  readonly rateLimiter: RateLimiter;
  /** Every authenticated route, per principal and device: in memory, shared by background exchange. */
  readonly callerRateLimiter: CallerRateLimiter;
  readonly classes: ClassStore;
  readonly schedules: ScheduleService;
  readonly roster: {
    readonly students: StudentService;
    readonly studentStore: StudentStore;
    readonly directory: StudentDirectory;
    readonly consents: ConsentService;
    readonly consentStore: ConsentStore;
    readonly imports: RosterImportService;
    readonly photos: PhotoService;
  };
  readonly audit: AuditLog;
  readonly attendance: {
    readonly checkins: CheckinService;
    readonly pickups: PickupService;
    readonly marks: AttendanceService;
    readonly headcount: HeadcountService;
    /** Pages to a checked-in child's guardians (0037). */
    readonly pages: PageService;
  };
  readonly sync: {
    readonly pipeline: EventPipeline;
    readonly projections: ProjectionStore;
    readonly service: SyncService;
  };
  readonly reports: ReportService;
  readonly replication: {
    /** Stable across restarts and instances: tablets key their checkpoints by it. */
    readonly instanceId: string;
    readonly roster: ReplicaSource;
    readonly eventsInfo: () => Promise<{ db_name: string; update_seq: string | number; doc_count: number }>;
    readonly checkpoints: ReplicationCheckpoints;
    readonly events: EventStore;
    readonly sync: SyncService;
    readonly projector: RosterProjector;
  };
  readonly secrets: {
    /** Signs paging cursors; derived from JWT_SECRET so every instance accepts every other's cursors. */
    readonly cursorKey: Uint8Array;
  };
  readonly auth: {
    readonly sessions: SessionService;
    readonly users: UserService;
    readonly userStore: UserStore;
    readonly roleStore: RoleStore;
  };
}
