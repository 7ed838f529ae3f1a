/**
 * Check-in: a service that fetches the facts, asks the admission rule (`rules/admission.ts`, the same
 * function a tablet runs offline), stores the event and maps its outcome. Storing an event and learning
 * what the pipeline made of it is one port (`checkinEvents.ts`); check-out and emergency check-out live
 * in `checkoutService.ts`. Two requests that race on one child are concurrent events: one wins, the
 * other is told 409.
 */
import * as E from 'fp-ts/lib/Either.js';
import type { CheckinConfig, CheckinDoc } from '../domain/checkin.js';
import type { ClassDoc, ClassSessionDoc } from '../domain/classes.js';
import { type ApiError, apiError } from '../domain/errors.js';
import { checkinAspect } from '../domain/eventTypes.js';
import type { Actor } from '../domain/principal.js';
import type { StudentDoc } from '../domain/student.js';
import { keyedLock } from '../lib/keyedLock.js';
import { requestScopedId } from '../lib/requestIds.js';
import type { StudentService } from '../registration/studentService.js';
import { decideAdmission, mayOverride, type PolicyRefusal, roomRulesOf } from '../rules/admission.js';
import { remainingAttempts } from '../rules/checkin.js';
import type { CheckinStore } from '../store/checkins.js';
import type { ClassStore } from '../store/classes.js';
import type { EventStore } from '../store/events.js';
import type { StudentStore } from '../store/students.js';
import type { EventPipeline } from '../sync/pipelineRuntime.js';
import type { StudentDirectory } from '../sync/studentDirectory.js';
import { notFound, refusalError } from './admissionErrors.js';
import { type AdmissionFactsDeps, type KnownStudent, readAdmissionFacts } from './admissionFacts.js';
import { checkinEvents } from './checkinEvents.js';
import { type CheckoutService, checkoutService, notApplied, superseded } from './checkoutService.js';
import type { PickupService } from './pickupService.js';

export interface CheckinServiceDeps extends Omit<AdmissionFactsDeps, 'students'> {
  readonly checkins: CheckinStore;
  readonly students: StudentStore;
  /**
   * The student directory, read first for the child's status: this process's writes are in it at
   * once, another instance's within the private feed's delay; a child it lacks is read from the store.
   */
  readonly directory?: Pick<StudentDirectory, 'get'>;
  readonly studentService: StudentService;
  readonly classes: ClassStore;
  readonly pickups: PickupService;
  readonly events: EventStore;
  readonly pipeline: Pick<EventPipeline, 'settle' | 'current' | 'catchUp'>;
  readonly clock: () => Date;
  readonly settleTimeoutMs?: number;
}

/** What an ADMIN's check-in past the rule waived, for the answer's audit entry. */
export interface CheckedIn {
  readonly checkin: CheckinDoc;
  readonly waived: ReadonlyArray<PolicyRefusal['reason']>;
}

export interface CheckinService extends CheckoutService {
  config(): Promise<CheckinConfig>;
  saveConfig(config: CheckinConfig): Promise<E.Either<ApiError, CheckinConfig>>;
  checkIn(
    actor: Actor,
    input: {
      sessionId: string;
      studentId?: string;
      visitor?: { displayName: string; guardianName: string; phone: string };
      override?: { justification: string };
    },
  ): Promise<E.Either<ApiError, CheckedIn>>;
  find(query: {
    checkInId?: string;
    studentId?: string;
    sessionId?: string;
  }): Promise<E.Either<ApiError, { checkin: CheckinDoc; student: StudentDoc }>>;
  remaining(checkin: CheckinDoc): Promise<number>;
  /** The master secret, for deriving day keys; callers never send it out. */
  secret(): Promise<Uint8Array>;
}

const CONFIG_LOCK = 'checkin-config';

export const checkinService = (deps: CheckinServiceDeps): CheckinService => {
  const now = () => deps.clock();
  // One lock for check-ins and check-outs: both change a child's aspect, and run in turn on one.
  const locks = keyedLock();
  const writes = checkinEvents(deps);
  const config = async (): Promise<CheckinConfig> => {
    // The contract creates the secret on the first read of the configuration.
    await deps.checkins.secret(now().toISOString());
    const { updatedAt: _u, ...stored } = await deps.checkins.config();
    return stored;
  };
  const checkouts = checkoutService({ ...deps, writes, config, locks });

  /**
   * The child a check-in names: a registered one (from the directory, else the store), or a walk-in
   * registered now. A visitor is registered only once the room would take them.
   */
  const childOf = async (
    actor: Actor,
    session: ClassSessionDoc,
    sessionClass: ClassDoc | undefined,
    input: Parameters<CheckinService['checkIn']>[1],
    requiredFields: CheckinConfig['requiredFields'],
  ): Promise<E.Either<ApiError, KnownStudent | undefined>> => {
    if (input.visitor === undefined)
      return E.right(
        input.studentId === undefined
          ? undefined
          : (deps.directory?.get(input.studentId) ?? (await deps.students.get(input.studentId))),
      );
    const provisional = { studentId: '', status: 'ACTIVE' as const, visitor: true };
    const facts = await readAdmissionFacts(deps, {
      session,
      sessionClass,
      student: provisional,
      checkins: [],
      requiredFields,
      actorRoles: actor.principal.roles,
    });
    const before = decideAdmission({ checkInId: '', override: input.override }, facts);
    if (before.kind === 'REFUSE') return E.left(refusalError(before));
    return deps.studentService.create(
      actor,
      {
        displayName: input.visitor.displayName,
        guardianName: input.visitor.guardianName,
        phones: [{ number: input.visitor.phone, qualifier: 'visitante' }],
        classId: session.classId,
      },
      { visitor: true },
    );
  };

  return {
    ...checkouts,
    config,

    async saveConfig(next) {
      // One save at a time in this process, so concurrent saves here never exhaust each other's
      // compare-and-swap retries; only other instances can still contend (then 409).
      const saved = await locks.run(CONFIG_LOCK, () => deps.checkins.saveConfig(next, now().toISOString()));
      return saved === 'SAVED'
        ? E.right(next)
        : E.left(apiError('CONFLICT', 'The configuration was being changed concurrently; send it again.'));
    },

    async checkIn(actor, input) {
      if ((input.studentId === undefined) === (input.visitor === undefined))
        return E.left(
          apiError('VALIDATION_FAILED', 'Give exactly one of studentId or visitor.', {
            issues: [{ path: 'body', message: 'exactly one of studentId or visitor' }],
          }),
        );
      if (input.override !== undefined && !mayOverride(actor.principal.roles))
        return E.left(apiError('FORBIDDEN_ROLE', 'Only an ADMIN may override the admission rules.'));
      const session = await deps.classes.getSession(input.sessionId);
      if (session === undefined) return E.left(notFound('session'));
      const sessionClass = await deps.classes.getClass(session.classId);
      const { requiredFields } = await deps.checkins.config();
      const child = await childOf(actor, session, sessionClass, input, requiredFields);
      if (E.isLeft(child)) return child;
      const student = child.right;
      if (student === undefined) return E.left(notFound('student'));
      const { sessionId } = session;
      const { studentId, visitor } = student;
      const checkInId = requestScopedId(actor.requestKey, 'check-in');
      const eventId = requestScopedId(actor.requestKey, 'CHECK_IN');
      // A random id has no record yet, and the cache may say so; a derived one may (an earlier attempt).
      // When the ledger held nothing for the key, the record is almost surely absent, and the cache is
      // told so (issue #23: the pipeline's read that found nothing). Should an attempt that failed have
      // stored it after all, nothing decides on the absence: the pipeline's write is a compare-and-swap
      // (a 409 reads the record), and the answer re-reads a record it finds absent (`record`).
      if (actor.requestKey === undefined || actor.freshKey === true) deps.checkins.minted(checkInId);
      await writes.backlogProjected();
      // A room with a limit takes its check-ins one at a time in this process, so two doors here
      // cannot both take its last place; instances sharing a store still may (decision 0026).
      const rules = roomRulesOf(sessionClass);
      const limited = rules.capacity !== null || rules.childrenPerVolunteer !== null;
      const inRoom = <A>(task: () => Promise<A>) => (limited ? locks.run(`room:${sessionId}`, task) : task());
      let decidedNow = false;
      let waived: ReadonlyArray<PolicyRefusal['reason']> = [];
      const outcome = await inRoom(() =>
        locks.run(checkinAspect(sessionId, studentId), async () => {
          const head = await writes.head(sessionId, studentId, eventId);
          if (head.earlier !== undefined) return head.earlier;
          const facts = await readAdmissionFacts(deps, {
            session,
            sessionClass,
            student,
            checkins: head.checkins,
            requiredFields,
            actorRoles: actor.principal.roles,
          });
          const decision = decideAdmission({ checkInId, override: input.override }, facts);
          if (decision.kind === 'REFUSE') return decision;
          decidedNow = true;
          waived = decision.waived.map((w) => w.reason);
          return writes.store(actor, {
            eventId,
            type: 'CHECK_IN',
            sessionId,
            studentId,
            baseVersion: head.version,
            payload: {
              checkInId,
              sessionId,
              visitor,
              ...(decision.justification === null
                ? {}
                : { override: { justification: decision.justification, waived } }),
            },
          });
        }),
      );
      if (typeof outcome === 'object' && 'kind' in outcome) return E.left(refusalError(outcome));
      if (outcome === 'lost')
        return E.left(refusalError({ kind: 'REFUSE', refusal: { reason: 'ALREADY_CHECKED_IN' } }));
      if (typeof outcome !== 'string') return E.left(superseded('CHECKIN_SUPERSEDED', outcome));
      if (outcome === 'pending') return E.left(notApplied());
      const created = await writes.record(checkInId, () => true, decidedNow);
      if (created === undefined) return E.left(notApplied());
      return E.right({ checkin: created, waived });
    },

    async find(query) {
      if (query.checkInId === undefined && (query.studentId === undefined || query.sessionId === undefined))
        return E.left(
          apiError('VALIDATION_FAILED', 'Give checkInId, or studentId and sessionId.', {
            issues: [{ path: 'query', message: 'checkInId, or studentId and sessionId' }],
          }),
        );
      const checkin =
        query.checkInId !== undefined
          ? await deps.checkins.get(query.checkInId)
          : await writes.openCheckin(query.sessionId ?? '', query.studentId ?? '');
      if (checkin === undefined) return E.left(notFound('check-in'));
      const student = await deps.students.get(checkin.studentId);
      if (student === undefined) return E.left(notFound('student'));
      return E.right({ checkin, student });
    },

    secret: () => deps.checkins.secret(now().toISOString()),

    async remaining(checkin) {
      const { maxCheckoutAttempts } = await deps.checkins.config();
      return remainingAttempts(checkin.failedAttempts, maxCheckoutAttempts);
    },
  };
};
