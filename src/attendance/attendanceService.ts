/**
 * Attendance marks: each is an immutable event about one aspect (a child's mark for a session, or for
 * a day when no session is named). Whether a mark stands is decided by the conflict rule over every
 * event of that aspect, so the answer is the same whatever order devices deliver their marks in.
 */
import { randomUUID } from 'node:crypto';
import * as E from 'fp-ts/lib/Either.js';
import { type ApiError, apiError } from '../domain/errors.js';
import { isResendOf } from '../domain/event.js';
import { attendanceAspect } from '../domain/eventTypes.js';
import type { Actor } from '../domain/principal.js';
import { resolveAspect } from '../rules/conflicts.js';
import { outcomeOf, type Supersession, supersessionOf } from '../rules/projections.js';
import type { ClassStore } from '../store/classes.js';
import type { EventStore } from '../store/events.js';
import type { StudentStore } from '../store/students.js';
import type { EventPipeline } from '../sync/pipelineRuntime.js';

export interface MarkInput {
  readonly studentId: string;
  readonly actionType: 'MARK_PRESENT' | 'MARK_ABSENT';
  readonly timestamp: string;
  readonly sessionId?: string;
  readonly eventId?: string;
  readonly baseVersion?: string | null;
}

export interface MarkResult {
  readonly eventId: string;
  readonly accepted: boolean;
  readonly serverTime: string;
  /** With `accepted: false`: the conflict that superseded the mark, as `/sync/events` names it. */
  readonly policy?: Supersession['policy'];
  readonly winnerEventId?: string;
  readonly loserEventId?: string;
}

export interface AttendanceService {
  mark(actor: Actor, input: MarkInput): Promise<E.Either<ApiError, MarkResult>>;
}

export const attendanceService = (deps: {
  readonly events: EventStore;
  readonly students: StudentStore;
  readonly classes: ClassStore;
  readonly pipeline: Pick<EventPipeline, 'settle'>;
  readonly clock: () => Date;
}): AttendanceService => ({
  async mark(actor, input) {
    const student = await deps.students.get(input.studentId);
    if (student === undefined) return E.left(apiError('NOT_FOUND', 'No such student.'));
    if (input.sessionId !== undefined && (await deps.classes.getSession(input.sessionId)) === undefined) {
      return E.left(apiError('NOT_FOUND', 'No such session.'));
    }
    const eventId = input.eventId ?? randomUUID();
    const aspect = attendanceAspect(input.studentId, input.sessionId, input.timestamp);
    const existing = await deps.events.get(eventId);
    // The same event sent again (a retry with a new key, a second batch) is stored once; another
    // event reusing its id is refused.
    if (existing !== undefined && !isResendOf(existing, aspect, actor.principal.userId)) {
      return E.left(
        apiError('CONFLICT', 'This eventId belongs to another event.', { reason: 'EVENT_ID_TAKEN' }),
      );
    }
    const serverTime = deps.clock().toISOString();
    const stored =
      existing === undefined
        ? await deps.events.append({
            eventId,
            type: input.actionType,
            subjectType: 'STUDENT',
            subjectId: input.studentId,
            aspect,
            baseVersion: input.baseVersion ?? null,
            payload: {
              actionType: input.actionType,
              ...(input.sessionId === undefined ? {} : { sessionId: input.sessionId }),
            },
            actor: { userId: actor.principal.userId, role: actor.principal.primaryRole },
            deviceId: actor.deviceId,
            clientTimestamp: input.timestamp,
            serverTimestamp: serverTime,
          })
        : 'duplicate';
    // Read-your-writes: the answer is the pipeline's decision once it has projected the mark.
    const projected = (
      await deps.pipeline.settle([{ eventId, aspect, justStored: stored === 'stored' }])
    ).get(aspect);
    const standing = projected === undefined ? undefined : outcomeOf(projected, eventId);
    if (projected !== undefined && standing !== undefined) {
      return E.right({
        eventId,
        accepted: standing !== 'SUPERSEDED',
        serverTime,
        ...supersessionOf(projected, eventId),
      });
    }
    // The pipeline is behind (a store hiccup): decide from the events themselves, with the same rule.
    const resolution = resolveAspect(
      aspect,
      (await deps.events.ofAspect(aspect)).map((e) => ({
        eventId: e.eventId,
        aspect,
        baseVersion: e.baseVersion ?? null,
        actorRole: e.actor.role,
        clientTimestamp: e.clientTimestamp,
      })),
    );
    const lost = resolution.conflicts.find((c) => c.loserEventId === eventId);
    return E.right({
      eventId,
      accepted: !resolution.superseded.includes(eventId),
      serverTime,
      ...(lost === undefined
        ? {}
        : { policy: lost.policy, winnerEventId: lost.winnerEventId, loserEventId: lost.loserEventId }),
    });
  },
});
