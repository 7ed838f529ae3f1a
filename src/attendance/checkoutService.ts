/**
 * Check-out and emergency check-out: the moment a child goes home. One attempt is judged by
 * `decideCheckout` (`rules/checkin.ts`: the code, the attempts lock, the adult), the same rule a
 * tablet runs offline; the close itself is an event about the child's check-in aspect, decided by the
 * pipeline like every other (`checkinEvents.ts`). Failed code attempts are counted on the record by
 * compare-and-swap, so they are never lost or double-counted.
 */
import { randomUUID } from 'node:crypto';
import * as E from 'fp-ts/lib/Either.js';
import type { CheckinConfig, CheckinDoc, PickupMode } from '../domain/checkin.js';
import { type ApiError, apiError } from '../domain/errors.js';
import { checkinAspect } from '../domain/eventTypes.js';
import type { Actor } from '../domain/principal.js';
import type { KeyedLock } from '../lib/keyedLock.js';
import { requestScopedId } from '../lib/requestIds.js';
import {
  decideCheckin,
  decideCheckout,
  mayEmergencyCheckout,
  normaliseCode,
  phoneSuffixMatches,
} from '../rules/checkin.js';
import type { Supersession } from '../rules/projections.js';
import { foldName } from '../rules/students.js';
import type { CheckinStore } from '../store/checkins.js';
import type { EventStore } from '../store/events.js';
import type { StudentStore } from '../store/students.js';
import type { CheckinEvents } from './checkinEvents.js';
import type { AllowedAdult, PickupService } from './pickupService.js';

/** CODE_AND_ADULT: the adult must be on the list now (N1, verified N2, or an N3 grant inside its window), and
 * when the entry has phones the typed suffix must end one of them. */
export const adultAllowed = (
  mode: PickupMode,
  adults: ReadonlyArray<AllowedAdult>,
  person: string,
  phoneSuffix: string | undefined,
): boolean => {
  if (mode === 'CODE_ONLY') return true;
  return adults.some(
    (a) =>
      foldName(a.name) === foldName(person) &&
      (a.phones.length === 0 ||
        (phoneSuffix !== undefined && a.phones.some((p) => phoneSuffixMatches(p, phoneSuffix)))),
  );
};

export interface CheckoutService {
  checkOut(
    actor: Actor,
    input: { checkInId: string; code: string; pickupPerson: string; pickupPhoneSuffix?: string },
  ): Promise<E.Either<ApiError, CheckinDoc>>;
  emergency(
    actor: Actor,
    input: { checkInId: string; justification: string; pickupPerson: string },
  ): Promise<E.Either<ApiError, CheckinDoc>>;
}

export const notApplied = (): ApiError =>
  apiError(
    'STORE_UNAVAILABLE',
    'The change is recorded but not applied yet; read the check-in again shortly.',
  );

/**
 * This request's own event lost to a concurrent one (two instances racing, or a tablet's event that
 * arrived meanwhile): kept, but superseded, and the answer names the conflict as `/sync/events` does.
 */
export const superseded = (
  reason: 'CHECKIN_SUPERSEDED' | 'CHECKOUT_SUPERSEDED',
  conflict: Supersession,
): ApiError =>
  apiError(
    'CONFLICT_SUPERSEDED',
    reason === 'CHECKIN_SUPERSEDED'
      ? 'A concurrent check-in of the same child won; this one is kept as superseded.'
      : 'A concurrent change of this check-in won; this check-out is kept as superseded.',
    { reason, ...conflict },
  );

const alreadyOut = (): ApiError =>
  apiError('CONFLICT', 'The child is already checked out.', { reason: 'ALREADY_CHECKED_OUT' });
const supersededCheckin = (): ApiError =>
  apiError('CONFLICT', 'This check-in lost to a concurrent check-in of the same child.', {
    reason: 'CHECKIN_SUPERSEDED',
  });
const notFound = (what: string): ApiError => apiError('NOT_FOUND', `No such ${what}.`);

export const checkoutService = (deps: {
  readonly checkins: Pick<CheckinStore, 'get' | 'countFailure'>;
  readonly students: Pick<StudentStore, 'get'>;
  readonly pickups: Pick<PickupService, 'allowedAdults'>;
  readonly events: Pick<EventStore, 'append'>;
  readonly writes: CheckinEvents;
  readonly config: () => Promise<CheckinConfig>;
  /** The check-in service's per-aspect lock: a check-in and a check-out of one child run in turn. */
  readonly locks: KeyedLock;
  readonly clock: () => Date;
}): CheckoutService => {
  /** A record-keeping event (no aspect): attempts are counted, not decided. */
  const recordAttempt = (actor: Actor, c: CheckinDoc) =>
    deps.events.append({
      eventId: randomUUID(),
      type: 'CHECKOUT_ATTEMPT',
      subjectType: 'CHECK_IN',
      subjectId: c.studentId,
      payload: { checkInId: c.checkInId, sessionId: c.sessionId, failedAttempts: c.failedAttempts },
      actor: { userId: actor.principal.userId, role: actor.principal.primaryRole },
      deviceId: actor.deviceId,
      clientTimestamp: deps.clock().toISOString(),
      serverTimestamp: deps.clock().toISOString(),
    });

  /** Closes an open check-in through an event; the record is re-read once the pipeline applied it. */
  const close = async (
    actor: Actor,
    current: CheckinDoc,
    type: 'CHECK_OUT' | 'EMERGENCY_CHECKOUT',
    payload: Record<string, unknown>,
  ): Promise<E.Either<ApiError, CheckinDoc>> => {
    await deps.writes.backlogProjected();
    const eventId = requestScopedId(actor.requestKey, type);
    const { sessionId, studentId, checkInId } = current;
    let decidedNow = false;
    const outcome = await deps.locks.run(checkinAspect(sessionId, studentId), async () => {
      const head = await deps.writes.head(sessionId, studentId, eventId);
      if (head.earlier !== undefined) return head.earlier;
      // Decided under the lock: a request just before this one may have closed it.
      const decision = decideCheckin(head.checkins, { type, checkInId });
      if (decision.kind === 'REFUSED') return 'lost';
      decidedNow = true;
      return deps.writes.store(actor, {
        eventId,
        type,
        sessionId,
        studentId,
        baseVersion: head.version,
        payload,
      });
    });
    if (outcome === 'pending') return E.left(notApplied());
    if (typeof outcome !== 'string') return E.left(superseded('CHECKOUT_SUPERSEDED', outcome));
    const after = await deps.writes.record(checkInId, (r) => r.status !== 'CHECKED_IN', decidedNow);
    if (outcome === 'lost' || after === undefined)
      return E.left(after?.status === 'SUPERSEDED' ? supersededCheckin() : alreadyOut());
    return E.right(after);
  };

  /**
   * Whether a check-in found closed was closed by an earlier attempt of this keyed request (its
   * answer was lost, or was a 503 while the pipeline caught up): the retry answers that success again.
   */
  const closedByThisRequest = (actor: Actor, closed: CheckinDoc, type: 'CHECK_OUT' | 'EMERGENCY_CHECKOUT') =>
    actor.requestKey === undefined
      ? Promise.resolve(false)
      : deps.writes.appliedEarlier(
          requestScopedId(actor.requestKey, type),
          closed.sessionId,
          closed.studentId,
        );

  return {
    async checkOut(actor, input) {
      const { pickupMode, maxCheckoutAttempts } = await deps.config();
      for (let attempt = 0; attempt < 50; attempt += 1) {
        const current = await deps.checkins.get(input.checkInId);
        if (current === undefined) return E.left(notFound('check-in'));
        const student = await deps.students.get(current.studentId);
        if (student === undefined) return E.left(notFound('student'));
        const decision = decideCheckout({
          status: current.status,
          failedAttempts: current.failedAttempts,
          maxAttempts: maxCheckoutAttempts,
          codeMatches: normaliseCode(input.code) === current.code,
          adultAllowed: adultAllowed(
            pickupMode,
            await deps.pickups.allowedAdults(student),
            input.pickupPerson,
            input.pickupPhoneSuffix,
          ),
        });
        switch (decision.kind) {
          case 'ALREADY_CHECKED_OUT':
            return (await closedByThisRequest(actor, current, 'CHECK_OUT'))
              ? E.right(current)
              : E.left(alreadyOut());
          case 'SUPERSEDED':
            return E.left(supersededCheckin());
          case 'LOCKED':
            return E.left(apiError('CHECKOUT_LOCKED', undefined, { remainingAttempts: 0 }));
          case 'ADULT_NOT_AUTHORIZED':
            return E.left(apiError('PICKUP_NOT_AUTHORIZED'));
          case 'MISMATCH': {
            const updated = await deps.checkins.countFailure(current);
            if (updated === 'CONFLICT') continue;
            await recordAttempt(actor, updated);
            return E.left(
              apiError('CHECKOUT_CODE_MISMATCH', undefined, {
                remainingAttempts: decision.remainingAttempts,
              }),
            );
          }
          case 'CHECK_OUT':
            return close(actor, current, 'CHECK_OUT', {
              checkInId: current.checkInId,
              sessionId: current.sessionId,
              pickupPerson: input.pickupPerson,
              pickupMode,
            });
        }
      }
      return E.left(
        apiError('CONFLICT', 'The check-in changed too often while this request ran; try again.'),
      );
    },

    async emergency(actor, input) {
      const { emergencyCheckoutAdminOnly } = await deps.config();
      if (
        !mayEmergencyCheckout(actor.principal.roles, actor.principal.permissions, emergencyCheckoutAdminOnly)
      )
        return E.left(
          apiError(
            'FORBIDDEN_ROLE',
            'Emergency check-out is reserved to ADMIN by the check-in configuration.',
          ),
        );
      const current = await deps.checkins.get(input.checkInId);
      if (current === undefined) return E.left(notFound('check-in'));
      if (current.status === 'CHECKED_OUT')
        return (await closedByThisRequest(actor, current, 'EMERGENCY_CHECKOUT'))
          ? E.right(current)
          : E.left(alreadyOut());
      if (current.status === 'SUPERSEDED') return E.left(supersededCheckin());
      return close(actor, current, 'EMERGENCY_CHECKOUT', {
        checkInId: current.checkInId,
        sessionId: current.sessionId,
        pickupPerson: input.pickupPerson,
        justification: input.justification,
      });
    },
  };
};
