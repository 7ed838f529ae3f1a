/**
 * Offline check-ins judged by the admission rule when they reach the server (issue #37). A tablet
 * decided with what it knew; another door may have filled the room meanwhile, or the office may have
 * changed the class. The check-in happened, so it is kept whatever the rule says now: what the rule
 * would have refused is written down as an exception the conflict report lists, never dropped.
 *
 * Each session's room is judged as the server knows it on arrival (the children its pipeline has in
 * the room, the volunteers checked in), with the batch's own check-ins and check-outs of that session
 * taken in the order the device made them, so ten children checked in offline into a room of eight
 * leave two exceptions. A session whose class has no rule, in a church that requires no field, costs
 * no read at all.
 */
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import type { ClassDoc, ClassSessionDoc } from '../domain/classes.js';
import type { NewEvent } from '../domain/event.js';
import { type AdmissionException, AdmissionRefusalC } from '../domain/projection.js';
import type { StudentDoc } from '../domain/student.js';
import { byKeys } from '../lib/order.js';
import {
  type AdmissionFacts,
  type AdmissionRecord,
  admissionRecordOf,
  decideAdmission,
  type PolicyRefusal,
  policyRefusals,
  type RequiredField,
  roomHasRules,
  roomRulesOf,
} from '../rules/admission.js';
import { standingStatus } from '../rules/checkin.js';
import type { AspectProjection } from '../rules/projections.js';

/** A check-in, check-out or emergency check-out of the batch, as the device sent it. */
export interface ArrivingEvent {
  readonly eventId: string;
  readonly type: string;
  readonly studentId: string;
  readonly sessionId: string;
  readonly clientTimestamp: string;
  readonly override?: { readonly justification: string } | undefined;
}

export type ArrivalVerdict =
  | { readonly kind: 'REFUSED'; readonly refusals: ReadonlyArray<PolicyRefusal> }
  | {
      readonly kind: 'OVERRIDDEN';
      readonly waived: ReadonlyArray<PolicyRefusal>;
      readonly justification: string;
    };

export interface ArrivalDeps {
  readonly getSession: (sessionId: string) => Promise<ClassSessionDoc | undefined>;
  readonly getClass: (classId: string) => Promise<ClassDoc | undefined>;
  /** The check-in aspects the pipeline holds for a session. */
  readonly sessionAspects: (sessionId: string) => Promise<ReadonlyArray<AspectProjection>>;
  readonly volunteersInRoom: (sessionId: string) => Promise<number>;
  /** How many image consents were ever recorded for a child. */
  readonly imageConsents: (studentId: string) => Promise<number>;
  readonly requiredFields: () => Promise<ReadonlyArray<RequiredField>>;
}

// A visitor is not held to the record's rules (`rules/admission.ts`): what stands here is never read.
const NO_RECORD: AdmissionRecord = {
  birthMonth: null,
  guardianPhone: false,
  allergiesAnswered: false,
  specialNeedsAnswered: false,
  imageConsentAnswered: false,
};

const recordOf = async (
  deps: ArrivalDeps,
  record: StudentDoc,
  required: ReadonlyArray<RequiredField>,
): Promise<AdmissionRecord> =>
  admissionRecordOf({
    ...record,
    imageConsents: required.includes('imageConsent') ? await deps.imageConsents(record.studentId) : 0,
  });

/** The order the device made its events in. */
const inOrder = byKeys<ArrivingEvent>(
  (e) => e.clientTimestamp,
  (e) => e.eventId,
);

/**
 * The verdict of each check-in of the batch the rule would have refused, or an ADMIN overrode; a
 * check-in it admits has none. `students` are the records the batch names (a child missing from it
 * was registered offline as a visitor).
 */
export const judgeOnArrival = async (
  deps: ArrivalDeps,
  input: {
    readonly events: ReadonlyArray<ArrivingEvent>;
    readonly students: ReadonlyMap<string, StudentDoc>;
    readonly actorRoles: ReadonlyArray<string>;
  },
): Promise<Map<string, ArrivalVerdict>> => {
  const verdicts = new Map<string, ArrivalVerdict>();
  const bySession = new Map<string, ArrivingEvent[]>();
  for (const e of input.events) bySession.set(e.sessionId, [...(bySession.get(e.sessionId) ?? []), e]);
  let required: ReadonlyArray<RequiredField> | undefined;
  for (const [sessionId, events] of bySession) {
    if (!events.some((e) => e.type === 'CHECK_IN')) continue;
    const session = await deps.getSession(sessionId);
    if (session === undefined) continue;
    required ??= await deps.requiredFields();
    const room = roomRulesOf(await deps.getClass(session.classId));
    if (!roomHasRules(room, required)) continue;
    const inRoom = new Set<string>();
    for (const aspect of await deps.sessionAspects(sessionId))
      if (aspect.state?.kind === 'checkin' && standingStatus(aspect.state.checkins) === 'CHECKED_IN')
        inRoom.add(aspect.subjectId);
    const volunteers = room.childrenPerVolunteer === null ? 0 : await deps.volunteersInRoom(sessionId);
    for (const event of [...events].sort(inOrder)) {
      if (event.type !== 'CHECK_IN') {
        inRoom.delete(event.studentId);
        continue;
      }
      // A second check-in of a child in the room changes nothing (the fold makes it ineffective).
      if (inRoom.has(event.studentId)) continue;
      const record = input.students.get(event.studentId);
      const facts: AdmissionFacts = {
        student: {
          deleted: false,
          // A child the server has no record of yet was registered offline in this or an earlier batch.
          visitor: record === undefined || record.visitor,
          record: record === undefined || record.visitor ? NO_RECORD : await recordOf(deps, record, required),
        },
        // The check-in happened, so only the policy is judged here: a session or class deactivated
        // since the tablet last pulled does not turn an ADMIN's override into an exception (0047).
        session: { date: session.date, active: true, classActive: true },
        room,
        occupancy: { checkedIn: inRoom.size, volunteers },
        checkins: [],
        requiredFields: required,
        actorRoles: input.actorRoles,
      };
      inRoom.add(event.studentId);
      const decision = decideAdmission({ checkInId: event.eventId, override: event.override }, facts);
      const refusals = policyRefusals(facts);
      if (decision.kind === 'REFUSE' && refusals.length > 0)
        verdicts.set(event.eventId, { kind: 'REFUSED', refusals });
      else if (decision.kind === 'ADMIT' && decision.justification !== null && decision.waived.length > 0)
        verdicts.set(event.eventId, {
          kind: 'OVERRIDDEN',
          waived: decision.waived,
          justification: decision.justification,
        });
    }
  }
  return verdicts;
};

/**
 * The event's payload with the verdict it arrived with: why the rule would have refused it, or what
 * an ADMIN's override waived. Kept in the event itself, so the stored event says it for good.
 */
export const stampAdmission = (
  payload: Record<string, unknown>,
  verdict: ArrivalVerdict | undefined,
): Record<string, unknown> => {
  if (verdict === undefined) return payload;
  if (verdict.kind === 'REFUSED') return { ...payload, admission: { refusals: verdict.refusals } };
  return {
    ...payload,
    override: { justification: verdict.justification, waived: verdict.waived.map((w) => w.reason) },
  };
};

const Stamped = t.type({ admission: t.type({ refusals: t.array(AdmissionRefusalC) }) });

/** The exception a stored check-in's stamp records, for the conflict report; none without one. */
export const admissionExceptionOf = (event: NewEvent): AdmissionException | undefined => {
  // Most check-ins carry no stamp: the decode (and its failure) is skipped for them.
  if (event.type !== 'CHECK_IN' || event.aspect === undefined || !('admission' in event.payload))
    return undefined;
  const stamped = Stamped.decode(event.payload);
  if (E.isLeft(stamped)) return undefined;
  const { refusals } = stamped.right.admission;
  const [first] = refusals;
  const checkInId = event.payload.checkInId;
  if (first === undefined) return undefined;
  return {
    aspect: event.aspect,
    kind: 'checkin',
    subjectId: event.subjectId,
    policy: 'ADMISSION_RULE',
    reason: first.reason,
    refusals,
    event: {
      eventId: event.eventId,
      userId: event.actor.userId,
      role: event.actor.role,
      deviceId: event.deviceId,
      clientTimestamp: event.clientTimestamp,
      serverTimestamp: event.serverTimestamp,
      change: { type: 'CHECK_IN', ...(typeof checkInId === 'string' ? { checkInId } : {}) },
    },
    detectedAt: event.serverTimestamp,
  };
};
