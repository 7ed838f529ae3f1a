/** Check-in configuration, check-in records and the check-in / check-out endpoints' shapes. */
import * as t from 'io-ts';
import {
  boundedInt,
  boundedString,
  IsoInstant,
  nullable,
  object,
  refine,
  ShortText,
  Text,
  Uuid,
} from './codec.js';
import { PhoneNumber } from './student.js';

/** The daily code's alphabet has no look-alikes (no 0/O, 1/I/L); `rules/checkin.ts` draws from it. */
export const CODE_ALPHABET = '23456789ABCDEFGHJKMNPQRSTUVWXYZ';
export const CODE_LENGTH = 6;

const CODE_RE = new RegExp(`^[${CODE_ALPHABET}]{${CODE_LENGTH}}$`, 'i');

/**
 * A typed daily code: exactly 6 characters of the alphabet, either case. Anything else cannot be a
 * code, so it is a validation failure and never counts as a wrong attempt towards the lock: a typo
 * of length (or a 0 for an O) must not cost a family one of its tries.
 */
export const DailyCode = refine(
  t.string,
  (s) => CODE_RE.test(s),
  `${CODE_LENGTH} characters of ${CODE_ALPHABET} (either case)`,
  {
    pattern: `^[${CODE_ALPHABET}${CODE_ALPHABET.replace(/[0-9]/g, '').toLowerCase()}]{${CODE_LENGTH}}$`,
    minLength: CODE_LENGTH,
    maxLength: CODE_LENGTH,
    examples: ['K7M2QX'],
  },
);

/**
 * CODE_ONLY: the label's code opens the gate. CODE_AND_ADULT: the code and an adult on the child's
 * pickup list (a guardian named on the record; later also verified adults and temporary grants), with
 * the phone suffix checked when the entry has a phone.
 */
export const PickupMode = t.keyof({ CODE_ONLY: null, CODE_AND_ADULT: null });
export type PickupMode = t.TypeOf<typeof PickupMode>;

const Attempts = refine(
  t.number,
  (n) => Number.isInteger(n) && n >= 1 && n <= 20,
  'an integer from 1 to 20',
  { integer: true, minimum: 1, maximum: 20 },
);

/** The record fields a church may require before a check-in (`rules/admission.ts`). */
export const RequiredFieldC = t.keyof({
  birthDate: null,
  guardianPhone: null,
  allergies: null,
  specialNeeds: null,
  imageConsent: null,
});
const RequiredFields = refine(
  t.array(RequiredFieldC),
  (a) => new Set(a).size === a.length,
  'each field at most once',
  {
    maxItems: 5,
    description:
      'Record fields a child must have before a check-in (409 `RECORD_INCOMPLETE`, `details.missing` names them; an ' +
      'ADMIN may override): `birthDate`, `guardianPhone`, `allergies` and `specialNeeds` (answered: set, "nenhuma" ' +
      'for none), `imageConsent` (the guardian was asked: a consent recorded). First-time visitors registered at ' +
      'the door are not held to them. Omitted in a PUT: none.',
  },
);

const configFields = {
  pickupMode: PickupMode,
  maxCheckoutAttempts: Attempts,
  emergencyCheckoutAdminOnly: t.boolean,
};
const configDescription =
  'Defaults: CODE_ONLY, 5 attempts, emergency check-out allowed to CHAMADOR, no required fields. The check-in secret ' +
  'never appears.';

export const CheckinConfig = object(
  'CheckInConfig',
  { ...configFields, requiredFields: RequiredFields },
  {},
  { description: configDescription },
);
export type CheckinConfig = t.TypeOf<typeof CheckinConfig>;

/** The body of a PUT: `requiredFields` may be left out by clients older than it (none). */
export const CheckinConfigBody = object(
  'CheckInConfigBody',
  configFields,
  { requiredFields: RequiredFields },
  { description: configDescription },
);
export type CheckinConfigBody = t.TypeOf<typeof CheckinConfigBody>;

export const DEFAULT_CHECKIN_CONFIG: CheckinConfig = {
  pickupMode: 'CODE_ONLY',
  maxCheckoutAttempts: 5,
  emergencyCheckoutAdminOnly: false,
  requiredFields: [],
};

export const CheckinConfigDoc = t.intersection([
  t.type({
    _id: t.string,
    _rev: t.string,
    docType: t.literal('checkinConfig'),
    pickupMode: PickupMode,
    maxCheckoutAttempts: t.number,
    emergencyCheckoutAdminOnly: t.boolean,
    updatedAt: t.string,
  }),
  // Stored before required fields existed: none.
  t.partial({ requiredFields: t.array(RequiredFieldC) }),
]);

export const CheckinSecretDoc = t.type({
  _id: t.string,
  _rev: t.string,
  docType: t.literal('checkinSecret'),
  secret: t.string,
  createdAt: t.string,
});

/**
 * SUPERSEDED: a check-in that lost a conflict to a concurrent check-in of the same child at the same
 * session (decision 0017); it is kept, and cannot be checked out.
 */
export const CheckinStatus = t.keyof({ CHECKED_IN: null, CHECKED_OUT: null, SUPERSEDED: null });
export type CheckinStatus = t.TypeOf<typeof CheckinStatus>;

export const CheckinDoc = t.type({
  _id: t.string,
  _rev: t.string,
  docType: t.literal('checkin'),
  checkInId: t.string,
  studentId: t.string,
  sessionId: t.string,
  code: t.string,
  checkedInAt: t.string,
  checkedInBy: t.string,
  status: CheckinStatus,
  failedAttempts: t.number,
  checkedOutAt: t.union([t.string, t.null]),
  checkedOutBy: t.union([t.string, t.null]),
  pickupPerson: t.union([t.string, t.null]),
  emergency: t.boolean,
  justification: t.union([t.string, t.null]),
});
export type CheckinDoc = t.TypeOf<typeof CheckinDoc>;

export const VisitorBody = object('Visitor', {
  displayName: boundedString(1, 120, { classification: 'personal' }),
  guardianName: boundedString(1, 120, { classification: 'personal' }),
  phone: PhoneNumber,
});

/** An ADMIN's decision to check a child in past the admission rule's policy refusals. */
export const AdmissionOverride = object(
  'AdmissionOverride',
  { justification: boundedString(10, 500, { classification: 'personal' }) },
  {},
  {
    description:
      'ADMIN only (403 otherwise): checks the child in despite `ROOM_FULL`, `RATIO_EXCEEDED`, `AGE_OUT_OF_RANGE` or ' +
      '`RECORD_INCOMPLETE`; the audit entry names what was waived. It never passes a deleted child or a second ' +
      'check-in.',
  },
);

export const CheckinBody = object(
  'CheckInBody',
  { sessionId: Uuid },
  { studentId: Uuid, visitor: VisitorBody, override: AdmissionOverride },
  {
    description:
      'Exactly one of `studentId` (a registered child) or `visitor` (a walk-in, registered on the spot as a visitor).',
  },
);

export const Checkin = object(
  'CheckIn',
  {
    checkInId: Uuid,
    studentId: Uuid,
    sessionId: Uuid,
    code: ShortText,
    checkedInAt: IsoInstant,
    remainingAttempts: t.number,
    status: CheckinStatus,
  },
  { checkedOutAt: nullable(IsoInstant), pickupPerson: nullable(Text), emergency: t.boolean },
  { description: "`code` is the child's 6-character daily code, for the label." },
);

export const CheckoutBody = object(
  'CheckOutBody',
  {
    checkInId: Uuid,
    code: DailyCode,
    pickupPerson: boundedString(1, 120, { classification: 'personal' }),
  },
  { pickupPhoneSuffix: boundedString(4, 12) },
);

export const EmergencyCheckoutBody = object('EmergencyCheckOutBody', {
  checkInId: Uuid,
  justification: boundedString(10, 500),
  pickupPerson: boundedString(1, 120, { classification: 'personal' }),
});

export const ActiveCheckinQuery = object(
  'ActiveCheckInQuery',
  {},
  { checkInId: Uuid, studentId: Uuid, sessionId: Uuid },
  {
    description: 'Either `checkInId`, or `studentId` and `sessionId`.',
  },
);

export const PickupAdult = object('PickupAdult', {
  name: Text,
  level: t.keyof({ N1: null, N2: null, N3: null }),
  relationship: Text,
  phoneSuffix: nullable(ShortText),
});

export const ActiveCheckin = object('ActiveCheckIn', {
  checkIn: Checkin,
  child: object('ActiveCheckInChild', {
    studentId: Uuid,
    displayName: Text,
    photoRef: nullable(ShortText),
    allergies: nullable(Text),
    specialNeeds: nullable(Text),
    visitor: t.boolean,
  }),
  mayCollect: t.array(PickupAdult),
});

// Bounded for the OWASP lint (decision 0029): a session never holds a million children.
const Count = boundedInt(0, 1_000_000);

export const HeadcountC = object(
  'Headcount',
  {
    sessionId: Uuid,
    checkedIn: Count,
    checkedOut: Count,
    capacity: nullable(Count),
    volunteers: Count,
  },
  { childrenPerVolunteer: nullable(Count), volunteersNeeded: nullable(Count) },
  {
    description:
      "A session's room: children checked in now, children checked in and gone, and the class's capacity (null: no " +
      'limit), the volunteers in the room (`POST /sessions/{sessionId}/volunteers`). With a ratio of children per ' +
      'volunteer, the volunteers it asks for. A child counts once, by their ' +
      'latest check-in; events still on their way from tablets count once they arrive.',
  },
);
export const HeadcountParams = object('HeadcountParams', { sessionId: Uuid });
