/**
 * `POST /api/v1/sync/events`: a device's offline events, judged one by one. Each event is validated,
 * authorised for its kind, checked against the subjects it names and stored once per `eventId`; one
 * bad event fails alone. The answer reports each stored event as the pipeline then stands
 * (read-your-writes): applied, superseded by a conflict, or waiting for the event it was based on.
 *
 * The actor (user and role) is the authenticated caller's, never a field of the event: a device
 * cannot claim ADMIN precedence for itself.
 */
import * as E from 'fp-ts/lib/Either.js';
import { isResendOf, type NewEvent } from '../domain/event.js';
import {
  aspectOfSync,
  decodeSyncEvent,
  payloadOfSync,
  type SyncEvent,
  visitorAspect,
} from '../domain/eventTypes.js';
import type { ValidationIssue } from '../domain/issues.js';
import { capIssues, MAX_REPORTED_EVENT_ISSUES, toIssues } from '../domain/issues.js';
import type { Actor } from '../domain/principal.js';
import type { AdmissionException } from '../domain/projection.js';
import { pause } from '../lib/timeouts.js';
import { mayOverride } from '../rules/admission.js';
import { authorize } from '../rules/authorization.js';
import { type AspectProjection, outcomeOf } from '../rules/projections.js';
import type { ClassStore } from '../store/classes.js';
import type { EventStore } from '../store/events.js';
import { QuorumNotMetError } from '../store/storeErrors.js';
import type { StudentStore } from '../store/students.js';
import {
  type ArrivalDeps,
  type ArrivalVerdict,
  admissionExceptionOf,
  judgeOnArrival,
  stampAdmission,
} from './admissionOnArrival.js';
import type { EventPipeline } from './pipelineRuntime.js';

export const MAX_SYNC_EVENTS = 1000;

/** Writes of an event whose stored copy was withdrawn before it could be read back. */
const RACED_WRITE_ATTEMPTS = 4;

export type SyncFailureReason =
  | 'VALIDATION_FAILED'
  | 'UNKNOWN_TYPE'
  | 'FORBIDDEN_ROLE'
  | 'UNKNOWN_SUBJECT'
  | 'SUBJECT_DELETED'
  | 'UNKNOWN_SESSION'
  | 'UNKNOWN_CLASS'
  | 'STUDENT_ID_TAKEN'
  | 'EVENT_ID_TAKEN';

export type SyncStatus = 'APPLIED' | 'NO_EFFECT' | 'CONFLICT_SUPERSEDED' | 'WAITING_FOR_BASE' | 'PENDING';

export interface SyncedEntry {
  readonly eventId: string;
  readonly serverTimestamp: string;
  readonly status: SyncStatus;
  /** True when the event was already stored (a resend). */
  readonly duplicate: boolean;
}

export interface SyncConflictEntry {
  readonly aspect: string;
  readonly policy: 'ADMIN_PRECEDENCE' | 'LAST_WRITER_WINS' | 'BASED_ON_SUPERSEDED';
  readonly winnerEventId: string;
  readonly loserEventId: string;
}

export interface SyncFailure {
  readonly index: number;
  readonly eventId: string | null;
  readonly reason: SyncFailureReason;
  readonly message: string;
  readonly issues?: ReadonlyArray<ValidationIssue>;
  /** How many issues beyond those listed the event had. */
  readonly issuesOmitted?: number;
}

export interface SyncResult {
  readonly synced: ReadonlyArray<SyncedEntry>;
  readonly conflicts: ReadonlyArray<SyncConflictEntry>;
  readonly failed: ReadonlyArray<SyncFailure>;
}

export interface SyncService {
  /**
   * `settle: false` answers once the events are stored, without waiting for the pipeline (every
   * stored event is then `PENDING`): the replication push, whose outcomes reach tablets by pull.
   */
  sync(
    actor: Actor,
    events: ReadonlyArray<unknown>,
    options?: { readonly settle?: boolean },
  ): Promise<SyncResult>;
}

const eventIdOf = (u: unknown): string | null =>
  typeof u === 'object' && u !== null && 'eventId' in u && typeof u.eventId === 'string'
    ? u.eventId.slice(0, 100)
    : null;

const failureMessages: Readonly<Record<SyncFailureReason, string>> = {
  VALIDATION_FAILED: 'The event does not match its kind; see issues.',
  UNKNOWN_TYPE: 'No such event type.',
  FORBIDDEN_ROLE: "The caller's role may not record this kind of event.",
  UNKNOWN_SUBJECT: 'No such student.',
  SUBJECT_DELETED: 'The student is deleted.',
  UNKNOWN_SESSION: 'No such session.',
  UNKNOWN_CLASS: 'No such class.',
  STUDENT_ID_TAKEN: 'A student with this studentId exists already; a registration creates a new one.',
  EVENT_ID_TAKEN: 'This eventId belongs to another event.',
};

const fail = (
  index: number,
  eventId: string | null,
  reason: SyncFailureReason,
  issues?: ReadonlyArray<ValidationIssue>,
): SyncFailure => ({
  index,
  eventId,
  reason,
  message: failureMessages[reason],
  ...(issues === undefined ? {} : capIssues(issues, MAX_REPORTED_EVENT_ISSUES)),
});

const needsSession = (e: SyncEvent): string | undefined => ('sessionId' in e ? e.sessionId : undefined);

export const syncService = (deps: {
  readonly events: EventStore;
  readonly students: StudentStore;
  readonly classes: ClassStore;
  readonly pipeline: Pick<EventPipeline, 'settle'>;
  readonly clock: () => Date;
  readonly settleTimeoutMs?: number;
  /** The admission rule's facts on arrival, and where its exceptions are kept (absent: not judged). */
  readonly admission?: ArrivalDeps & {
    readonly recordExceptions: (exceptions: ReadonlyArray<AdmissionException>) => Promise<void>;
  };
}): SyncService => ({
  async sync(actor, raw, options = {}) {
    const failed: SyncFailure[] = [];
    const accepted: Array<{ index: number; event: SyncEvent; aspect: string }> = [];
    const seen = new Map<string, string>();
    raw.forEach((u, index) => {
      const decoded = decodeSyncEvent(u);
      if (E.isLeft(decoded)) {
        const issues =
          decoded.left.reason === 'VALIDATION_FAILED'
            ? toIssues('body', decoded.left.errors).map((i) => ({
                ...i,
                path: i.path.replace(/^body/, `body.events.${index}`),
              }))
            : undefined;
        failed.push(fail(index, eventIdOf(u), decoded.left.reason, issues));
        return;
      }
      const event = decoded.right;
      const allowed =
        event.type === 'STUDENT_FIELD_SET'
          ? authorize('cadastro', actor.principal, 'students.add')
          : authorize('chamador', actor.principal, 'attendance');
      if (E.isLeft(allowed)) {
        failed.push(fail(index, event.eventId, 'FORBIDDEN_ROLE'));
        return;
      }
      const aspect = aspectOfSync(event);
      // The same event twice in one batch is one event; the same id for another event is refused.
      const fingerprint = JSON.stringify(event);
      const before = seen.get(event.eventId);
      if (before !== undefined) {
        if (before !== fingerprint) failed.push(fail(index, event.eventId, 'EVENT_ID_TAKEN'));
        return;
      }
      seen.set(event.eventId, fingerprint);
      accepted.push({ index, event, aspect });
    });

    const students = await deps.students.getMany([...new Set(accepted.map((a) => a.event.studentId))]);
    const sessionIds = [...new Set(accepted.flatMap((a) => needsSession(a.event) ?? []))];
    const sessions = new Set<string>();
    for (const id of sessionIds) if ((await deps.classes.getSession(id)) !== undefined) sessions.add(id);
    const registrations = accepted.flatMap((a) => (a.event.type === 'VISITOR_REGISTERED' ? [a.event] : []));
    const classes = new Set<string>();
    for (const id of new Set(registrations.map((r) => r.classId)))
      if ((await deps.classes.getClass(id)) !== undefined) classes.add(id);
    const registeredHere = new Set(
      registrations
        .filter((r) => classes.has(r.classId) && !students.has(r.studentId))
        .map((r) => r.studentId),
    );
    // A visitor registered offline exists as an event before the pipeline creates the record: the
    // check-in that follows it (in this batch, or pushed after it) names a child the server knows of.
    const registeredBefore = new Set<string>();
    for (const id of new Set(accepted.map((a) => a.event.studentId)))
      if (
        !students.has(id) &&
        !registeredHere.has(id) &&
        (await deps.events.ofAspect(visitorAspect(id))).length > 0
      )
        registeredBefore.add(id);
    const serverTimestamp = deps.clock().toISOString();
    // Events that pass every check are written straight away; the store refuses an id it holds, and
    // only those refusals are read back (a resend answers as stored). An event that fails a check is
    // first looked up: a resend of an event stored before its child was deleted is still "stored".
    const verdicts = accepted.map(({ index, event, aspect }) => {
      const student = students.get(event.studentId);
      const sessionId = needsSession(event);
      const reason: SyncFailureReason | undefined =
        event.type === 'VISITOR_REGISTERED'
          ? student !== undefined || registeredBefore.has(event.studentId)
            ? 'STUDENT_ID_TAKEN'
            : !classes.has(event.classId)
              ? 'UNKNOWN_CLASS'
              : undefined
          : student === undefined
            ? registeredHere.has(event.studentId) || registeredBefore.has(event.studentId)
              ? sessionId !== undefined && !sessions.has(sessionId)
                ? 'UNKNOWN_SESSION'
                : undefined
              : 'UNKNOWN_SUBJECT'
            : student.status === 'DELETED'
              ? 'SUBJECT_DELETED'
              : sessionId !== undefined && !sessions.has(sessionId)
                ? 'UNKNOWN_SESSION'
                : undefined;
      return { index, event, aspect, reason };
    });
    // Check-ins the admission rule would refuse now are stored all the same (they happened), stamped
    // with why, and reported below.
    const admissions =
      deps.admission === undefined
        ? new Map<string, ArrivalVerdict>()
        : await judgeOnArrival(deps.admission, {
            events: verdicts.flatMap(({ event, reason }) =>
              reason === undefined &&
              (event.type === 'CHECK_IN' || event.type === 'CHECK_OUT' || event.type === 'EMERGENCY_CHECKOUT')
                ? [{ ...event, override: event.type === 'CHECK_IN' ? event.override : undefined }]
                : [],
            ),
            students,
            actorRoles: actor.principal.roles,
          });
    const refused = verdicts.filter((v) => v.reason !== undefined);
    const existing =
      refused.length === 0 ? new Map() : await deps.events.getMany(refused.map((v) => v.event.eventId));
    const toStore: NewEvent[] = [];
    // What stands in the store under each answered id: this batch's copy, or the one stored before.
    const storedCopies = new Map<string, NewEvent>();
    const answered: Array<{
      index: number;
      eventId: string;
      aspect: string;
      serverTimestamp: string;
      duplicate: boolean;
    }> = [];
    for (const { index, event, aspect, reason } of verdicts) {
      if (reason !== undefined) {
        const stored = existing.get(event.eventId);
        if (stored === undefined) failed.push(fail(index, event.eventId, reason));
        else if (isResendOf(stored, aspect, actor.principal.userId)) {
          storedCopies.set(event.eventId, stored);
          answered.push({
            index,
            eventId: event.eventId,
            aspect,
            serverTimestamp: stored.serverTimestamp,
            duplicate: true,
          });
        } else failed.push(fail(index, event.eventId, 'EVENT_ID_TAKEN'));
        continue;
      }
      toStore.push({
        eventId: event.eventId,
        type: event.type,
        subjectType: 'STUDENT',
        subjectId: event.studentId,
        aspect,
        // A registration starts its aspect: it has no base.
        baseVersion: 'baseVersion' in event ? (event.baseVersion ?? null) : null,
        payload: stampAdmission(
          payloadOfSync(event, mayOverride(actor.principal.roles)),
          admissions.get(event.eventId),
        ),
        actor: { userId: actor.principal.userId, role: actor.principal.primaryRole },
        deviceId: actor.deviceId,
        clientTimestamp: event.clientTimestamp,
        serverTimestamp,
      });
      const copy = toStore[toStore.length - 1];
      if (copy !== undefined) storedCopies.set(event.eventId, copy);
      answered.push({ index, eventId: event.eventId, aspect, serverTimestamp, duplicate: false });
    }

    // Already stored (a resend, or another request in between): read it back. On a cluster the copy
    // that refused ours may be withdrawn by its writer right after (decision 0023), leaving nothing to
    // read: that event is written again, a few times, before the batch is answered 503.
    let writing = toStore;
    for (let attempt = 1; writing.length > 0; attempt += 1) {
      const outcome = await deps.events.appendMany(writing);
      const raced = [...outcome.entries()].filter(([, o]) => o === 'duplicate').map(([id]) => id);
      const now = raced.length === 0 ? new Map() : await deps.events.getMany(raced);
      const racedIds = new Set(raced);
      const unread = new Set<string>();
      for (let i = answered.length - 1; i >= 0; i -= 1) {
        const a = answered[i];
        if (a === undefined || a.duplicate || !racedIds.has(a.eventId)) continue;
        const other = now.get(a.eventId);
        if (other === undefined) unread.add(a.eventId);
        else if (isResendOf(other, a.aspect, actor.principal.userId)) {
          answered[i] = { ...a, serverTimestamp: other.serverTimestamp, duplicate: true };
          storedCopies.set(a.eventId, other);
        } else {
          answered.splice(i, 1);
          failed.push(fail(a.index, a.eventId, 'EVENT_ID_TAKEN'));
        }
      }
      writing = writing.filter((e) => unread.has(e.eventId));
      if (writing.length > 0 && attempt === RACED_WRITE_ATTEMPTS)
        throw new QuorumNotMetError(writing[0]?.eventId ?? '');
      if (writing.length > 0) await pause(20 + Math.random() * 80);
    }
    // In the order the device sent them.
    answered.sort((a, b) => a.index - b.index);
    // From the stored copies, so a resend after a lost answer writes what the first arrival found.
    if (deps.admission !== undefined) {
      const exceptions = answered.flatMap((a) => {
        const copy = storedCopies.get(a.eventId);
        const found = copy === undefined ? undefined : admissionExceptionOf(copy);
        return found === undefined ? [] : [found];
      });
      if (exceptions.length > 0) await deps.admission.recordExceptions(exceptions);
    }

    const projected =
      options.settle === false
        ? new Map<string, AspectProjection>()
        : await deps.pipeline.settle(
            answered.map((a) => ({ eventId: a.eventId, aspect: a.aspect, justStored: !a.duplicate })),
            deps.settleTimeoutMs ?? 10_000,
          );
    const ids = new Set(answered.map((a) => a.eventId));
    const conflicts: SyncConflictEntry[] = [];
    for (const p of projected.values()) {
      for (const c of p.conflicts) {
        if (!ids.has(c.winner.eventId) && !ids.has(c.loser.eventId)) continue;
        conflicts.push({
          aspect: c.aspect,
          policy: c.policy,
          winnerEventId: c.winner.eventId,
          loserEventId: c.loser.eventId,
        });
      }
    }
    return {
      synced: answered.map((a) => ({
        eventId: a.eventId,
        serverTimestamp: a.serverTimestamp,
        status: statusOf(projected.get(a.aspect), a.eventId),
        duplicate: a.duplicate,
      })),
      conflicts,
      failed: failed.sort((a, b) => a.index - b.index),
    };
  },
});

const statusOf = (p: AspectProjection | undefined, eventId: string): SyncStatus => {
  switch (p === undefined ? undefined : outcomeOf(p, eventId)) {
    case 'APPLIED':
      return 'APPLIED';
    case 'NO_EFFECT':
      return 'NO_EFFECT';
    case 'SUPERSEDED':
      return 'CONFLICT_SUPERSEDED';
    case 'WAITING':
      return 'WAITING_FOR_BASE';
    default:
      return 'PENDING';
  }
};
