/**
 * The periodic jobs: the idempotency ledger's purge (every minute) and the schedules' sessions made
 * ahead (at start, then hourly). Each logs a line only when it did something or failed.
 */
import type { Logger } from 'pino';
import { idempotencyPurge$ } from '../jobs/idempotencyPurge.js';
import { scheduleMaterialisation$ } from '../jobs/scheduleMaterialisation.js';
import type { Disposers } from '../lib/disposers.js';
import type { Metrics } from '../metrics/metrics.js';
import type { ScheduleService } from '../schedules/scheduleService.js';
import type { IdempotencyLedger } from '../store/idempotencyLedger.js';

export interface JobsWiring {
  readonly ledger: IdempotencyLedger;
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
};
