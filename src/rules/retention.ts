/**
 * Retention (decision 0045), pure: what a run ends, given the periods, "now" and each record's date,
 * and what an anonymised record keeps.
 *
 * The rule, once: a record ends when it is strictly older than its period, never at the boundary, so
 * nothing is ended a moment before its period is over:
 * - a soft-deleted student is anonymised once deleted for longer than `deletedStudentDays` (and
 *   only once); a deleted student's stored photo is erased whatever the period;
 * - a check-in or attendance aspect ends once its whole day (UTC) is older than `attendanceDays`;
 * - a page ends once sent longer than `pageDays` ago;
 * - an audit entry loses its subject once older than `auditDays` (and only once).
 * The job and the preview both ask these functions, so the preview shows exactly what a run would end.
 */
import { ANONYMISED, type RetentionPeriods } from '../domain/retention.js';
import type { StudentRecord } from '../domain/student.js';

const DAY_MS = 86_400_000;

export interface Cutoffs {
  /** Students deleted before this instant are anonymised. */
  readonly deletedBefore: string;
  /** Aspects of a UTC day before this one (YYYY-MM-DD) end. */
  readonly attendanceBeforeDay: string;
  readonly pagesSentBefore: string;
  readonly auditBefore: string;
}

const before = (now: Date, days: number): Date => new Date(now.getTime() - days * DAY_MS);

export const cutoffsOf = (periods: RetentionPeriods, now: Date): Cutoffs => ({
  deletedBefore: before(now, periods.deletedStudentDays).toISOString(),
  // The day that holds the instant `attendanceDays` ago is kept until all of it is that old.
  attendanceBeforeDay: before(now, periods.attendanceDays).toISOString().slice(0, 10),
  pagesSentBefore: before(now, periods.pageDays).toISOString(),
  auditBefore: before(now, periods.auditDays).toISOString(),
});

/** Instants from devices may differ in precision from the server's: compared as times, not text. */
const earlier = (instant: string, cutoff: string): boolean => {
  const t = Date.parse(instant);
  return !Number.isNaN(t) && t < Date.parse(cutoff);
};

/** What the rule reads of a student. */
export interface StudentFacts {
  readonly status: 'ACTIVE' | 'DELETED';
  /** When it was soft-deleted; records deleted before this was kept carry their `updatedAt`. */
  readonly deletedAt: string | null;
  readonly anonymisedAt: string | null;
}

/** The time a deleted student was deleted: its own field, else the last change (a deleted record changes no more). */
export const deletionTimeOf = (s: {
  readonly status: 'ACTIVE' | 'DELETED';
  readonly deletedAt?: string | null | undefined;
  readonly updatedAt: string;
}): string | null => (s.status === 'DELETED' ? (s.deletedAt ?? s.updatedAt) : null);

export const studentAnonymisedNow = (s: StudentFacts, cutoffs: Cutoffs): boolean =>
  s.status === 'DELETED' &&
  s.anonymisedAt === null &&
  s.deletedAt !== null &&
  earlier(s.deletedAt, cutoffs.deletedBefore);

/** A deleted student's photo goes at the deletion; a run erases one that is still held. */
export const photoErasedNow = (s: Pick<StudentFacts, 'status'>): boolean => s.status === 'DELETED';

/** A check-in or attendance aspect, by its day (YYYY-MM-DD, UTC). */
export const aspectEndsNow = (day: string, cutoffs: Cutoffs): boolean =>
  /^\d{4}-\d{2}-\d{2}$/.test(day) && day < cutoffs.attendanceBeforeDay;

export const pageEndsNow = (sentAt: string, cutoffs: Cutoffs): boolean =>
  earlier(sentAt, cutoffs.pagesSentBefore);

export const auditEntryAnonymisedNow = (
  entry: { readonly created_at: string; readonly anonymised: boolean },
  cutoffs: Cutoffs,
): boolean => !entry.anonymised && earlier(entry.created_at, cutoffs.auditBefore);

/**
 * The record of a student once anonymised: its id, class, nucleus, status, visitor flag, dates and
 * `familyMembershipStatus` (not personal data, and what reports count by) stay; every personal and
 * sensitive field is cleared (a required name becomes `ANONYMISED`).
 */
export const anonymisedStudent = (record: StudentRecord, at: string): StudentRecord => ({
  ...record,
  displayName: ANONYMISED,
  guardianName: ANONYMISED,
  guardianNameAlt: null,
  birthDate: null,
  phones: [],
  address: null,
  allergies: null,
  specialNeeds: null,
  photoRef: null,
  photo_refs: [],
  deleted_justification: null,
  deletedAt: record.deletedAt ?? record.updatedAt,
  anonymisedAt: at,
  updatedAt: at,
});

/**
 * The payload keys an anonymised event keeps: ids, kinds and facts that name no one, which the
 * projections fold (`decodeChange`) and the reports count.
 */
const KEPT_PAYLOAD_KEYS: ReadonlySet<string> = new Set([
  'checkInId',
  'sessionId',
  'actionType',
  'field',
  'fields',
  'classId',
  'consentId',
  'term_version',
  'purpose',
  'pickupId',
  'level',
  'action',
  'authorizationId',
  'valid_from',
  'valid_until',
  'failedAttempts',
]);

/**
 * Personal texts a stored event's kind requires (a visitor's registration, an emergency's or an
 * override's justification): replaced by `ANONYMISED`, so the event still decodes and folds.
 */
const MARKED_PAYLOAD_KEYS: ReadonlySet<string> = new Set([
  'displayName',
  'guardianName',
  'phone',
  'justification',
]);

/**
 * An event's payload once its subject is anonymised: what names no one is kept, a required personal
 * text is `ANONYMISED`, flags stay, anything else (a field's value, who collected the child, health
 * notes, the admission rule's facts about the child) is dropped. An allowlist: a key added later is
 * dropped until someone decides it names no one.
 */
export const anonymisedPayload = (payload: Readonly<Record<string, unknown>>): Record<string, unknown> => {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(payload)) {
    // A flag names no one (a visitor, a photo erased); a number might be an age, so only listed ones stay.
    if (KEPT_PAYLOAD_KEYS.has(key) || typeof value === 'boolean') out[key] = value;
    else if (MARKED_PAYLOAD_KEYS.has(key) && typeof value === 'string') out[key] = ANONYMISED;
    // An ADMIN's override stays a fact (the rule was waived), without its justification.
    else if (key === 'override' && typeof value === 'object' && value !== null)
      out[key] = { justification: ANONYMISED };
  }
  return out;
};

/**
 * A check-in record's personal fields once its child is anonymised: the same values a projection of
 * the anonymised events gives (no adult named; an emergency's justification `ANONYMISED`), so a
 * rebuild of the projections writes nothing new over it.
 */
export const anonymisedCheckinFields = (c: {
  readonly pickupPerson: string | null;
  readonly justification: string | null;
}): { readonly pickupPerson: null; readonly justification: string | null } => ({
  pickupPerson: null,
  justification: c.justification === null ? null : ANONYMISED,
});

/** An image consent's personal texts: who gave it, and the reason it was revoked (free text). */
export const anonymisedConsentFields = (c: {
  readonly granted_by_name: string;
  readonly revocation_reason: string | null;
}): { readonly granted_by_name: string; readonly revocation_reason: string | null } => ({
  granted_by_name: ANONYMISED,
  revocation_reason: c.revocation_reason === null ? null : ANONYMISED,
});

/**
 * The facts of an audit entry's details that name no one: status and error codes, policies and
 * reasons, counts and flags. Ids (the student's, a session's, an event's, a device's, an aspect that
 * holds a student's id) are dropped, so the entry no longer leads to its subject.
 */
const KEPT_AUDIT_TEXTS: ReadonlySet<string> = new Set(['errorCode', 'code', 'policy', 'reason', 'waived']);

export const ANONYMISED_AT_KEY = 'anonymisedAt';

export const anonymisedAuditDetails = (
  details: Readonly<Record<string, unknown>>,
  at: string,
): Record<string, unknown> => {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(details)) {
    if (typeof value === 'number' || typeof value === 'boolean') out[key] = value;
    else if (typeof value === 'string' && KEPT_AUDIT_TEXTS.has(key)) out[key] = value;
  }
  out[ANONYMISED_AT_KEY] = at;
  return out;
};

/** Whether an audit entry's details say it was anonymised already. */
export const isAnonymisedAudit = (details: Readonly<Record<string, unknown>>): boolean =>
  typeof details[ANONYMISED_AT_KEY] === 'string';
