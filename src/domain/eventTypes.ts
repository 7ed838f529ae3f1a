/**
 * The events that take part in conflict resolution, as devices send them (`POST /api/v1/sync/events`)
 * and as the pipeline reads them back from the events database. Each kind names the aspect it changes:
 * - `MARK_PRESENT` / `MARK_ABSENT`: `attendance:<studentId>:<sessionId or UTC day>`;
 * - `CHECK_IN`, `CHECK_OUT`, `EMERGENCY_CHECKOUT`: `checkin:<sessionId>:<studentId>` (a child's
 *   presence at one session: check-in, check-out and a later re-entry form one chain of versions);
 * - `STUDENT_FIELD_SET`: `student:<studentId>:<field>`;
 * - `VISITOR_REGISTERED`: `visitor:<studentId>` (a first-time child registered at the door, with the
 *   id the device generated, so the registration and the check-in that follows it can both be made
 *   offline and a resend registers nobody twice).
 */
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import { boundedString, IsoInstant, isUuidV4, nullable, object, refine, Uuid } from './codec.js';
import { PhoneNumber, studentWritable } from './student.js';

/** The student fields a device may change through sync (no photos: they need a consent check). */
const SyncStudentField = t.keyof({
  displayName: null,
  guardianName: null,
  guardianNameAlt: null,
  allergies: null,
  specialNeeds: null,
  familyMembershipStatus: null,
});

const EventId = refine(t.string, isUuidV4, 'a UUID v4', {
  format: 'uuid',
  maxLength: 36,
  description: 'Generated on the device, so a resend is stored once.',
});
const BaseVersion = nullable(Uuid);

const common = {
  eventId: EventId,
  clientTimestamp: IsoInstant,
  studentId: Uuid,
};
const commonOptional = {
  baseVersion: BaseVersion,
};
const baseNote =
  '`baseVersion`: the eventId of the last change of this aspect the device had seen (null or absent: none).';

export const SyncMark = object(
  'SyncAttendanceMark',
  { ...common, type: t.keyof({ MARK_PRESENT: null, MARK_ABSENT: null }) },
  { ...commonOptional, sessionId: Uuid },
  { description: `A child marked present or absent for a session (or for the UTC day). ${baseNote}` },
);

const PickupPerson = boundedString(1, 120, { classification: 'personal' });
const Justification = boundedString(10, 500, { classification: 'personal' });

export const SyncCheckIn = object(
  'SyncCheckIn',
  { ...common, type: t.literal('CHECK_IN'), sessionId: Uuid, checkInId: Uuid },
  {
    ...commonOptional,
    override: object(
      'SyncAdmissionOverride',
      { justification: Justification },
      {},
      {
        description:
          "An ADMIN's override of the admission rule, made on the device: honoured for an ADMIN's batch, ignored " +
          'for any other role.',
      },
    ),
  },
  {
    description:
      `A check-in made on the device; \`checkInId\` is generated there. ${baseNote} It is judged on arrival by the ` +
      'admission rule with what the server knows then; one the rule would have refused is kept (it happened) and ' +
      'listed in `GET /api/v1/reports/conflicts` with its reason.',
  },
);

export const SyncCheckOut = object(
  'SyncCheckOut',
  { ...common, type: t.literal('CHECK_OUT'), sessionId: Uuid, checkInId: Uuid, pickupPerson: PickupPerson },
  commonOptional,
  { description: `A check-out whose code the device verified. ${baseNote}` },
);

export const SyncEmergencyCheckout = object(
  'SyncEmergencyCheckout',
  {
    ...common,
    type: t.literal('EMERGENCY_CHECKOUT'),
    sessionId: Uuid,
    checkInId: Uuid,
    pickupPerson: PickupPerson,
    justification: Justification,
  },
  commonOptional,
  { description: `An emergency check-out with its justification. ${baseNote}` },
);

export const SyncStudentFieldSet = object(
  'SyncStudentFieldSet',
  {
    ...common,
    type: t.literal('STUDENT_FIELD_SET'),
    field: SyncStudentField,
    value: t.unknown,
  },
  commonOptional,
  {
    description: `One student field set to a value (validated as in PATCH /students/{studentId}). ${baseNote}`,
  },
);

/**
 * The fields of a first-time visitor, the same codecs as a student's record: the kiosk's "new child"
 * form validates with them before it records anything, and the server validates the event with them.
 */
export const visitorFields = {
  displayName: studentWritable.displayName,
  guardianName: studentWritable.guardianName,
  phone: PhoneNumber,
  classId: Uuid,
};
export const visitorOptionalFields = {
  allergies: studentWritable.allergies,
  specialNeeds: studentWritable.specialNeeds,
};

export const SyncVisitorRegistered = object(
  'SyncVisitorRegistered',
  { ...common, type: t.literal('VISITOR_REGISTERED'), ...visitorFields },
  visitorOptionalFields,
  {
    description:
      'A first-time child registered at the door, online or offline. `studentId` is generated on the device; the ' +
      'server creates the student flagged `visitor` with that id, once (a resend registers nobody twice). The ' +
      "device's CHECK_IN for the child may follow in the same batch or a later one. The phone is kept on the " +
      'record only; tablets receive its last four digits, as for any guardian.',
  },
);

export const SyncEvent = t.union([
  SyncMark,
  SyncCheckIn,
  SyncCheckOut,
  SyncEmergencyCheckout,
  SyncStudentFieldSet,
  SyncVisitorRegistered,
]);
export type SyncEvent = t.TypeOf<typeof SyncEvent>;

const byType: Readonly<Record<SyncEvent['type'], t.Mixed>> = {
  MARK_PRESENT: SyncMark,
  MARK_ABSENT: SyncMark,
  CHECK_IN: SyncCheckIn,
  CHECK_OUT: SyncCheckOut,
  EMERGENCY_CHECKOUT: SyncEmergencyCheckout,
  STUDENT_FIELD_SET: SyncStudentFieldSet,
  VISITOR_REGISTERED: SyncVisitorRegistered,
};

export type SyncDecodeFailure =
  | { readonly reason: 'UNKNOWN_TYPE' }
  | { readonly reason: 'VALIDATION_FAILED'; readonly errors: t.Errors };

const isSyncType = (s: unknown): s is SyncEvent['type'] => typeof s === 'string' && Object.hasOwn(byType, s);

/**
 * Decodes one event of a batch on its own, dispatching on `type` first so that the error names the
 * fields of the kind the device meant rather than every member of the union.
 */
export const decodeSyncEvent = (u: unknown): E.Either<SyncDecodeFailure, SyncEvent> => {
  const type = typeof u === 'object' && u !== null && 'type' in u ? u.type : undefined;
  if (!isSyncType(type)) return E.left({ reason: 'UNKNOWN_TYPE' });
  const specific = byType[type].validate(u, [{ key: '', type: byType[type], actual: u }]);
  if (E.isLeft(specific)) return E.left({ reason: 'VALIDATION_FAILED', errors: specific.left });
  const event = SyncEvent.decode(u);
  if (E.isLeft(event)) return E.left({ reason: 'VALIDATION_FAILED', errors: event.left });
  if (event.right.type === 'STUDENT_FIELD_SET') {
    // Decoded under the key `value`, so the error's path names the field that is wrong.
    const value = t.type({ value: studentWritable[event.right.field] }).decode({ value: event.right.value });
    if (E.isLeft(value)) return E.left({ reason: 'VALIDATION_FAILED', errors: value.left });
  }
  return E.right(event.right);
};

/** The aspect an event changes: see the module comment. */
export const aspectOfSync = (e: SyncEvent): string => {
  switch (e.type) {
    case 'MARK_PRESENT':
    case 'MARK_ABSENT':
      return attendanceAspect(e.studentId, e.sessionId, e.clientTimestamp);
    case 'CHECK_IN':
    case 'CHECK_OUT':
    case 'EMERGENCY_CHECKOUT':
      return checkinAspect(e.sessionId, e.studentId);
    case 'STUDENT_FIELD_SET':
      return studentFieldAspect(e.studentId, e.field);
    case 'VISITOR_REGISTERED':
      return visitorAspect(e.studentId);
  }
};

export const attendanceAspect = (
  studentId: string,
  sessionId: string | undefined | null,
  timestamp: string,
): string => `attendance:${studentId}:${sessionId ?? timestamp.slice(0, 10)}`;
export const checkinAspect = (sessionId: string, studentId: string): string =>
  `checkin:${sessionId}:${studentId}`;
export const studentFieldAspect = (studentId: string, field: string): string =>
  `student:${studentId}:${field}`;
export const visitorAspect = (studentId: string): string => `visitor:${studentId}`;

/**
 * An aspect event as the pipeline reads it back from the events database: the envelope plus a payload
 * decoded for its kind. Stored payloads are read leniently (extra keys ignored) so that older and
 * newer writers' events stay readable.
 */
const MarkPayload = t.intersection([
  t.type({ actionType: t.keyof({ MARK_PRESENT: null, MARK_ABSENT: null }) }),
  t.partial({ sessionId: t.string }),
]);
const CheckInPayload = t.intersection([
  t.type({ checkInId: t.string, sessionId: t.string }),
  t.partial({ visitor: t.boolean }),
]);
const CheckOutPayload = t.intersection([
  t.type({ checkInId: t.string, sessionId: t.string }),
  t.partial({ pickupPerson: t.string }),
]);
const EmergencyPayload = t.intersection([
  t.type({ checkInId: t.string, sessionId: t.string, justification: t.string }),
  t.partial({ pickupPerson: t.string }),
]);
const FieldPayload = t.type({ field: t.string, value: t.unknown });
const VisitorPayload = t.intersection([
  t.type({ displayName: t.string, guardianName: t.string, phone: t.string, classId: t.string }),
  t.partial({ allergies: t.union([t.string, t.null]), specialNeeds: t.union([t.string, t.null]) }),
]);

export type AspectChange =
  | { readonly type: 'MARK_PRESENT' | 'MARK_ABSENT'; readonly sessionId: string | null }
  | {
      readonly type: 'CHECK_IN';
      readonly checkInId: string;
      readonly sessionId: string;
      readonly visitor: boolean;
    }
  | {
      readonly type: 'CHECK_OUT';
      readonly checkInId: string;
      readonly sessionId: string;
      readonly pickupPerson: string | null;
    }
  | {
      readonly type: 'EMERGENCY_CHECKOUT';
      readonly checkInId: string;
      readonly sessionId: string;
      readonly pickupPerson: string | null;
      readonly justification: string;
    }
  | { readonly type: 'STUDENT_FIELD_SET'; readonly field: string; readonly value: unknown }
  | ({ readonly type: 'VISITOR_REGISTERED' } & VisitorRegistration);

/** What a visitor's registration carries, as stored and as the pipeline folds it. */
export interface VisitorRegistration {
  readonly displayName: string;
  readonly guardianName: string;
  readonly phone: string;
  readonly classId: string;
  readonly allergies: string | null;
  readonly specialNeeds: string | null;
}

/** The payload of a stored aspect event, typed by its kind; `undefined` when it does not fit. */
export const decodeChange = (type: string, payload: unknown): AspectChange | undefined => {
  switch (type) {
    case 'MARK_PRESENT':
    case 'MARK_ABSENT': {
      const p = MarkPayload.decode(payload);
      return E.isRight(p) && p.right.actionType === type
        ? { type, sessionId: p.right.sessionId ?? null }
        : undefined;
    }
    case 'CHECK_IN': {
      const p = CheckInPayload.decode(payload);
      return E.isRight(p)
        ? {
            type,
            checkInId: p.right.checkInId,
            sessionId: p.right.sessionId,
            visitor: p.right.visitor ?? false,
          }
        : undefined;
    }
    case 'CHECK_OUT': {
      const p = CheckOutPayload.decode(payload);
      if (E.isLeft(p)) return undefined;
      const { checkInId, sessionId, pickupPerson } = p.right;
      return { type, checkInId, sessionId, pickupPerson: pickupPerson ?? null };
    }
    case 'EMERGENCY_CHECKOUT': {
      const p = EmergencyPayload.decode(payload);
      if (E.isLeft(p)) return undefined;
      const { checkInId, sessionId, pickupPerson, justification } = p.right;
      return { type, checkInId, sessionId, pickupPerson: pickupPerson ?? null, justification };
    }
    case 'STUDENT_FIELD_SET': {
      const p = FieldPayload.decode(payload);
      return E.isRight(p) ? { type, field: p.right.field, value: p.right.value } : undefined;
    }
    case 'VISITOR_REGISTERED': {
      const p = VisitorPayload.decode(payload);
      if (E.isLeft(p)) return undefined;
      const { displayName, guardianName, phone, classId, allergies, specialNeeds } = p.right;
      return {
        type,
        displayName,
        guardianName,
        phone,
        classId,
        allergies: allergies ?? null,
        specialNeeds: specialNeeds ?? null,
      };
    }
    default:
      return undefined;
  }
};

/** The stored payload of a synced event (the envelope keeps ids, actor and times). */
/**
 * The stored payload of a synced event. A CHECK_IN keeps an ADMIN's override (its justification) when
 * `overrides` says the sender may make one, and drops it otherwise, as the contract says.
 */
export const payloadOfSync = (e: SyncEvent, overrides = false): Record<string, unknown> => {
  switch (e.type) {
    case 'MARK_PRESENT':
    case 'MARK_ABSENT':
      return { actionType: e.type, ...(e.sessionId === undefined ? {} : { sessionId: e.sessionId }) };
    case 'CHECK_IN':
      return {
        checkInId: e.checkInId,
        sessionId: e.sessionId,
        visitor: false,
        ...(overrides && e.override !== undefined
          ? { override: { justification: e.override.justification } }
          : {}),
      };
    case 'CHECK_OUT':
      return { checkInId: e.checkInId, sessionId: e.sessionId, pickupPerson: e.pickupPerson };
    case 'EMERGENCY_CHECKOUT':
      return {
        checkInId: e.checkInId,
        sessionId: e.sessionId,
        pickupPerson: e.pickupPerson,
        justification: e.justification,
      };
    case 'STUDENT_FIELD_SET':
      return { field: e.field, value: e.value };
    case 'VISITOR_REGISTERED':
      return {
        displayName: e.displayName,
        guardianName: e.guardianName,
        phone: e.phone,
        classId: e.classId,
        allergies: e.allergies ?? null,
        specialNeeds: e.specialNeeds ?? null,
      };
  }
};
