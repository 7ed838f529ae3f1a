/**
 * Check-in and check-out: the moment a child goes home. Decisions come from `rules/checkin.ts` (the
 * same rules a tablet runs offline); this module reads and writes the records around them, counting
 * attempts by compare-and-swap so concurrent attempts are never lost or double-counted.
 */
import { randomUUID } from 'node:crypto';
import * as E from 'fp-ts/lib/Either.js';
import { codeFor } from '../crypto/dayKeys.js';
import type { CheckinConfig, CheckinDoc, PickupMode } from '../domain/checkin.js';
import { type ApiError, apiError } from '../domain/errors.js';
import type { Actor } from '../domain/principal.js';
import type { StudentDoc } from '../domain/student.js';
import type { StudentService } from '../roster/studentService.js';
import {
  decideCheckout,
  mayEmergencyCheckout,
  normaliseCode,
  phoneSuffixMatches,
  remainingAttempts,
} from '../rules/checkin.js';
import { foldName } from '../rules/students.js';
import type { CheckinStore, NewCheckin } from '../store/checkins.js';
import type { ClassStore } from '../store/classes.js';
import type { EventStore } from '../store/events.js';
import type { StudentStore } from '../store/students.js';
import type { AllowedAdult, PickupService } from './pickupService.js';

export interface CheckinServiceDeps {
  readonly checkins: CheckinStore;
  readonly students: StudentStore;
  readonly studentService: StudentService;
  readonly classes: ClassStore;
  readonly pickups: PickupService;
  readonly events: EventStore;
  readonly clock: () => Date;
}

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

const notFound = (what: string): ApiError => apiError('NOT_FOUND', `No such ${what}.`);

export interface CheckinService {
  config(): Promise<CheckinConfig>;
  saveConfig(config: CheckinConfig): Promise<CheckinConfig>;
  checkIn(
    actor: Actor,
    input: {
      sessionId: string;
      studentId?: string;
      visitor?: { displayName: string; guardianName: string; phone: string };
    },
  ): Promise<E.Either<ApiError, CheckinDoc>>;
  find(query: {
    checkInId?: string;
    studentId?: string;
    sessionId?: string;
  }): Promise<E.Either<ApiError, { checkin: CheckinDoc; student: StudentDoc }>>;
  checkOut(
    actor: Actor,
    input: { checkInId: string; code: string; pickupPerson: string; pickupPhoneSuffix?: string },
  ): Promise<E.Either<ApiError, CheckinDoc>>;
  emergency(
    actor: Actor,
    input: { checkInId: string; justification: string; pickupPerson: string },
  ): Promise<E.Either<ApiError, CheckinDoc>>;
  remaining(checkin: CheckinDoc): Promise<number>;
  /** The master secret, for deriving day keys; callers never send it out. */
  secret(): Promise<Uint8Array>;
}

export const checkinService = (deps: CheckinServiceDeps): CheckinService => {
  const now = () => deps.clock();
  const event = (actor: Actor, type: string, c: CheckinDoc, payload: Record<string, unknown>) =>
    deps.events.append({
      eventId: randomUUID(),
      type,
      subjectType: 'CHECK_IN',
      subjectId: c.studentId,
      payload: { checkInId: c.checkInId, sessionId: c.sessionId, ...payload },
      actor: { userId: actor.principal.userId, role: actor.principal.primaryRole },
      deviceId: actor.deviceId,
      clientTimestamp: now().toISOString(),
      serverTimestamp: now().toISOString(),
    });
  const rest = (doc: CheckinDoc): NewCheckin => {
    const { _id: _i, _rev: _r, docType: _d, ...r } = doc;
    return r;
  };

  const service: CheckinService = {
    async config() {
      // The contract creates the secret on the first read of the configuration.
      await deps.checkins.secret(now().toISOString());
      const { updatedAt: _u, ...config } = await deps.checkins.config();
      return config;
    },

    async saveConfig(config) {
      await deps.checkins.saveConfig(config, now().toISOString());
      return config;
    },

    async checkIn(actor, input) {
      if ((input.studentId === undefined) === (input.visitor === undefined)) {
        return E.left(
          apiError('VALIDATION_FAILED', 'Give exactly one of studentId or visitor.', {
            issues: [{ path: 'body', message: 'exactly one of studentId or visitor' }],
          }),
        );
      }
      const session = await deps.classes.getSession(input.sessionId);
      if (session === undefined) return E.left(notFound('session'));
      let student: StudentDoc | undefined;
      if (input.visitor !== undefined) {
        const created = await deps.studentService.create(
          actor,
          {
            displayName: input.visitor.displayName,
            guardianName: input.visitor.guardianName,
            phones: [{ number: input.visitor.phone, qualifier: 'visitante' }],
            classId: session.classId,
          },
          { visitor: true },
        );
        if (E.isLeft(created)) return created;
        student = created.right;
      } else if (input.studentId !== undefined) {
        student = await deps.students.get(input.studentId);
      }
      if (student === undefined) return E.left(notFound('student'));
      if (student.status === 'DELETED')
        return E.left(apiError('CONFLICT', 'The student is deleted.', { reason: 'STUDENT_DELETED' }));
      const at = now();
      const secret = await deps.checkins.secret(at.toISOString());
      const created = await deps.checkins.create({
        checkInId: randomUUID(),
        studentId: student.studentId,
        sessionId: session.sessionId,
        code: codeFor(secret, student.studentId, at),
        checkedInAt: at.toISOString(),
        checkedInBy: actor.principal.userId,
        status: 'CHECKED_IN',
        failedAttempts: 0,
        checkedOutAt: null,
        checkedOutBy: null,
        pickupPerson: null,
        emergency: false,
        justification: null,
      });
      if (created === 'ALREADY_CHECKED_IN') {
        return E.left(
          apiError('CONFLICT', 'The child is already checked in to this session.', {
            reason: 'ALREADY_CHECKED_IN',
          }),
        );
      }
      await event(actor, 'CHECK_IN', created, { visitor: student.visitor });
      return E.right(created);
    },

    async find(query) {
      if (query.checkInId === undefined && (query.studentId === undefined || query.sessionId === undefined)) {
        return E.left(
          apiError('VALIDATION_FAILED', 'Give checkInId, or studentId and sessionId.', {
            issues: [{ path: 'query', message: 'checkInId, or studentId and sessionId' }],
          }),
        );
      }
      const checkin =
        query.checkInId !== undefined
          ? await deps.checkins.get(query.checkInId)
          : query.studentId !== undefined && query.sessionId !== undefined
            ? await deps.checkins.openCheckIn(query.sessionId, query.studentId)
            : undefined;
      if (checkin === undefined) return E.left(notFound('check-in'));
      const student = await deps.students.get(checkin.studentId);
      if (student === undefined) return E.left(notFound('student'));
      return E.right({ checkin, student });
    },

    async checkOut(actor, input) {
      const { pickupMode, maxCheckoutAttempts } = await service.config();
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
            return E.left(
              apiError('CONFLICT', 'The child is already checked out.', { reason: 'ALREADY_CHECKED_OUT' }),
            );
          case 'LOCKED':
            return E.left(apiError('CHECKOUT_LOCKED', undefined, { remainingAttempts: 0 }));
          case 'ADULT_NOT_AUTHORIZED':
            return E.left(apiError('PICKUP_NOT_AUTHORIZED'));
          case 'MISMATCH': {
            const updated = await deps.checkins.update(current, {
              ...rest(current),
              failedAttempts: current.failedAttempts + 1,
            });
            if (updated === 'CONFLICT') continue;
            await event(actor, 'CHECKOUT_ATTEMPT', updated, { failedAttempts: updated.failedAttempts });
            return E.left(
              apiError('CHECKOUT_CODE_MISMATCH', undefined, {
                remainingAttempts: decision.remainingAttempts,
              }),
            );
          }
          case 'CHECK_OUT': {
            const at = now().toISOString();
            const updated = await deps.checkins.update(current, {
              ...rest(current),
              status: 'CHECKED_OUT',
              checkedOutAt: at,
              checkedOutBy: actor.principal.userId,
              pickupPerson: input.pickupPerson,
            });
            if (updated === 'CONFLICT') continue;
            await event(actor, 'CHECK_OUT', updated, { pickupMode });
            return E.right(updated);
          }
        }
      }
      return E.left(
        apiError('CONFLICT', 'The check-in changed too often while this request ran; try again.'),
      );
    },

    async emergency(actor, input) {
      const { emergencyCheckoutAdminOnly } = await service.config();
      if (
        !mayEmergencyCheckout(actor.principal.roles, actor.principal.permissions, emergencyCheckoutAdminOnly)
      ) {
        return E.left(
          apiError(
            'FORBIDDEN_ROLE',
            'Emergency check-out is reserved to ADMIN by the check-in configuration.',
          ),
        );
      }
      for (let attempt = 0; attempt < 50; attempt += 1) {
        const current = await deps.checkins.get(input.checkInId);
        if (current === undefined) return E.left(notFound('check-in'));
        if (current.status === 'CHECKED_OUT') {
          return E.left(
            apiError('CONFLICT', 'The child is already checked out.', { reason: 'ALREADY_CHECKED_OUT' }),
          );
        }
        const updated = await deps.checkins.update(current, {
          ...rest(current),
          status: 'CHECKED_OUT',
          checkedOutAt: now().toISOString(),
          checkedOutBy: actor.principal.userId,
          pickupPerson: input.pickupPerson,
          emergency: true,
          justification: input.justification,
        });
        if (updated === 'CONFLICT') continue;
        await event(actor, 'EMERGENCY_CHECKOUT', updated, { justification: input.justification });
        return E.right(updated);
      }
      return E.left(
        apiError('CONFLICT', 'The check-in changed too often while this request ran; try again.'),
      );
    },

    secret: () => deps.checkins.secret(now().toISOString()),

    async remaining(checkin) {
      const { maxCheckoutAttempts } = await deps.checkins.config();
      return remainingAttempts(checkin.failedAttempts, maxCheckoutAttempts);
    },
  };
  return service;
};
