/**
 * The metrics an operator watches (decision 0021), defined once. The rest of the service calls the
 * narrow methods of `Metrics`; only this module knows prom-client. Each service owns its registry
 * (tests start many services in one process), and a service whose `/metrics` nobody may read records
 * nothing (`noMetrics`).
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { ConflictPolicy } from '../rules/conflicts.js';
// biome-ignore lint/style/noRestrictedImports: the backlog gauge reads the pipeline's own backlog shape (a type only; nothing of src/sync runs here).
import type { PipelineBacklog } from '../sync/pipelineRuntime.js';

/** Where a store failure was met; each is also a warning in the log. */
export type StoreErrorSource =
  /** a request answered 503 because the store did not answer */
  | 'request'
  /** a request answered 503 at its deadline (REQUEST_DEADLINE_MS, decision 0046) */
  | 'deadline'
  /** an event pipeline step, retried from the checkpoint */
  | 'pipeline'
  /** a pass of the roster reconciler, retried */
  | 'roster_projector'
  /** a rate-limit count (the limiter fails open) */
  | 'rate_limiter'
  /** an exchange of per-device counts with the other instances (each then counts alone) */
  | 'rate_limit_exchange'
  /** writing a response to the idempotency ledger */
  | 'idempotency_ledger'
  /** the periodic purge of the idempotency ledger */
  | 'idempotency_purge'
  /** the hourly run that makes schedules' sessions ahead */
  | 'schedule_materialisation'
  /** the private database's change feed, reconnecting */
  | 'change_feed'
  /** reading the pipeline's backlog for a scrape */
  | 'scrape';

export interface Metrics {
  httpRequest(request: {
    readonly method: string;
    readonly route: string;
    readonly status: number;
    readonly seconds: number;
  }): void;
  storeError(source: StoreErrorSource): void;
  conflictDecided(policy: ConflictPolicy): void;
  quarantined(reason: string): void;
  /** Forked projection documents the pipeline merged and settled (decision 0038). */
  forksSettled(aspects: number): void;
  /** A page of the events feed the pipeline projected: how many changes, and how long it took. */
  pipelinePage(page: { readonly changes: number; readonly seconds: number }): void;
  idempotentReplay(route: string): void;
  rateLimitRefused(scope: string): void;
  replicationPulled(documents: number): void;
  replicationPushed(accepted: number, refused: number): void;
  /** A run of the service's own backup (0044): when it succeeded, or that it failed. */
  backupRun(run: { readonly ok: true; readonly at: Date } | { readonly ok: false }): void;
  /** A run of the retention job (0045): when it succeeded and what it ended by kind, or that it failed. */
  retentionRun(
    run:
      | { readonly ok: true; readonly at: Date; readonly ended: Readonly<Record<string, number>> }
      | { readonly ok: false },
  ): void;
  /** Where the backlog gauges read from at each scrape (never on a request's path). */
  watchPipeline(read: () => Promise<PipelineBacklog>): void;
  readonly contentType: string;
  /** The exposition text. */
  scrape(): Promise<string>;
}

const ignore = (): void => undefined;

export const noMetrics: Metrics = {
  httpRequest: ignore,
  storeError: ignore,
  conflictDecided: ignore,
  quarantined: ignore,
  forksSettled: ignore,
  pipelinePage: ignore,
  idempotentReplay: ignore,
  rateLimitRefused: ignore,
  replicationPulled: ignore,
  replicationPushed: ignore,
  backupRun: ignore,
  retentionRun: ignore,
  watchPipeline: ignore,
  contentType: 'text/plain; version=0.0.4; charset=utf-8',
  scrape: async () => '',
};

/**
 * From a fast rejection to a sync batch waiting out its settle (10 s) and a longpoll (60 s); the check-in
 * target (p99 50 ms) falls on a bucket boundary.
 */
export const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/**
 * A page takes a few milliseconds on the embedded store and a few round trips on CouchDB; a REST
 * check-in waits for its page, so a page time near the check-in's own target (50 ms) is the one to see.
 */
export const PAGE_SECONDS_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10];

/** From the one event a quiet door gives to the pipeline's most (a page of 500). */
export const PAGE_CHANGES_BUCKETS = [1, 2, 5, 10, 20, 50, 100, 200, 500];

export const prometheusMetrics = (options: { readonly clock: () => Date }): Metrics => {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const counter = <L extends string>(name: string, help: string, labelNames: ReadonlyArray<L> = []) =>
    new Counter<L>({ name, help, labelNames, registers: [registry] });
  const gauge = (name: string, help: string) => new Gauge({ name, help, registers: [registry] });
  const http = new Histogram({
    name: 'chamada_http_request_duration_seconds',
    help: 'HTTP requests by method, route template and status, and how long each took to answer.',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: HTTP_BUCKETS,
    registers: [registry],
  });
  const storeErrors = counter(
    'chamada_store_errors_total',
    'Store operations that failed, by where they were met.',
    ['source'],
  );
  const conflicts = counter(
    'chamada_pipeline_conflicts_total',
    'Conflict decisions the event pipeline recorded (new or changed), by policy.',
    ['policy'],
  );
  const forks = counter(
    'chamada_pipeline_forks_settled_total',
    'Forked aspects (two leaves left by two instances on a CouchDB cluster) the pipeline merged and settled.',
    [],
  );
  const quarantines = counter(
    'chamada_pipeline_quarantined_total',
    'Event documents the pipeline quarantined for the first time, by reason.',
    ['reason'],
  );
  const pageSeconds = new Histogram({
    name: 'chamada_pipeline_page_seconds',
    help: 'Time the event pipeline took to project a page of the events feed (read excluded).',
    buckets: PAGE_SECONDS_BUCKETS,
    registers: [registry],
  });
  const pageChanges = new Histogram({
    name: 'chamada_pipeline_page_changes',
    help: 'Changes of the events feed in each page the event pipeline projected.',
    buckets: PAGE_CHANGES_BUCKETS,
    registers: [registry],
  });
  const pending = gauge(
    'chamada_pipeline_pending_events',
    'Changes of the events database after the last projected page (read at scrape time).',
  );
  const lag = gauge(
    'chamada_pipeline_lag_seconds',
    'Age of the oldest event stored but not yet projected; 0 when the pipeline is caught up.',
  );
  const replays = counter(
    'chamada_idempotency_replays_total',
    'Mutations answered with the stored response of an earlier request with the same key.',
    ['route'],
  );
  const refusals = counter(
    'chamada_rate_limit_refusals_total',
    'Requests refused with 429 by a rate limit, by scope.',
    ['scope'],
  );
  const pulled = counter(
    'chamada_replication_pulled_documents_total',
    'Roster documents tablets requested in pulls (_bulk_get and single reads).',
  );
  const pushed = counter(
    'chamada_replication_pushed_documents_total',
    'Event documents tablets pushed, by outcome (accepted, or refused as forbidden).',
    ['outcome'],
  );
  const backupSuccess = gauge(
    'chamada_backup_last_success_timestamp_seconds',
    "When the service's own backup last succeeded (Unix time); 0 until one has since start.",
  );
  const backupFailures = counter(
    'chamada_backup_failures_total',
    "Runs of the service's own backup that failed (each is retried at the next scheduled time).",
  );
  const retentionSuccess = gauge(
    'chamada_retention_last_success_timestamp_seconds',
    'When the retention job last ran to its end (Unix time); 0 until one has since start.',
  );
  const retentionFailures = counter(
    'chamada_retention_failures_total',
    'Runs of the retention job that failed or were cut short (the next run goes on from where it was).',
  );
  const retentionEnded = counter(
    'chamada_retention_ended_total',
    'Records the retention job ended, by kind (students anonymised, photos erased, check-ins, marks and ' +
      'pages deleted, audit entries anonymised).',
    ['kind'],
  );
  let readBacklog: (() => Promise<PipelineBacklog>) | undefined;

  const refreshBacklog = async (): Promise<void> => {
    if (readBacklog === undefined) return;
    try {
      const backlog = await readBacklog();
      pending.set(backlog.pending);
      const stored = backlog.oldestStoredAt === undefined ? Number.NaN : Date.parse(backlog.oldestStoredAt);
      lag.set(Number.isNaN(stored) ? 0 : Math.max(0, (options.clock().getTime() - stored) / 1000));
    } catch {
      // The scrape still answers; the gauges keep their last reading and the failure is counted.
      storeErrors.inc({ source: 'scrape' });
    }
  };

  return {
    httpRequest: ({ method, route, status, seconds }) =>
      http.observe({ method, route, status: String(status) }, seconds),
    storeError: (source) => storeErrors.inc({ source }),
    conflictDecided: (policy) => conflicts.inc({ policy }),
    quarantined: (reason) => quarantines.inc({ reason }),
    forksSettled: (aspects) => forks.inc(aspects),
    pipelinePage: ({ changes, seconds }) => {
      pageSeconds.observe(seconds);
      pageChanges.observe(changes);
    },
    idempotentReplay: (route) => replays.inc({ route }),
    rateLimitRefused: (scope) => refusals.inc({ scope }),
    replicationPulled: (documents) => pulled.inc(documents),
    replicationPushed: (accepted, refused) => {
      pushed.inc({ outcome: 'accepted' }, accepted);
      pushed.inc({ outcome: 'refused' }, refused);
    },
    backupRun: (run) => {
      if (run.ok) backupSuccess.set(run.at.getTime() / 1000);
      else backupFailures.inc();
    },
    retentionRun: (run) => {
      if (!run.ok) {
        retentionFailures.inc();
        return;
      }
      retentionSuccess.set(run.at.getTime() / 1000);
      for (const [kind, n] of Object.entries(run.ended)) retentionEnded.inc({ kind }, n);
    },
    watchPipeline: (read) => {
      readBacklog = read;
    },
    contentType: registry.contentType,
    scrape: async () => {
      await refreshBacklog();
      return registry.metrics();
    },
  };
};
