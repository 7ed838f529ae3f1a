/**
 * The admission rule at the desk: the server's own `decideAdmission` (imported from `src/rules`, so the
 * bundle carries the server's code, not a copy), fed with what the tablet knows. The roster gives the
 * room's rules, the volunteers in the room at the last pull, the required fields and each child's
 * record facts; the tablet's own events over the roster give the headcount and the child's check-ins.
 * The server judges the event again on arrival with what it knows then.
 */
import type { RosterStudent } from '../../domain/roster.js';
import {
  type AdmissionCommand,
  type AdmissionDecision,
  type AdmissionFacts,
  type AdmissionRecord,
  type AgeRange,
  decideAdmission,
  type PolicyRefusal,
  type RequiredField,
} from '../../rules/admission.js';
import { type Lang, translate } from './i18n.js';
import { type RosterIndex, type RosterSessionDoc, sessionOpen } from './rosterIndex.js';

export type { AdmissionCommand, AdmissionDecision, AdmissionFacts };
export { decideAdmission };

// A roster from a server older than the admission facts says nothing of the record: nothing is held
// against the child here, and the server judges the record when the event arrives.
const UNKNOWN_RECORD: AdmissionRecord = {
  birthMonth: null,
  guardianPhone: true,
  allergiesAnswered: true,
  specialNeedsAnswered: true,
  imageConsentAnswered: true,
};

/** What the desk knows when a child is to be checked in. */
export interface DeskSituation {
  readonly index: Pick<RosterIndex, 'rooms' | 'requiredFields' | 'deactivatedClasses'>;
  readonly session: Pick<RosterSessionDoc, 'classId' | 'date' | 'volunteers' | 'active'>;
  /** The child, or a first-time visitor about to be registered (no record yet). */
  readonly student: Pick<RosterStudent, 'visitor' | 'admission'> | 'NEW_VISITOR';
  /** Children in the room as this tablet counts them, and those going in before this one. */
  readonly checkedIn: number;
  readonly checkins: ReadonlyArray<{ readonly checkInId: string; readonly status: string }>;
  readonly actorRoles: ReadonlyArray<string>;
}

export const deskFacts = (d: DeskSituation): AdmissionFacts => {
  const room = d.index.rooms.get(d.session.classId);
  return {
    student:
      d.student === 'NEW_VISITOR'
        ? { deleted: false, visitor: true, record: UNKNOWN_RECORD }
        : { deleted: false, visitor: d.student.visitor, record: d.student.admission ?? UNKNOWN_RECORD },
    session: {
      date: d.session.date,
      active: d.session.active !== false,
      classActive: sessionOpen(d.index, { classId: d.session.classId }),
    },
    room: {
      capacity: room?.capacity ?? null,
      childrenPerVolunteer: room?.childrenPerVolunteer ?? null,
      ageRange: room?.ageRange ?? null,
    },
    occupancy: { checkedIn: d.checkedIn, volunteers: d.session.volunteers ?? 0 },
    checkins: d.checkins,
    requiredFields: d.index.requiredFields,
    actorRoles: d.actorRoles,
  };
};

/** A refusal as the desk reads it: its reason, and whether this actor may check the child in anyway. */
export type DeskRefusal = Extract<AdmissionDecision, { kind: 'REFUSE' }>;

const monthsText = (lang: Lang, months: number): string => {
  const years = Math.floor(months / 12);
  const rest = months % 12;
  const y = years === 1 ? translate(lang, 'age.year') : translate(lang, 'age.years', { n: years });
  const m = rest === 1 ? translate(lang, 'age.month') : translate(lang, 'age.months', { n: rest });
  if (years === 0) return m;
  return rest === 0 ? y : translate(lang, 'age.and', { a: y, b: m });
};

const monthText = (lang: Lang, yyyyMm: string): string =>
  new Date(`${yyyyMm}-15T12:00:00Z`).toLocaleDateString(lang, {
    month: 'long',
    year: 'numeric',
    timeZone: 'UTC',
  });

/** A class's age range in words: "de 3 anos a 5 anos e 11 meses", "nascidos até dezembro de 2020". */
export const ageRangeText = (lang: Lang, r: AgeRange): string => {
  const parts: string[] = [];
  const { minMonths: min, maxMonths: max, bornFrom: from, bornUntil: until } = r;
  if (min !== undefined && max !== undefined)
    parts.push(translate(lang, 'range.between', { a: monthsText(lang, min), b: monthsText(lang, max) }));
  else if (min !== undefined) parts.push(translate(lang, 'range.from', { a: monthsText(lang, min) }));
  else if (max !== undefined) parts.push(translate(lang, 'range.upTo', { b: monthsText(lang, max) }));
  if (from !== undefined && until !== undefined)
    parts.push(translate(lang, 'range.bornBetween', { a: monthText(lang, from), b: monthText(lang, until) }));
  else if (from !== undefined) parts.push(translate(lang, 'range.bornFrom', { a: monthText(lang, from) }));
  else if (until !== undefined) parts.push(translate(lang, 'range.bornUntil', { b: monthText(lang, until) }));
  return parts.join('; ');
};

const fieldsText = (lang: Lang, fields: ReadonlyArray<RequiredField>): string =>
  new Intl.ListFormat(lang, { style: 'long', type: 'conjunction' }).format(
    fields.map((f) => translate(lang, `field.${f}`)),
  );

/** A policy refusal in words, with its numbers: at the desk, and in the admins' view of the exceptions. */
export const policyText = (lang: Lang, r: PolicyRefusal, name: string): string => {
  switch (r.reason) {
    case 'ROOM_FULL':
      return translate(lang, 'admission.roomFull', { n: r.checkedIn, capacity: r.capacity });
    case 'RATIO_EXCEEDED':
      return translate(lang, 'admission.ratio', {
        n: r.checkedIn,
        volunteers: r.volunteers,
        ratio: r.childrenPerVolunteer,
      });
    case 'AGE_OUT_OF_RANGE':
      return translate(lang, 'admission.age', {
        name,
        age: monthsText(lang, r.ageMonths),
        range: ageRangeText(lang, r.ageRange),
      });
    case 'RECORD_INCOMPLETE':
      return translate(lang, 'admission.incomplete', { name, fields: fieldsText(lang, r.missing) });
  }
};

/** The reason of a refusal in the tablet's language, with its numbers. */
export const reasonText = (lang: Lang, refusal: DeskRefusal, name: string): string => {
  const r = refusal.refusal;
  switch (r.reason) {
    case 'ALREADY_CHECKED_IN':
      return translate(lang, 'checkin.already', { name });
    case 'CLASS_DEACTIVATED':
    case 'SESSION_DEACTIVATED':
      return translate(lang, 'admission.closed', { name });
    case 'SESSION_NOT_FOUND':
    case 'STUDENT_NOT_FOUND':
    case 'STUDENT_DELETED':
      return translate(lang, 'admission.unknown', { name });
    default:
      return policyText(lang, r, name);
  }
};

/** Whether the desk may offer this actor to check the child in all the same. */
export const mayOverrideRefusal = (refusal: DeskRefusal): boolean =>
  'overridable' in refusal && refusal.overridable;

/**
 * What the desk says of the refusals of one check-in (several for siblings): each reason, then, when
 * a policy refusal is one this actor may not pass, that an administrator may.
 */
export const refusalText = (
  lang: Lang,
  refusals: ReadonlyArray<{ readonly refusal: DeskRefusal; readonly name: string }>,
): string => {
  const adminMay = refusals.some(({ refusal }) => 'overridable' in refusal && !refusal.overridable);
  return [
    // Among several children, each reason says whose it is.
    ...refusals.map(({ refusal, name }) =>
      refusals.length > 1 ? `${name}: ${reasonText(lang, refusal, name)}` : reasonText(lang, refusal, name),
    ),
    ...(adminMay ? [translate(lang, 'admission.adminOnly')] : []),
  ].join(' ');
};
