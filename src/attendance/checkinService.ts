/**
 * Check-in and check-out: the moment a child goes home. Decisions come from `rules/checkin.ts` (the
 * same rules a tablet runs offline). A check-in, check-out or emergency check-out is an event about the
 * child's check-in aspect for the session, based on the version this request saw; the event pipeline
 * decides it with the conflict rule (the same path as a tablet's offline events) and writes the
 * check-in record, and the answer is read back once it has (read-your-writes). Two requests that race
 * on one check-in are concurrent events: one wins, the other is told 409. Failed code attempts are
 * counted on the record by compare-and-swap, so they are never lost or double-counted.
 */
import { randomUUID } from 'node:crypto';
import * as E from 'fp-ts/lib/Either.js';
import type { CheckinConfig, CheckinDoc, PickupMode } from '../domain/checkin.js';
import { type ApiError, apiError } from '../domain/errors.js';
import { checkinAspect } from '../domain/eventTypes.js';
import type { Actor } from '../domain/principal.js';
import type { StudentDoc } from '../domain/student.js';
import { keyedLock } from '../lib/keyedLock.js';
import { requestScopedId } from '../lib/requestIds.js';
import type { StudentService } from '../registration/studentService.js';
import {
  decideCheckin,
  decideCheckout,
  mayEmergencyCheckout,
  normaliseCode,
  phoneSuffixMatches,
  remainingAttempts,
} from '../rules/checkin.js';
import { type AspectProjection, outcomeOf, type Supersession, supersessionOf } from '../rules/projections.js';
import { foldName } from '../rules/students.js';
import type { CheckinStore } from '../store/checkins.js';
import type { ClassStore } from '../store/classes.js';
import type { EventStore } from '../store/events.js';
import type { StudentStore } from '../store/students.js';
import type { EventPipeline } from '../sync/pipelineRuntime.js';
import type { StudentDirectory } from '../sync/studentDirectory.js';
import type { AllowedAdult, PickupService } from './pickupService.js';

export interface CheckinServiceDeps {
  readonly checkins: CheckinStore;
  readonly students: StudentStore;
  /**
   * What the private feed keeps in memory of each student (`studentDirectory`): a check-in reads its
   * child's status there first. On CouchDB another instance's change of the child reaches it within the feed's delay,
   * and a check-in in between goes as it would have a moment earlier; this process's own writes are
   * in it at once. A child it does not hold yet is read from the store.
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

const CONFIG_LOCK = 'checkin-config';

const notFound = (what: string): ApiError => apiError('NOT_FOUND', `No such ${what}.`);

export interface CheckinService {
  config(): Promise<CheckinConfig>;
  saveConfig(config: CheckinConfig): Promise<E.Either<ApiError, CheckinConfig>>;
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

const notApplied = (): ApiError =>
  apiError(
    'STORE_UNAVAILABLE',
    'The change is recorded but not applied yet; read the check-in again shortly.',
  );

export const checkinService = (deps: CheckinServiceDeps): CheckinService => {
  const now = () => deps.clock();
  const locks = keyedLock();
  // After a start, the pipeline may still be projecting events stored before it, among them a
  // check-in whose process died before it answered. The embedded store's ledger keeps no claim across
  // a restart, so the client's retry runs again at once: the first decision waits for that backlog,
  // so the retry sees the check-in rather than racing it with a second event. Later ones find none.
  let caughtUp: Promise<void> | undefined;
  const backlogProjected = () => {
    caughtUp ??= deps.pipeline.catchUp();
    return caughtUp;
  };
  const actorOf = (actor: Actor) => ({ userId: actor.principal.userId, role: actor.principal.primaryRole });
  /** A record-keeping event (no aspect): attempts are counted, not decided. */
  const record = (actor: Actor, type: string, c: CheckinDoc, payload: Record<string, unknown>) =>
    deps.events.append({
      eventId: randomUUID(),
      type,
      subjectType: 'CHECK_IN',
      subjectId: c.studentId,
      payload: { checkInId: c.checkInId, sessionId: c.sessionId, ...payload },
      actor: actorOf(actor),
      deviceId: actor.deviceId,
      clientTimestamp: now().toISOString(),
      serverTimestamp: now().toISOString(),
    });

  /**
   * `lost` when the change changed nothing; a supersession when the conflict rule let another event
   * win over it.
   */
  type Decided = 'applied' | 'lost' | 'pending' | Supersession;

  /**
   * Appends a state change of the child's check-in aspect based on `baseVersion` and waits for the
   * pipeline's decision: `applied` when it took effect, the supersession when a concurrent change won,
   * `lost` when it changed nothing, `pending` when the pipeline did not get to it in time. An earlier
   * attempt of the same keyed request stored this very event (its id derives from the request):
   * appending it again stores nothing, and the decision read is that event's.
   */
  const decide = async (
    actor: Actor,
    eventId: string,
    aspect: string,
    baseVersion: string | null,
    type: 'CHECK_IN' | 'CHECK_OUT' | 'EMERGENCY_CHECKOUT',
    studentId: string,
    payload: Record<string, unknown>,
  ): Promise<Decided> => {
    const at = now().toISOString();
    const stored = await deps.events.append({
      eventId,
      type,
      subjectType: 'CHECK_IN',
      subjectId: studentId,
      aspect,
      baseVersion,
      payload,
      actor: actorOf(actor),
      deviceId: actor.deviceId,
      clientTimestamp: at,
      serverTimestamp: at,
    });
    const projection = (
      await deps.pipeline.settle([{ eventId, aspect, justStored: stored === 'stored' }], deps.settleTimeoutMs)
    ).get(aspect);
    if (projection === undefined) return 'pending';
    return decided(projection, eventId);
  };
  const decided = (projection: AspectProjection, eventId: string): Exclude<Decided, 'pending'> =>
    outcomeOf(projection, eventId) === 'APPLIED'
      ? 'applied'
      : // Superseded by the conflict rule: another instance's change or a tablet's event got in first.
        (supersessionOf(projection, eventId) ?? 'lost');

  /**
   * The aspect's current version and check-ins, and what became of `eventId` when the aspect already
   * holds it: an earlier attempt of this keyed request was decided, and this attempt answers the same.
   */
  const head = async (sessionId: string, studentId: string, eventId?: string) => {
    const aspect = checkinAspect(sessionId, studentId);
    const current = await deps.pipeline.current(aspect);
    const state = current?.state?.kind === 'checkin' ? current.state : undefined;
    const earlier =
      current === undefined || eventId === undefined || outcomeOf(current, eventId) === undefined
        ? undefined
        : decided(current, eventId);
    return { aspect, version: current?.version ?? null, checkins: state?.checkins ?? [], earlier };
  };

  /**
   * The child's open check-in at the session: the aspect names it, the record confirms it (the
   * pipeline writes the record before the aspect, so a check-in the aspect names has its record).
   */
  const openCheckIn = async (sessionId: string, studentId: string): Promise<CheckinDoc | undefined> => {
    const { checkins } = await head(sessionId, studentId);
    const open = checkins.find((c) => c.status === 'CHECKED_IN');
    if (open === undefined) return undefined;
    const doc = await deps.checkins.get(open.checkInId);
    return doc?.status === 'CHECKED_IN' ? doc : undefined;
  };

  /**
   * The record once the pipeline has settled this request's event. Where instances share the store,
   * another instance's pipeline may have written it and this one found the aspect already holding the
   * event; the cached copy may then predate that write until the private feed tells this process. A
   * copy that cannot be what the event left (none at all, or still open after a close) is read again
   * from the store, so the answer shows what the request did (issue #23).
   */
  const settledRecord = async (
    checkInId: string,
    couldBeSettled: (record: CheckinDoc) => boolean,
    decidedNow: boolean,
  ): Promise<CheckinDoc | undefined> => {
    // What this process's pipeline wrote for the event this request just stored, usually: no read
    // back. A retry of a request decided earlier reads what stands now (another instance may have
    // changed the record since this process wrote it).
    const written = decidedNow ? deps.checkins.lastWritten(checkInId) : undefined;
    if (written !== undefined && couldBeSettled(written)) return written;
    const held = await deps.checkins.get(checkInId);
    return held !== undefined && couldBeSettled(held) ? held : deps.checkins.getStored(checkInId);
  };

  const alreadyOut = (): ApiError =>
    apiError('CONFLICT', 'The child is already checked out.', { reason: 'ALREADY_CHECKED_OUT' });
  const supersededCheckin = (): ApiError =>
    apiError('CONFLICT', 'This check-in lost to a concurrent check-in of the same child.', {
      reason: 'CHECKIN_SUPERSEDED',
    });

  /**
   * This request's own event lost to a concurrent one (two instances racing, or a tablet's event that
   * arrived meanwhile): kept, but superseded, and the answer names the conflict as `/sync/events` does.
   */
  const superseded = (
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

  /** Closes an open check-in through an event; the record is re-read once the pipeline applied it. */
  const closeCheckin = async (
    actor: Actor,
    current: CheckinDoc,
    type: 'CHECK_OUT' | 'EMERGENCY_CHECKOUT',
    payload: Record<string, unknown>,
  ): Promise<E.Either<ApiError, CheckinDoc>> => {
    await backlogProjected();
    const eventId = requestScopedId(actor.requestKey, type);
    let decidedNow = false;
    const outcome = await locks.run(checkinAspect(current.sessionId, current.studentId), async () => {
      const { aspect, version, checkins, earlier } = await head(
        current.sessionId,
        current.studentId,
        eventId,
      );
      if (earlier !== undefined) return earlier;
      // Decided under the lock: a request just before this one may have closed it.
      const decision = decideCheckin(checkins, { type, checkInId: current.checkInId });
      if (decision.kind === 'REFUSED') return 'lost';
      decidedNow = true;
      return decide(actor, eventId, aspect, version, decision.type, current.studentId, payload);
    });
    if (outcome === 'pending') return E.left(notApplied());
    if (typeof outcome !== 'string') return E.left(superseded('CHECKOUT_SUPERSEDED', outcome));
    const after = await settledRecord(current.checkInId, (r) => r.status !== 'CHECKED_IN', decidedNow);
    if (outcome === 'lost' || after === undefined) {
      return E.left(after?.status === 'SUPERSEDED' ? supersededCheckin() : alreadyOut());
    }
    return E.right(after);
  };

  /**
   * Whether a check-in found closed was closed by an earlier attempt of this keyed request (its
   * answer was lost, or was a 503 while the pipeline caught up): the retry answers that success again.
   */
  const closedByThisRequest = async (
    actor: Actor,
    closed: CheckinDoc,
    type: 'CHECK_OUT' | 'EMERGENCY_CHECKOUT',
  ): Promise<boolean> => {
    if (actor.requestKey === undefined) return false;
    const eventId = requestScopedId(actor.requestKey, type);
    const { aspect, earlier } = await head(closed.sessionId, closed.studentId, eventId);
    if (earlier !== undefined || (await deps.events.get(eventId)) === undefined) return earlier === 'applied';
    // The pipeline closes the record before it commits the aspect (the write-through comes first): an
    // earlier attempt's event not in the aspect yet is waited for, not taken for somebody else's
    // check-out (the same keyed check-out sent to two instances answered 409 ALREADY_CHECKED_OUT twice).
    const projection = (await deps.pipeline.settle([{ eventId, aspect }], deps.settleTimeoutMs)).get(aspect);
    return projection !== undefined && decided(projection, eventId) === 'applied';
  };

  const service: CheckinService = {
    async config() {
      // The contract creates the secret on the first read of the configuration.
      await deps.checkins.secret(now().toISOString());
      const { updatedAt: _u, ...config } = await deps.checkins.config();
      return config;
    },

    async saveConfig(config) {
      // One save at a time in this process, so concurrent saves here never exhaust each other's
      // compare-and-swap retries; only other instances can still contend (then 409).
      const saved = await locks.run(CONFIG_LOCK, () => deps.checkins.saveConfig(config, now().toISOString()));
      return saved === 'SAVED'
        ? E.right(config)
        : E.left(apiError('CONFLICT', 'The configuration was being changed concurrently; send it again.'));
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
      // A check-in reads of its child only whether it is one, and a visitor, and deleted.
      let student: Pick<StudentDoc, 'studentId' | 'status' | 'visitor'> | undefined;
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
        student = deps.directory?.get(input.studentId) ?? (await deps.students.get(input.studentId));
      }
      if (student === undefined) return E.left(notFound('student'));
      if (student.status === 'DELETED')
        return E.left(apiError('CONFLICT', 'The student is deleted.', { reason: 'STUDENT_DELETED' }));
      const alreadyIn = () =>
        E.left(
          apiError('CONFLICT', 'The child is already checked in to this session.', {
            reason: 'ALREADY_CHECKED_IN',
          }),
        );
      const { sessionId } = session;
      const { studentId, visitor } = student;
      const checkInId = requestScopedId(actor.requestKey, 'check-in');
      const eventId = requestScopedId(actor.requestKey, 'CHECK_IN');
      // A random id has no record yet, and the cache may say so; a derived one may (an earlier attempt).
      // When the ledger held nothing for the key, the record is almost surely absent, and the cache is
      // told so (issue #23: the pipeline's read that found nothing). Should an attempt that failed have
      // stored it after all, nothing decides on the absence: the pipeline's write is a compare-and-swap
      // (a 409 reads the record), and the answer re-reads a record it finds absent (`settledRecord`).
      if (actor.requestKey === undefined || actor.freshKey === true) deps.checkins.minted(checkInId);
      await backlogProjected();
      let decidedNow = false;
      const outcome = await locks.run(checkinAspect(sessionId, studentId), async () => {
        const current = await head(sessionId, studentId, eventId);
        if (current.earlier !== undefined) return current.earlier;
        const decision = decideCheckin(current.checkins, { type: 'CHECK_IN', checkInId });
        if (decision.kind === 'REFUSED') return 'lost';
        decidedNow = true;
        return decide(actor, eventId, current.aspect, current.version, decision.type, studentId, {
          checkInId,
          sessionId,
          visitor,
        });
      });
      if (outcome === 'lost') return alreadyIn();
      if (typeof outcome !== 'string') return E.left(superseded('CHECKIN_SUPERSEDED', outcome));
      if (outcome === 'pending') return E.left(notApplied());
      const created = await settledRecord(checkInId, () => true, decidedNow);
      if (created === undefined) return E.left(notApplied());
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
            ? await openCheckIn(query.sessionId, query.studentId)
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
            await record(actor, 'CHECKOUT_ATTEMPT', updated, { failedAttempts: updated.failedAttempts });
            return E.left(
              apiError('CHECKOUT_CODE_MISMATCH', undefined, {
                remainingAttempts: decision.remainingAttempts,
              }),
            );
          }
          case 'CHECK_OUT':
            return closeCheckin(actor, current, 'CHECK_OUT', {
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
      const current = await deps.checkins.get(input.checkInId);
      if (current === undefined) return E.left(notFound('check-in'));
      if (current.status === 'CHECKED_OUT')
        return (await closedByThisRequest(actor, current, 'EMERGENCY_CHECKOUT'))
          ? E.right(current)
          : E.left(alreadyOut());
      if (current.status === 'SUPERSEDED') return E.left(supersededCheckin());
      return closeCheckin(actor, current, 'EMERGENCY_CHECKOUT', {
        checkInId: current.checkInId,
        sessionId: current.sessionId,
        pickupPerson: input.pickupPerson,
        justification: input.justification,
      });
    },

    secret: () => deps.checkins.secret(now().toISOString()),

    async remaining(checkin) {
      const { maxCheckoutAttempts } = await deps.checkins.config();
      return remainingAttempts(checkin.failedAttempts, maxCheckoutAttempts);
    },
  };
  return service;
};
