/**
 * The port "store an event about a child's check-in aspect and learn its outcome", one place for the
 * protocol every check-in, check-out and emergency check-out follows: read the aspect as it stands,
 * append the event based on its version, wait for the event pipeline to decide it with the conflict
 * rule (the same path as a tablet's offline events), and read the record the pipeline wrote.
 */
import type { CheckinDoc } from '../domain/checkin.js';
import { checkinAspect } from '../domain/eventTypes.js';
import type { Actor } from '../domain/principal.js';
import { type AspectProjection, outcomeOf, type Supersession, supersessionOf } from '../rules/projections.js';
import type { CheckinStore } from '../store/checkins.js';
import type { EventStore } from '../store/events.js';
import type { EventPipeline } from '../sync/pipelineRuntime.js';

/**
 * `applied` when the event took effect; the supersession when a concurrent change won over it (another
 * instance's, or a tablet's that arrived meanwhile); `lost` when it changed nothing; `pending` when the
 * pipeline did not decide it in time.
 */
export type Outcome = 'applied' | 'lost' | 'pending' | Supersession;

export interface AspectHead {
  readonly aspect: string;
  readonly version: string | null;
  readonly checkins: ReadonlyArray<{ readonly checkInId: string; readonly status: string }>;
  /** What became of `eventId` when the aspect already holds it (an earlier attempt of this request). */
  readonly earlier: Exclude<Outcome, 'pending'> | undefined;
}

export interface CheckinEvent {
  readonly eventId: string;
  readonly type: 'CHECK_IN' | 'CHECK_OUT' | 'EMERGENCY_CHECKOUT';
  readonly sessionId: string;
  readonly studentId: string;
  readonly baseVersion: string | null;
  readonly payload: Record<string, unknown>;
}

export interface CheckinEvents {
  head(sessionId: string, studentId: string, eventId?: string): Promise<AspectHead>;
  /**
   * Appends the event and waits for its outcome. An earlier attempt of the same keyed request stored
   * this very event (its id derives from the request): appending it again stores nothing, and the
   * outcome read is that event's.
   */
  store(actor: Actor, event: CheckinEvent): Promise<Outcome>;
  /** Whether `eventId`, stored by an earlier attempt, was applied once the pipeline has it. */
  appliedEarlier(eventId: string, sessionId: string, studentId: string): Promise<boolean>;
  /**
   * The record once the pipeline has settled an event. Where instances share the store, another
   * instance's pipeline may have written it and this one found the aspect already holding the event;
   * the cached copy may then predate that write until the private feed tells this process. A copy
   * that cannot be what the event left (none at all, or still open after a close) is read again from
   * the store, so the answer shows what the request did (issue #23).
   */
  record(
    checkInId: string,
    couldBeSettled: (record: CheckinDoc) => boolean,
    decidedNow: boolean,
  ): Promise<CheckinDoc | undefined>;
  /** The child's open check-in at the session, if any. */
  openCheckin(sessionId: string, studentId: string): Promise<CheckinDoc | undefined>;
  /** Resolves once the pipeline has projected what was stored before this process started. */
  backlogProjected(): Promise<void>;
}

export const checkinEvents = (deps: {
  readonly events: Pick<EventStore, 'append' | 'get'>;
  readonly checkins: Pick<CheckinStore, 'lastWritten' | 'get' | 'getStored'>;
  readonly pipeline: Pick<EventPipeline, 'settle' | 'current' | 'catchUp'>;
  readonly clock: () => Date;
  readonly settleTimeoutMs?: number;
}): CheckinEvents => {
  const decided = (projection: AspectProjection, eventId: string): Exclude<Outcome, 'pending'> =>
    outcomeOf(projection, eventId) === 'APPLIED'
      ? 'applied'
      : (supersessionOf(projection, eventId) ?? 'lost');
  // After a start, the pipeline may still be projecting events stored before it, among them a
  // check-in whose process died before it answered. The embedded store's ledger keeps no claim across
  // a restart, so the client's retry runs again at once: the first decision waits for that backlog,
  // so the retry sees the check-in rather than racing it with a second event. Later ones find none.
  let caughtUp: Promise<void> | undefined;

  return {
    backlogProjected() {
      caughtUp ??= deps.pipeline.catchUp();
      return caughtUp;
    },

    async head(sessionId, studentId, eventId) {
      const aspect = checkinAspect(sessionId, studentId);
      const current = await deps.pipeline.current(aspect);
      const state = current?.state?.kind === 'checkin' ? current.state : undefined;
      const earlier =
        current === undefined || eventId === undefined || outcomeOf(current, eventId) === undefined
          ? undefined
          : decided(current, eventId);
      return { aspect, version: current?.version ?? null, checkins: state?.checkins ?? [], earlier };
    },

    async store(actor, event) {
      const at = deps.clock().toISOString();
      const aspect = checkinAspect(event.sessionId, event.studentId);
      const stored = await deps.events.append({
        eventId: event.eventId,
        type: event.type,
        subjectType: 'CHECK_IN',
        subjectId: event.studentId,
        aspect,
        baseVersion: event.baseVersion,
        payload: event.payload,
        actor: { userId: actor.principal.userId, role: actor.principal.primaryRole },
        deviceId: actor.deviceId,
        clientTimestamp: at,
        serverTimestamp: at,
      });
      const projection = (
        await deps.pipeline.settle(
          [{ eventId: event.eventId, aspect, justStored: stored === 'stored' }],
          deps.settleTimeoutMs,
        )
      ).get(aspect);
      return projection === undefined ? 'pending' : decided(projection, event.eventId);
    },

    async openCheckin(sessionId, studentId) {
      // The aspect names the open check-in, the record confirms it (the pipeline writes the record
      // before the aspect, so a check-in the aspect names has its record).
      const current = await deps.pipeline.current(checkinAspect(sessionId, studentId));
      const state = current?.state?.kind === 'checkin' ? current.state : undefined;
      const open = state?.checkins.find((c) => c.status === 'CHECKED_IN');
      const doc = open === undefined ? undefined : await deps.checkins.get(open.checkInId);
      return doc?.status === 'CHECKED_IN' ? doc : undefined;
    },

    async appliedEarlier(eventId, sessionId, studentId) {
      const aspect = checkinAspect(sessionId, studentId);
      const current = await deps.pipeline.current(aspect);
      if (current !== undefined && outcomeOf(current, eventId) !== undefined)
        return decided(current, eventId) === 'applied';
      if ((await deps.events.get(eventId)) === undefined) return false;
      // The pipeline closes the record before it commits the aspect (the write-through comes first): an
      // earlier attempt's event not in the aspect yet is waited for, not taken for somebody else's
      // check-out (the same keyed check-out sent to two instances answered 409 ALREADY_CHECKED_OUT twice).
      const projection = (await deps.pipeline.settle([{ eventId, aspect }], deps.settleTimeoutMs)).get(
        aspect,
      );
      return projection !== undefined && decided(projection, eventId) === 'applied';
    },

    async record(checkInId, couldBeSettled, decidedNow) {
      // What this process's pipeline wrote for the event this request just stored, usually: no read
      // back. A retry of a request decided earlier reads what stands now (another instance may have
      // changed the record since this process wrote it).
      const written = decidedNow ? deps.checkins.lastWritten(checkInId) : undefined;
      if (written !== undefined && couldBeSettled(written)) return written;
      const held = await deps.checkins.get(checkInId);
      return held !== undefined && couldBeSettled(held) ? held : deps.checkins.getStored(checkInId);
    },
  };
};
