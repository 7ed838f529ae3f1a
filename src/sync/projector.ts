/**
 * One batch of the pipeline against the projections store: group the batch's events by aspect, merge
 * them into each aspect's known events, resolve and fold (pure rules), work out which conflict records
 * appear, change or vanish, write the operational records through, commit it all with compare-and-
 * swap, and audit the new decisions once the commit has stood. A batch that meets a concurrent writer
 * is run again from fresh reads.
 *
 * A conflict's entry is written once the commit that decided it has stood: a commit is a compare-and-
 * swap on the revision read, so what it decided on was the stored aspect, and a decision taken on a
 * copy another writer had moved past (its commit refused, the batch run again from fresh reads) is
 * never audited. So that a crash between the commit and the audit loses no entry, the decisions a
 * commit finds standing are audited again: those of an aspect found already holding the batch's
 * events, and those of the copy a commit replaces (`othersCommit`, and after a failed try or a
 * restart: `BatchOptions.afterFailure`). Records, unlike audit entries, are written before the
 * commit: a request may read one as soon as the commit shows its event applied (an attempt that
 * then loses, or fails, has them written again; `BatchOptions.afterFailure`).
 *
 * A conflict's entry is keyed by the decision it records (its time is the conflict's `detectedAt`,
 * its id a name-based UUID of the aspect, loser, winner and policy), so the repeat, a second instance
 * deciding the same batch, or a rebuild from the first event write the same document, and the log
 * keeps one entry per decision. A decision that changes (a later event wins over the loser) is a new
 * entry; a record whose event copies changed but whose decision did not (its `detectedAt` follows the
 * copy's server time) is rewritten and not audited as new. Copies change only on CouchDB, where the
 * audits again above repeat it, and there the claims keyed by the decision alone keep its first time
 * (`src/store/auditLog.ts`).
 */
import { v5 as uuidV5 } from 'uuid';
import type { AuditKey, NewAuditEntry, PendingAuditEntry } from '../domain/audit.js';
import {
  type AspectEventRecord,
  type AspectProjection,
  type ConflictRecordFull,
  holdsEvents,
  kindOfAspect,
  projectAspect,
} from '../rules/projections.js';
import type { LoadedAspect, ProjectionStore, Quarantine } from '../store/projections.js';
import type { DecodedChange } from './eventPipeline.js';

export interface ProjectorDeps {
  readonly projections: ProjectionStore;
  /** Records pipeline decisions in the audit log; resolves once stored. */
  readonly audit: (entries: ReadonlyArray<PendingAuditEntry>) => Promise<void>;
  /**
   * Brings the operational records (check-ins, student fields) in line with an aspect's projection.
   * Called for every aspect a batch writes, before the projection is committed: a crash after it and
   * before the commit replays the batch, and the call finds nothing to change. An aspect found
   * already holding the batch's events is written through again only where an attempt may have left
   * its records behind (a lost commit, a failed try, the replay after a start).
   */
  readonly writeThrough?: (projection: AspectProjection) => Promise<void>;
  readonly maxAttempts?: number;
  /**
   * Other instances' pipelines commit these aspects too (CouchDB): one may have committed an aspect
   * and stopped before its audit, so the decisions a commit finds standing (in an aspect found
   * holding the batch's events, or in the copy it replaces) are audited again; their keys make the
   * repeat the same entry.
   */
  readonly othersCommit?: boolean;
  /** The time a quarantine is first detected at (its audit entry's time). */
  readonly clock?: () => Date;
}

export interface ProjectedBatch {
  readonly aspectsWritten: number;
  readonly conflictsChanged: ReadonlyArray<ConflictRecordFull>;
  readonly quarantined: ReadonlyArray<string>;
  /** The quarantines this batch detected first: a replay of the batch finds none. */
  readonly quarantinesRecorded: ReadonlyArray<Quarantine>;
  /**
   * Every aspect of the batch as its commit left it (or as the store held it, when it held every
   * event already): what `settle` answers a request with, without reading it back.
   */
  readonly projected: ReadonlyArray<AspectProjection>;
}

export const PIPELINE_ENDPOINT = 'PIPELINE /events/_changes';

/** The namespace of the pipeline's name-based audit ids (fixed: changing it would re-audit every decision). */
export const PIPELINE_AUDIT_NAMESPACE = 'a81ca8c0-c925-44be-b86e-43cb7d4305a5';

/** The key of a conflict decision's entry: the same decision gives the same key on every instance. */
export const conflictAuditKey = (c: ConflictRecordFull): AuditKey => ({
  // The store keeps milliseconds; normalising here keeps a finer server timestamp from splitting keys.
  at: new Date(c.detectedAt).toISOString(),
  auditId: uuidV5(
    JSON.stringify(['CONFLICT_RESOLVED', c.aspect, c.loser.eventId, c.winner.eventId, c.policy]),
    PIPELINE_AUDIT_NAMESPACE,
  ),
});

/**
 * The key of an entry for a record the pipeline writes from one event (a visitor's student record):
 * the event's id names it, so a replay or another instance writes the same entry.
 */
export const recordAuditKey = (action: string, eventId: string, at: string): AuditKey => ({
  at: new Date(at).toISOString(),
  auditId: uuidV5(JSON.stringify([action, eventId]), PIPELINE_AUDIT_NAMESPACE),
});

const conflictEntry = (c: ConflictRecordFull): NewAuditEntry => ({
  // The loser's id ties the entry to the event it superseded.
  correlation_id: c.loser.eventId,
  actor_user_id: c.loser.userId,
  actor_role: c.loser.role,
  endpoint: PIPELINE_ENDPOINT,
  outcome: 'SUCCESS',
  details: {
    code: 'CONFLICT_SUPERSEDED',
    policy: c.policy,
    aspect: c.aspect,
    winnerEventId: c.winner.eventId,
    loserEventId: c.loser.eventId,
  },
  subject_id: c.subjectId,
  action: 'CONFLICT_RESOLVED',
});

/**
 * The key of a quarantine's entry, from the record the first detection stored: a replay of the batch
 * or another instance's pipeline derives the same key, so the document is audited once.
 */
export const quarantineAuditKey = (docId: string, reason: string, detectedAt: string): AuditKey => ({
  at: new Date(detectedAt).toISOString(),
  auditId: uuidV5(JSON.stringify(['QUARANTINE', docId, reason]), PIPELINE_AUDIT_NAMESPACE),
});

const quarantineAudit = (docId: string, reason: string): NewAuditEntry => ({
  correlation_id: '00000000-0000-4000-8000-000000000000',
  actor_user_id: null,
  actor_role: null,
  endpoint: PIPELINE_ENDPOINT,
  outcome: 'FAILURE',
  details: { code: 'QUARANTINED', reason, docId: docId.slice(0, 200) },
  subject_id: null,
  action: 'QUARANTINE',
});

/**
 * The record an aspect's write-through touches: every field aspect of one student, and the visitor
 * registration that creates the student, write the same student document, so those go one after
 * another (the registration first, in the batch's order); every other aspect has records of its own.
 */
const recordOf = (aspect: string): string => {
  switch (kindOfAspect(aspect)) {
    case 'student':
      return aspect.slice(0, aspect.indexOf(':', 'student:'.length));
    case 'visitor':
      return `student:${aspect.slice('visitor:'.length)}`;
    default:
      return aspect;
  }
};

/**
 * Write-throughs of different records run at once (their puts then share bulk writes, see
 * `src/store/batchedPut.ts`); those of one record run in order, so they never race each other.
 */
const writeThroughConcurrently = async (
  writeThrough: ProjectorDeps['writeThrough'],
  projections: ReadonlyArray<AspectProjection>,
): Promise<void> => {
  if (writeThrough === undefined) return;
  const byRecord = new Map<string, AspectProjection[]>();
  for (const p of projections) {
    const key = recordOf(p.aspect);
    byRecord.set(key, [...(byRecord.get(key) ?? []), p]);
  }
  // Settled, not raced: a failure is rethrown only once every other record's write has finished, so
  // the batch's retry never overlaps a write still under way.
  const settled = await Promise.allSettled(
    [...byRecord.values()].map(async (list) => {
      for (const p of list) await writeThrough(p);
    }),
  );
  for (const s of settled) if (s.status === 'rejected') throw s.reason;
};

export class ProjectionContended extends Error {
  constructor(attempts: number) {
    super(`the projections stayed contended after ${attempts} attempts`);
    this.name = 'ProjectionContended';
  }
}

export interface BatchOptions {
  /**
   * The pipeline's last try failed (it threw) since its last projected page, or the batch is part
   * of the replay after a start: an attempt may have written records from a copy another writer had
   * moved past, or committed and stopped before its audit, and this run cannot know which. Every
   * aspect of the batch found already holding its events gets its records written again from the
   * store, as those of an attempt that lost its commit do, and its standing decisions audited again.
   */
  readonly afterFailure?: boolean;
}

export const projectBatch = async (
  deps: ProjectorDeps,
  batch: ReadonlyArray<DecodedChange>,
  options: BatchOptions = {},
): Promise<ProjectedBatch> => {
  const incoming = new Map<string, AspectEventRecord[]>();
  for (const d of batch) {
    if (d.kind !== 'aspect') continue;
    const list = incoming.get(d.aspect) ?? [];
    list.push(d.record);
    incoming.set(d.aspect, list);
  }
  const quarantined = batch.flatMap((d) =>
    d.kind === 'quarantine' ? [{ docId: d.docId, reason: d.reason }] : [],
  );
  // Stored before they are audited, and outside the retries below: a crash between the two, a
  // contended commit or a second instance then finds the stored record and derives the same key.
  const stored = await deps.projections.recordQuarantines(
    quarantined,
    (deps.clock?.() ?? new Date()).toISOString(),
  );
  await deps.audit(
    stored.flatMap((q) =>
      // A record from before detection times were kept was audited then, with a fresh id.
      q.detectedAt === undefined
        ? []
        : [
            {
              entry: quarantineAudit(q.docId, q.reason),
              key: quarantineAuditKey(q.docId, q.reason, q.detectedAt),
            },
          ],
    ),
  );
  const quarantinesRecorded = stored
    .filter((q) => q.firstDetected)
    .map((q) => ({ docId: q.docId, reason: q.reason }));
  const { decided, aspectsWritten, projected } = await projectIncoming(
    deps,
    incoming,
    false,
    options.afterFailure === true,
  );
  return {
    aspectsWritten,
    conflictsChanged: decided,
    quarantined: quarantined.map((q) => q.docId),
    quarantinesRecorded,
    projected,
  };
};

/**
 * Settles forked aspects (decision 0038): each of `aspects` whose document has live losing leaves is
 * written again as the projection of the events of all its leaves, and the losing leaves deleted. An
 * aspect with no fork is left as it is. Decisions the merge brings that the winner did not hold are
 * audited (keyed by decision, so one a losing leaf's writer audited already is not audited twice).
 */
export const settleForks = (deps: ProjectorDeps, aspects: ReadonlyArray<string>): Promise<Projected> =>
  // Read from the store: what this process holds of an aspect may be the winner alone.
  projectIncoming(deps, new Map(aspects.map((a) => [a, []])), true);

export interface Projected {
  readonly decided: ReadonlyArray<ConflictRecordFull>;
  readonly aspectsWritten: number;
  /** Each aspect as the commit left it, or as the store held it when nothing was to be written. */
  readonly projected: ReadonlyArray<AspectProjection>;
}

const projectIncoming = async (
  deps: ProjectorDeps,
  incoming: ReadonlyMap<string, ReadonlyArray<AspectEventRecord>>,
  fresh = false,
  afterFailure = false,
): Promise<Projected> => {
  const maxAttempts = deps.maxAttempts ?? 20;
  // Aspects whose records an attempt that then lost its commit wrote: from a copy another writer had
  // moved past, so possibly behind what that writer's own write-through left (a check-out undone).
  // After a failed try of the pipeline, every aspect of the batch may be one (`BatchOptions`).
  const wroteThrough = new Set<string>(afterFailure ? incoming.keys() : []);
  const attemptAll = async () => {
    const loaded = await deps.projections.loadAspects([...incoming.keys()], { fresh });
    const projected: Array<{ after: AspectProjection; known: LoadedAspect | undefined }> = [];
    const held: AspectProjection[] = [];
    // The conflict records every aspect of the batch must have, replays included (see `expect`).
    const conflicts = new Map<string, ConflictRecordFull>();
    const noConflict = new Set<string>();
    const expect = (p: AspectProjection) => {
      for (const e of p.events) noConflict.add(e.eventId);
      for (const c of p.conflicts) {
        conflicts.set(c.loser.eventId, c);
        noConflict.delete(c.loser.eventId);
      }
    };
    for (const [aspect, events] of incoming) {
      const kind = kindOfAspect(aspect);
      if (kind === undefined) continue;
      const known = loaded.get(aspect);
      // An aspect that already holds every event given (a replay, or another instance's pipeline got
      // there first) is not written again; its conflict records are checked all the same. A forked one
      // is: the write merges its leaves.
      if (known !== undefined && known.fork === undefined && holdsEvents(known.events, events)) {
        const standing = projectAspect(aspect, kind, known.events, []);
        expect(standing);
        held.push(standing);
        continue;
      }
      const after = projectAspect(aspect, kind, known?.events ?? [], events);
      expect(after);
      projected.push({ after, known });
    }
    // A held aspect whose records a lost attempt of this batch wrote gets them again from what the
    // store holds now: the aspect needs no write, and without this its records stayed as the lost
    // attempt left them (the other writer's write-through came first).
    const rewritten = held.filter((p) => wroteThrough.has(p.aspect));
    const through = [...projected.map((p) => p.after), ...rewritten];
    await writeThroughConcurrently(deps.writeThrough, through);
    for (const p of through) wroteThrough.add(p.aspect);
    const aspects: Array<{ projection: AspectProjection; rev: string | undefined }> = [];
    // Decisions new to this batch (a record that appears or changes), audited once each.
    const decided: ConflictRecordFull[] = [];
    // The decisions the copies this commit replaces stood on: another writer's commit, whose audit
    // may never have been written (`again` below).
    const replaced: ConflictRecordFull[] = [];
    for (const { after, known } of projected) {
      const kind = kindOfAspect(after.aspect);
      if (kind === undefined) continue;
      // Of a fork, what the winner held: a decision only the merge brings is new.
      const before = projectAspect(after.aspect, kind, known?.fork?.winnerEvents ?? known?.events ?? [], []);
      // A decision is its audit id (aspect, loser, winner, policy), not its whole record: when an
      // event's stored copy changes after it was projected (a copy withdrawn after a 503, the resend
      // storing another), the record's `detectedAt` moves with the copy's server time while the
      // decision stays, and auditing it again put a second entry in the log (its key holds the time).
      const previous = new Set(before.conflicts.map((c) => conflictAuditKey(c).auditId));
      for (const c of after.conflicts) if (!previous.has(conflictAuditKey(c).auditId)) decided.push(c);
      replaced.push(...before.conflicts);
      aspects.push({
        projection: after,
        rev: known?.rev,
        ...(known?.fork === undefined ? {} : { forks: known.fork.revs }),
      });
    }
    const written = await deps.projections.commit({
      aspects,
      conflicts: [...conflicts.values()],
      noConflict: [...noConflict],
    });
    if (written !== 'OK') return undefined;
    // After the commit: it stood, so these decisions are the store's, and so were those of the copies
    // it replaced (its compare-and-swap proves they were the stored ones). A writer that committed
    // those and stopped before its audit is covered here, whether this batch finds its aspect
    // holding every event or writes it again with more (see the head of this file).
    const again =
      deps.othersCommit === true || afterFailure ? [...held.flatMap((p) => p.conflicts), ...replaced] : [];
    await deps.audit(
      [...decided, ...again].map((c) => ({ entry: conflictEntry(c), key: conflictAuditKey(c) })),
    );
    return {
      decided,
      aspectsWritten: aspects.length,
      projected: [...held, ...aspects.map((a) => a.projection)],
    };
  };
  for (let attempt = 1; attempt <= maxAttempts; attempt += 1) {
    const outcome = await attemptAll();
    if (outcome !== undefined) return outcome;
  }
  throw new ProjectionContended(maxAttempts);
};
