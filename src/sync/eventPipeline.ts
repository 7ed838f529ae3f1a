/**
 * The event pipeline as named RxJS streams, with nothing of PouchDB in it (the store side is given as
 * functions), so the same code runs against the real store and under a `TestScheduler`:
 *
 *   wake$ ─▶ drain (one at a time; a wake while draining runs one more drain after it)
 *     drain: pull a page of changes after the checkpoint ─▶ decode each (an undecodable document
 *            becomes a quarantine item, never an error) ─▶ process the batch (group by aspect, rules,
 *            projections, conflict records, audit) ─▶ save the checkpoint ─▶ next page, until a short
 *            page says the feed is caught up.
 *
 * A failed step is retried after a delay from the last saved checkpoint: every write the pipeline makes
 * is a function of the events, so running a batch twice changes nothing, and a crash between the
 * projection write and the checkpoint costs a replay, never a lost or doubled event.
 */
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import {
  asyncScheduler,
  concatMap,
  defer,
  EMPTY,
  expand,
  filter,
  map,
  type Observable,
  of,
  retry,
  type SchedulerLike,
  take,
  tap,
  timer,
} from 'rxjs';
import { EventDoc, eventDocId, isRetiredEvent, isSanctionedRevision } from '../domain/event.js';
import { decodeChange } from '../domain/eventTypes.js';
import { exhaustMapWithTrailing } from '../lib/operators.js';
import type { AspectEventRecord } from '../rules/projections.js';
import { kindOfAspect } from '../rules/projections.js';
import type { Change } from './changeFeed.js';

export type Seq = string | number;

export type DecodedChange =
  | {
      readonly kind: 'aspect';
      readonly seq: Seq;
      readonly aspect: string;
      readonly record: AspectEventRecord;
    }
  /** A record-keeping event (no aspect) or a design document: nothing to project. */
  | { readonly kind: 'skip'; readonly seq: Seq }
  | { readonly kind: 'quarantine'; readonly seq: Seq; readonly docId: string; readonly reason: string };

const Revised = t.type({ _rev: t.string });

/** The revision a change shows: the document's own, else the feed's (the pages read carry both). */
const revisionOf = (change: Change): string | undefined => {
  const revised = Revised.decode(change.doc);
  return E.isRight(revised) ? revised.right._rev : change.rev;
};

/** Decodes one change of the events database; never throws. */
export const decodeEventChange = (change: Change): DecodedChange => {
  const seq = change.seq;
  if (change.id.startsWith('_design/') || change.superseded === true) return { kind: 'skip', seq };
  // An event retention retired (decision 0045): its aspect goes with it, by the same run; nothing to project.
  if (change.deleted && isRetiredEvent(change.doc)) return { kind: 'skip', seq };
  if (change.deleted) return { kind: 'quarantine', seq, docId: change.id, reason: 'DELETED' };
  const decoded = EventDoc.decode(change.doc);
  if (E.isLeft(decoded)) return { kind: 'quarantine', seq, docId: change.id, reason: 'UNDECODABLE_EVENT' };
  const doc = decoded.right;
  // No guard in the database refuses these (decision 0063): the store API is the only writer of
  // events, and what else writes one is reported here, whatever kind of event it is.
  if (change.id !== eventDocId(doc.eventId))
    return { kind: 'quarantine', seq, docId: change.id, reason: 'MISNAMED_EVENT' };
  const rev = revisionOf(change);
  if (rev !== undefined && !isSanctionedRevision(rev, change.doc))
    return { kind: 'quarantine', seq, docId: change.id, reason: 'REWRITTEN' };
  if (doc.aspect === undefined) return { kind: 'skip', seq };
  if (kindOfAspect(doc.aspect) === undefined)
    return { kind: 'quarantine', seq, docId: change.id, reason: 'UNKNOWN_ASPECT' };
  const changeOf = decodeChange(doc.type, doc.payload);
  if (changeOf === undefined)
    return { kind: 'quarantine', seq, docId: change.id, reason: 'UNDECODABLE_PAYLOAD' };
  return {
    kind: 'aspect',
    seq,
    aspect: doc.aspect,
    record: {
      eventId: doc.eventId,
      baseVersion: doc.baseVersion ?? null,
      subjectId: doc.subjectId,
      userId: doc.actor.userId,
      role: doc.actor.role,
      deviceId: doc.deviceId,
      clientTimestamp: doc.clientTimestamp,
      serverTimestamp: doc.serverTimestamp,
      type: doc.type,
      payload: doc.payload,
      change: changeOf,
    },
  };
};

export interface Page {
  readonly changes: ReadonlyArray<Change>;
  readonly lastSeq: Seq;
}

export interface BatchOutcome {
  /** Every aspect event of the batch with its standing after the batch. */
  readonly events: ReadonlyArray<{ readonly eventId: string; readonly aspect: string }>;
  readonly quarantined: ReadonlyArray<string>;
  readonly lastSeq: Seq;
}

export interface PipelineStreams {
  readonly wake$: Observable<unknown>;
  readonly pull: (since: Seq, limit: number) => Observable<Page>;
  readonly process: (batch: ReadonlyArray<DecodedChange>) => Observable<unknown>;
  readonly saveCheckpoint: (seq: Seq) => Observable<unknown>;
  /** Where the checkpoint stood when the pipeline started. */
  readonly since: Seq;
  readonly pageSize: number;
  readonly retryDelayMs: number;
  readonly scheduler?: SchedulerLike;
  readonly onError?: (error: unknown, attempt: number) => void;
  /** Called each time a drain reaches the end of the feed. */
  readonly onDrained?: () => void;
}

interface Step {
  readonly more: boolean;
  readonly since: Seq;
  readonly outcome?: BatchOutcome;
}

export const eventPipeline$ = (s: PipelineStreams): Observable<BatchOutcome> => {
  let cursor = s.since;

  const step = (since: Seq): Observable<Step> =>
    defer(() => s.pull(since, s.pageSize)).pipe(
      take(1),
      concatMap((page): Observable<Step> => {
        if (page.changes.length === 0) return of({ more: false, since });
        const decoded$ = page.changes.map(decodeEventChange);
        return defer(() => s.process(decoded$)).pipe(
          take(1),
          concatMap(() => defer(() => s.saveCheckpoint(page.lastSeq)).pipe(take(1))),
          map((): Step => {
            cursor = page.lastSeq;
            return {
              more: page.changes.length >= s.pageSize,
              since: page.lastSeq,
              outcome: {
                events: decoded$.flatMap((d) =>
                  d.kind === 'aspect' ? [{ eventId: d.record.eventId, aspect: d.aspect }] : [],
                ),
                quarantined: decoded$.flatMap((d) => (d.kind === 'quarantine' ? [d.docId] : [])),
                lastSeq: page.lastSeq,
              },
            };
          }),
        );
      }),
    );

  const drain = (): Observable<BatchOutcome> =>
    defer(() => step(cursor)).pipe(
      expand((r) => (r.more ? step(r.since) : EMPTY)),
      filter((r): r is Step & { outcome: BatchOutcome } => r.outcome !== undefined),
      map((r) => r.outcome),
      retry({
        delay: (error: unknown, attempt: number) => {
          s.onError?.(error, attempt);
          return timer(s.retryDelayMs, s.scheduler ?? asyncScheduler);
        },
      }),
      tap({ complete: () => s.onDrained?.() }),
    );

  return s.wake$.pipe(exhaustMapWithTrailing(drain));
};
