/**
 * The periodic jobs: the idempotency ledger's purge (every minute), the schedules' sessions made
 * ahead (at start, then hourly), retention (at start, then daily; 0045) and, when configured, the
 * service's own backups (0044). The first two log a line only when they did something or failed;
 * every backup and retention run is logged and audited.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { AuditLog } from '../domain/audit.js';
import type { RetentionCounts } from '../domain/retention.js';
import { idempotencyPurge$ } from '../jobs/idempotencyPurge.js';
import { atScheduledTimes$ } from '../jobs/nightlyBackup.js';
import { retention$ } from '../jobs/retention.js';
import { scheduleMaterialisation$ } from '../jobs/scheduleMaterialisation.js';
import type { Disposers } from '../lib/disposers.js';
import { waitAtMost } from '../lib/timeouts.js';
import type { Metrics } from '../metrics/metrics.js';
import type { ScheduleService } from '../schedules/scheduleService.js';
import type { IdempotencyLedger } from '../store/idempotencyLedger.js';

/** The service's own backups: one run, and when the next is due. */
export interface ServiceBackups {
  run(
    now: Date,
  ): Promise<{ readonly file: string; readonly bytes: number; readonly removed: ReadonlyArray<string> }>;
  nextAt(now: Date): Date;
}

/** Retention (0045): one run (stopped between its steps by the signal), and when the next is due. */
export interface RetentionJob {
  run(signal: AbortSignal): Promise<RetentionCounts>;
  nextAt(now: Date): Date;
}

export interface JobsWiring {
  readonly ledger: IdempotencyLedger;
  readonly retention: { readonly job: RetentionJob; readonly audit: AuditLog };
  readonly backups?: { readonly schedule: ServiceBackups; readonly audit: AuditLog } | undefined;
  readonly schedules: Pick<ScheduleService, 'materialiseAll'>;
  readonly clock: () => Date;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly opened: Disposers;
}

export const wireJobs = (w: JobsWiring): void => {
  const { logger, metrics } = w;
  const purges = idempotencyPurge$((now) => w.ledger.purgeExpired(now), w.clock).subscribe((run) => {
    if (run.ok) {
      if (run.purged > 0) logger.info({ purged: run.purged }, 'idempotency ledger purged');
    } else {
      metrics.storeError('idempotency_purge');
      logger.warn({ errorName: run.error }, 'idempotency ledger purge failed');
    }
  });
  w.opened.add('idempotency purge', () => purges.unsubscribe());
  const materialising = scheduleMaterialisation$(() => w.schedules.materialiseAll()).subscribe((run) => {
    if (!run.ok) {
      metrics.storeError('schedule_materialisation');
      logger.warn({ errorName: run.error }, 'schedule materialisation failed; retrying next hour');
    } else if (run.created + run.updated + run.removed > 0)
      logger.info(
        { created: run.created, updated: run.updated, removed: run.removed },
        'schedule sessions made',
      );
  });
  w.opened.add('schedule materialisation', () => materialising.unsubscribe());
  wireRetention(w, w.retention.job, w.retention.audit);
  if (w.backups !== undefined) wireBackups(w, w.backups.schedule, w.backups.audit);
};

export const RETENTION_JOB_ENDPOINT = 'JOB /retention';

/** How long a stop waits for a retention run to reach the end of its current step. */
const RETENTION_STOP_WAIT_MS = 10_000;

/** The metric label of each count: Prometheus's own spelling. */
const retentionKind = (key: string): string => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

export const wireRetention = (
  w: Pick<JobsWiring, 'clock' | 'logger' | 'metrics' | 'opened'>,
  job: RetentionJob,
  audit: AuditLog,
): void => {
  const { logger, metrics } = w;
  const stop = new AbortController();
  let running: Promise<unknown> = Promise.resolve();
  const runOnce = () => {
    const run = job.run(stop.signal);
    running = run.catch(() => undefined);
    return run;
  };
  const runs = retention$(runOnce, job.nextAt, w.clock).subscribe((run) => {
    const next = job.nextAt(w.clock()).toISOString();
    if (run.ok) {
      metrics.retentionRun({
        ok: true,
        at: w.clock(),
        ended: Object.fromEntries(Object.entries(run.result).map(([k, n]) => [retentionKind(k), n])),
      });
      logger.info({ ...run.result, next }, 'retention run done');
    } else {
      metrics.retentionRun({ ok: false });
      logger.error({ errorName: run.error, next }, 'retention run failed; the next run goes on from there');
    }
    // One entry a run, counts only: what ended is named nowhere (0045).
    audit
      .append({
        correlation_id: randomUUID(),
        actor_user_id: null,
        actor_role: null,
        endpoint: RETENTION_JOB_ENDPOINT,
        outcome: run.ok ? 'SUCCESS' : 'FAILURE',
        details: run.ok ? { ...run.result } : { errorName: run.error },
        subject_id: null,
        action: 'MUTATION',
      })
      .catch((e: unknown) =>
        logger.error({ errorName: e instanceof Error ? e.name : typeof e }, 'audit write failed'),
      );
  });
  w.opened.add('retention', async () => {
    stop.abort();
    runs.unsubscribe();
    // A run stops at the end of its step; the store it writes to closes after this.
    await waitAtMost(running, RETENTION_STOP_WAIT_MS);
  });
};

export const BACKUP_JOB_ENDPOINT = 'JOB /backup';

export const wireBackups = (
  w: Pick<JobsWiring, 'clock' | 'logger' | 'metrics' | 'opened'>,
  backups: ServiceBackups,
  audit: AuditLog,
): void => {
  const { logger, metrics } = w;
  logger.info({ next: backups.nextAt(w.clock()).toISOString() }, 'service backups on');
  const runs = atScheduledTimes$(() => backups.run(w.clock()), backups.nextAt, w.clock).subscribe((run) => {
    if (run.ok) {
      metrics.backupRun({ ok: true, at: w.clock() });
      logger.info(
        {
          file: run.result.file,
          bytes: run.result.bytes,
          removed: run.result.removed.length,
          next: backups.nextAt(w.clock()).toISOString(),
        },
        'service backup written',
      );
    } else {
      metrics.backupRun({ ok: false });
      logger.error({ errorName: run.error }, 'service backup failed; retrying at the next scheduled time');
    }
    // The record that the whole store was copied, and where; never a reason to stop the schedule.
    audit
      .append({
        correlation_id: randomUUID(),
        actor_user_id: null,
        actor_role: null,
        endpoint: BACKUP_JOB_ENDPOINT,
        outcome: run.ok ? 'SUCCESS' : 'FAILURE',
        details: run.ok
          ? { file: run.result.file, bytes: run.result.bytes, removed: run.result.removed.length }
          : { errorName: run.error },
        subject_id: null,
        action: 'EXPORT',
      })
      .catch((e: unknown) =>
        logger.error({ errorName: e instanceof Error ? e.name : typeof e }, 'audit write failed'),
      );
  });
  w.opened.add('service backups', () => runs.unsubscribe());
};
