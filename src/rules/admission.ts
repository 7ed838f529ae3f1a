/**
 * The admission rule, stated once: whether a child may be checked in to a session now.
 *
 * Given a check-in command and the facts known at that moment — the child (found, deleted, a
 * first-time visitor, what their record holds), the session, its room's rules (capacity, children
 * per volunteer, age range), who is in the room, the child's check-ins at the session, the fields
 * the church requires, and the actor — it answers the event to store or a refusal with its reason.
 * The server (REST and sync), and the tablet offline, call this one function with the facts each
 * holds, so a check-in is judged the same way wherever it is made.
 *
 * Refusals come in two kinds, in this order:
 * 1. **Facts** nobody may override: no such session, a deactivated class or session (decision 0047;
 *    the class first, the wider reason), no such child, a deleted child, a child already in this
 *    session. A deactivation closes the door to check-ins only: check-outs never ask this rule.
 * 2. **Policy** an ADMIN may override with a justification: `RECORD_INCOMPLETE` (a field the church
 *    requires is missing), `AGE_OUT_OF_RANGE` (the child's age at the meeting is outside the class's
 *    range), `ROOM_FULL` (the room holds its capacity), `RATIO_EXCEEDED` (one more child would need
 *    more volunteers than are in the room). The first one found is the refusal; an override waives
 *    them all and the admission lists what it waived, for the audit.
 *
 * A first-time visitor registered at the door has only the door's fields, so the record and age
 * rules do not apply to them (the office completes the record later); the room rules do.
 *
 * Ages are whole months between the birth month and the meeting's month: tablets hold the birth
 * month only (LGPD minimisation), and a class's range is a matter of months, not days.
 */

import { type CheckinStanding, decideCheckin } from './checkin.js';

/** The record fields a church may require before a child's check-in. */
export const REQUIRED_FIELDS = [
  'birthDate',
  'guardianPhone',
  'allergies',
  'specialNeeds',
  'imageConsent',
] as const;
export type RequiredField = (typeof REQUIRED_FIELDS)[number];

/**
 * What the rule needs of a child's record, and no more: on a tablet it comes from the roster, on the
 * server from the record. `allergies` and `specialNeeds` are answered once set (say "nenhuma" for
 * none); the image-consent question once the guardian was asked (a consent recorded, even if revoked).
 */
export interface AdmissionRecord {
  /** `YYYY-MM`, or null when the birth date is unknown. */
  readonly birthMonth: string | null;
  readonly guardianPhone: boolean;
  readonly allergiesAnswered: boolean;
  readonly specialNeedsAnswered: boolean;
  readonly imageConsentAnswered: boolean;
}

/** A class's age range; every bound is optional, and a range with none limits nothing. */
export interface AgeRange {
  readonly minMonths?: number | undefined;
  readonly maxMonths?: number | undefined;
  /** `YYYY-MM`, inclusive. */
  readonly bornFrom?: string | undefined;
  /** `YYYY-MM`, inclusive. */
  readonly bornUntil?: string | undefined;
}

export interface RoomRules {
  readonly capacity: number | null;
  readonly childrenPerVolunteer: number | null;
  readonly ageRange: AgeRange | null;
}

/** A class's rules as stored (each absent on classes from before it existed: no limit). */
export const roomRulesOf = (
  cls:
    | {
        readonly capacity?: number | null | undefined;
        readonly childrenPerVolunteer?: number | null | undefined;
        readonly ageRange?: AgeRange | null | undefined;
      }
    | undefined,
): RoomRules => ({
  capacity: cls?.capacity ?? null,
  childrenPerVolunteer: cls?.childrenPerVolunteer ?? null,
  ageRange: cls?.ageRange ?? null,
});

/** Whether any rule of the room's could refuse a check-in, so its facts are worth reading. */
export const roomHasRules = (room: RoomRules, requiredFields: ReadonlyArray<RequiredField>): boolean =>
  room.capacity !== null ||
  room.childrenPerVolunteer !== null ||
  hasAgeBounds(room.ageRange) ||
  requiredFields.length > 0;

export interface AdmissionFacts {
  readonly student:
    | { readonly deleted: boolean; readonly visitor: boolean; readonly record: AdmissionRecord }
    | undefined;
  /**
   * The meeting's local date, `YYYY-MM-DD`, and whether the session and its class are active (not
   * deactivated); undefined when there is no such session.
   */
  readonly session:
    | { readonly date: string; readonly active: boolean; readonly classActive: boolean }
    | undefined;
  readonly room: RoomRules;
  /** Children in the room now (this child not among them) and volunteers in it. */
  readonly occupancy: { readonly checkedIn: number; readonly volunteers: number };
  /** The child's check-ins at this session as they stand. */
  readonly checkins: ReadonlyArray<CheckinStanding>;
  readonly requiredFields: ReadonlyArray<RequiredField>;
  readonly actorRoles: ReadonlyArray<string>;
}

export interface AdmissionCommand {
  readonly checkInId: string;
  readonly override?: { readonly justification: string } | undefined;
}

export type PolicyRefusal =
  | { readonly reason: 'RECORD_INCOMPLETE'; readonly missing: ReadonlyArray<RequiredField> }
  | { readonly reason: 'AGE_OUT_OF_RANGE'; readonly ageMonths: number; readonly ageRange: AgeRange }
  | { readonly reason: 'ROOM_FULL'; readonly checkedIn: number; readonly capacity: number }
  | {
      readonly reason: 'RATIO_EXCEEDED';
      readonly checkedIn: number;
      readonly volunteers: number;
      readonly childrenPerVolunteer: number;
    };
export type PolicyReason = PolicyRefusal['reason'];
export const POLICY_REASONS: ReadonlyArray<PolicyReason> = [
  'RECORD_INCOMPLETE',
  'AGE_OUT_OF_RANGE',
  'ROOM_FULL',
  'RATIO_EXCEEDED',
];

export type FactRefusal = {
  readonly reason:
    | 'SESSION_NOT_FOUND'
    | 'CLASS_DEACTIVATED'
    | 'SESSION_DEACTIVATED'
    | 'STUDENT_NOT_FOUND'
    | 'STUDENT_DELETED'
    | 'ALREADY_CHECKED_IN';
};

export type AdmissionDecision =
  | {
      readonly kind: 'ADMIT';
      readonly event: { readonly type: 'CHECK_IN'; readonly checkInId: string };
      /** What an ADMIN's override waived; empty when nothing needed waiving. */
      readonly waived: ReadonlyArray<PolicyRefusal>;
      readonly justification: string | null;
    }
  | { readonly kind: 'REFUSE'; readonly refusal: FactRefusal }
  | {
      readonly kind: 'REFUSE';
      readonly refusal: PolicyRefusal;
      /** Whether this actor could pass it with an override (an ADMIN). */
      readonly overridable: boolean;
    };

const monthIndex = (yyyyMm: string): number =>
  Number(yyyyMm.slice(0, 4)) * 12 + Number(yyyyMm.slice(5, 7)) - 1;

/** Whole months from the birth month to the meeting's month. */
export const ageInMonths = (birthMonth: string, meetingDate: string): number =>
  monthIndex(meetingDate.slice(0, 7)) - monthIndex(birthMonth);

export const hasAgeBounds = (range: AgeRange | null): range is AgeRange =>
  range !== null &&
  (range.minMonths !== undefined ||
    range.maxMonths !== undefined ||
    range.bornFrom !== undefined ||
    range.bornUntil !== undefined);

export const ageFits = (range: AgeRange, birthMonth: string, meetingDate: string): boolean => {
  const age = ageInMonths(birthMonth, meetingDate);
  return (
    (range.minMonths === undefined || age >= range.minMonths) &&
    (range.maxMonths === undefined || age <= range.maxMonths) &&
    (range.bornFrom === undefined || birthMonth >= range.bornFrom) &&
    (range.bornUntil === undefined || birthMonth <= range.bornUntil)
  );
};

const answered: Readonly<Record<RequiredField, (r: AdmissionRecord) => boolean>> = {
  birthDate: (r) => r.birthMonth !== null,
  guardianPhone: (r) => r.guardianPhone,
  allergies: (r) => r.allergiesAnswered,
  specialNeeds: (r) => r.specialNeedsAnswered,
  imageConsent: (r) => r.imageConsentAnswered,
};

/** The required fields the record lacks, in the catalogue's order. */
export const missingFields = (
  record: AdmissionRecord,
  required: ReadonlyArray<RequiredField>,
): ReadonlyArray<RequiredField> =>
  REQUIRED_FIELDS.filter((f) => required.includes(f) && !answered[f](record));

/**
 * Every policy rule the check-in would break, in the order they are reported. A class with an age
 * range needs the birth date, so an unknown one is reported as missing rather than guessed.
 */
export const policyRefusals = (facts: AdmissionFacts): ReadonlyArray<PolicyRefusal> => {
  const out: PolicyRefusal[] = [];
  const { student, session, room, occupancy } = facts;
  if (student !== undefined && session !== undefined && !student.visitor) {
    const ranged = hasAgeBounds(room.ageRange);
    const required =
      ranged && !facts.requiredFields.includes('birthDate')
        ? [...facts.requiredFields, 'birthDate' as const]
        : facts.requiredFields;
    const missing = missingFields(student.record, required);
    if (missing.length > 0) out.push({ reason: 'RECORD_INCOMPLETE', missing });
    const birthMonth = student.record.birthMonth;
    if (
      ranged &&
      birthMonth !== null &&
      room.ageRange !== null &&
      !ageFits(room.ageRange, birthMonth, session.date)
    )
      out.push({
        reason: 'AGE_OUT_OF_RANGE',
        ageMonths: ageInMonths(birthMonth, session.date),
        ageRange: room.ageRange,
      });
  }
  if (room.capacity !== null && occupancy.checkedIn >= room.capacity)
    out.push({ reason: 'ROOM_FULL', checkedIn: occupancy.checkedIn, capacity: room.capacity });
  if (
    room.childrenPerVolunteer !== null &&
    occupancy.checkedIn + 1 > occupancy.volunteers * room.childrenPerVolunteer
  )
    out.push({
      reason: 'RATIO_EXCEEDED',
      checkedIn: occupancy.checkedIn,
      volunteers: occupancy.volunteers,
      childrenPerVolunteer: room.childrenPerVolunteer,
    });
  return out;
};

export const mayOverride = (actorRoles: ReadonlyArray<string>): boolean => actorRoles.includes('ADMIN');

/** The decision: see the module's header for the rule. */
export const decideAdmission = (command: AdmissionCommand, facts: AdmissionFacts): AdmissionDecision => {
  if (facts.session === undefined) return { kind: 'REFUSE', refusal: { reason: 'SESSION_NOT_FOUND' } };
  if (!facts.session.classActive) return { kind: 'REFUSE', refusal: { reason: 'CLASS_DEACTIVATED' } };
  if (!facts.session.active) return { kind: 'REFUSE', refusal: { reason: 'SESSION_DEACTIVATED' } };
  if (facts.student === undefined) return { kind: 'REFUSE', refusal: { reason: 'STUDENT_NOT_FOUND' } };
  if (facts.student.deleted) return { kind: 'REFUSE', refusal: { reason: 'STUDENT_DELETED' } };
  if (decideCheckin(facts.checkins, { type: 'CHECK_IN', checkInId: command.checkInId }).kind === 'REFUSED')
    return { kind: 'REFUSE', refusal: { reason: 'ALREADY_CHECKED_IN' } };
  const broken = policyRefusals(facts);
  const overridable = mayOverride(facts.actorRoles);
  const [first] = broken;
  const event = { type: 'CHECK_IN', checkInId: command.checkInId } as const;
  if (first === undefined) return { kind: 'ADMIT', event, waived: [], justification: null };
  if (command.override !== undefined && overridable)
    return { kind: 'ADMIT', event, waived: broken, justification: command.override.justification };
  return { kind: 'REFUSE', refusal: first, overridable };
};

/**
 * What the rule reads of a record. `phones` are the guardian's numbers on the record; `imageConsents`
 * how many image consents were ever recorded for the child.
 */
export const admissionRecordOf = (record: {
  readonly birthDate: string | null;
  readonly phones: ReadonlyArray<unknown>;
  readonly allergies: string | null;
  readonly specialNeeds: string | null;
  readonly imageConsents: number;
}): AdmissionRecord => ({
  birthMonth: record.birthDate === null ? null : record.birthDate.slice(0, 7),
  guardianPhone: record.phones.length > 0,
  allergiesAnswered: record.allergies !== null,
  specialNeedsAnswered: record.specialNeeds !== null,
  imageConsentAnswered: record.imageConsents > 0,
});
