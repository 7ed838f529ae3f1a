/**
 * The audit entries carried by the idempotency ledger's records (decision 0041): where the profile
 * lets them ride, a tick at once (the entries of records a stopped process left behind), then every
 * second, and a last one at a graceful stop, after the server has answered its last request.
 */
import type { Logger } from 'pino';
import type { AuditLog } from '../domain/audit.js';
import { periodic$ } from '../jobs/periodic.js';
import type { Disposers } from '../lib/disposers.js';
import type { Metrics } from '../metrics/metrics.js';
import type { BackendProfile } from '../store/backendProfile.js';
import { type CarriedAuditTrail, carriedAuditTrail } from '../store/carriedAudit.js';
import type { Store } from '../store/store.js';

export const CARRIED_AUDIT_TICK_MS = 1_000;

export interface CarriedAuditWiring {
  readonly store: Store;
  readonly profile: BackendProfile;
  readonly audit: AuditLog;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly opened: Disposers;
}

export const wireCarriedAudit = (w: CarriedAuditWiring): CarriedAuditTrail | undefined => {
  if (!w.profile.auditRidesLedger) return undefined;
  const trail = carriedAuditTrail({
    requests: w.store.db.requests,
    audit: w.audit,
    onAppendFailure: (e) => {
      w.metrics.storeError('carried_audit');
      w.logger.error(
        { errorName: e instanceof Error ? e.name : typeof e },
        'audit write failed; the entry stays in its ledger record and is appended again',
      );
    },
  });
  const ticks = periodic$(() => trail.tick(), 0, CARRIED_AUDIT_TICK_MS).subscribe((run) => {
    if (!run.ok) {
      w.metrics.storeError('carried_audit_checkpoint');
      w.logger.warn({ errorName: run.error }, 'carried audit entries: checkpoint failed; trying again');
    }
  });
  w.opened.add('carried audit entries', async () => {
    ticks.unsubscribe();
    // What the last answers carried reaches the log before it closes (a failure here is recovered by
    // the next start, from the checkpoint).
    await trail.tick().catch(() => false);
  });
  return trail;
};
