/**
 * The event pipeline as the service runs it: the change feed of the events projected into the
 * projections, with the write-throughs that keep the operational records in line (visitors, check-in
 * records, student fields), the pipeline's audit entries, and its failures and decisions counted.
 */
import type { Logger } from 'pino';
import { filter, map, type Observable } from 'rxjs';
import { checkinWriteThrough } from '../attendance/checkinWriteThrough.js';
import type { PendingAuditEntry } from '../domain/audit.js';
import type { Disposers } from '../lib/disposers.js';
import { stackFrames } from '../lib/stackFrames.js';
import { withTimeout } from '../lib/timeouts.js';
import type { Metrics } from '../metrics/metrics.js';
import { studentWriteThrough } from '../registration/studentWriteThrough.js';
import { visitorWriteThrough } from '../registration/visitorWriteThrough.js';
import type { AuditLog } from '../store/auditLog.js';
import type { CheckinStore } from '../store/checkins.js';
import type { ClassStore } from '../store/classes.js';
import type { ProjectionStore } from '../store/projections.js';
import type { Store } from '../store/store.js';
import type { StudentStore } from '../store/students.js';
import type { Change } from '../sync/changeFeed.js';
import type { DirectoryPort } from '../sync/directoryPort.js';
import { type EventPipeline, startEventPipeline, writeThroughAll } from '../sync/pipelineRuntime.js';

export interface PipelineWiring {
  readonly store: Store;
  readonly projections: ProjectionStore;
  readonly auditTrail: AuditLog;
  readonly students: StudentStore;
  readonly classes: ClassStore;
  readonly checkins: CheckinStore;
  readonly directory: DirectoryPort;
  readonly clock: () => Date;
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly opened: Disposers;
  /** The projections' feed where other instances' pipelines commit too (CouchDB); undefined otherwise. */
  readonly projectionFeed: Observable<Change> | undefined;
}

export const wirePipeline = async (w: PipelineWiring): Promise<EventPipeline> => {
  const { auditTrail, clock, logger, metrics } = w;
  const audit = async (entries: ReadonlyArray<PendingAuditEntry>): Promise<void> => {
    await Promise.all(
      entries.map(({ entry, key }) =>
        key === undefined ? auditTrail.append(entry) : auditTrail.appendKeyed(entry, key),
      ),
    );
  };
  const pipeline = await startEventPipeline({
    events: w.store.db.events,
    projections: w.projections,
    clock,
    writeThrough: writeThroughAll([
      visitorWriteThrough({ students: w.students, classes: w.classes, directory: w.directory, audit, clock }),
      checkinWriteThrough({ checkins: w.checkins, clock }),
      studentWriteThrough({
        students: w.students,
        directory: w.directory,
        clock,
        onUnfit: () =>
          logger.warn('a student field event does not fit its field; the record keeps its value'),
      }),
    ]),
    audit,
    // Where other instances commit the projections too (the feed below is followed for that).
    othersCommit: w.projectionFeed !== undefined,
    ...(w.projectionFeed === undefined
      ? {}
      : {
          forked$: w.projectionFeed.pipe(
            filter((c) => (c.leaves ?? 1) > 1),
            map((c) => c.id),
          ),
          onForksSettled: (aspects: number) => metrics.forksSettled(aspects),
        }),
    onError: (e) => {
      metrics.storeError('pipeline');
      // Where it failed, not the message (which may quote a document): enough to tell the steps apart.
      logger.warn(
        {
          errorName: e instanceof Error ? e.name : typeof e,
          stack: stackFrames(e)?.split('\n', 4).join('\n'),
        },
        'event pipeline step failed; retrying',
      );
    },
    onWithdrawn: (copies) =>
      logger.warn(
        { docIds: copies.slice(0, 10).map((c) => c.id), copies: copies.length },
        'event pipeline withdrew copies of events their writers left behind',
      ),
    onHeld: ({ id, unreadable, heldMs }) =>
      logger.warn(
        { docId: id, heldSeconds: Math.round(heldMs / 1000), unreadable },
        unreadable
          ? 'event pipeline waits for a document the cluster cannot read yet'
          : 'event pipeline waits for the copies of a document to settle',
      ),
    onProjected: (batch) => {
      for (const c of batch.conflictsChanged) metrics.conflictDecided(c.policy);
      for (const q of batch.quarantinesRecorded) {
        metrics.quarantined(q.reason);
        // The id names the document to look at (REWRITTEN, DELETED: something other than the service
        // wrote the events database, decision 0063); its content may hold personal data, so not that.
        logger.warn(
          { docId: q.docId.slice(0, 200), reason: q.reason },
          'event pipeline set an event document aside (a QUARANTINE entry in the audit log)',
        );
      }
    },
    onPage: (page) => metrics.pipelinePage(page),
  });
  // The page in hand is projected (its audit entries queued) before the audit writer closes.
  w.opened.add('event pipeline', () => pipeline.stop());
  // A scrape must answer even when the store does not: the gauges then keep their last reading.
  metrics.watchPipeline(() => withTimeout(pipeline.backlog(), 2000));
  return pipeline;
};
