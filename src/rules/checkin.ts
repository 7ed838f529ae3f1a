/**
 * Check-in rules, pure, so a tablet can run them offline exactly as the server does.
 *
 * Daily code: 6 characters from an alphabet without look-alikes (no 0/O, 1/I/L), derived from
 * HMAC(dayKey, studentId) where dayKey = HMAC(checkin_secret, "chamada-day:" + UTC day). The same
 * child on the same UTC day always gets the same code (a reprinted label matches), and a device that
 * holds that day's key computes it with no network. The HMAC is passed in, so this module stays free
 * of IO and of any particular crypto library (Node's on the server, WebCrypto on a tablet).
 */

import { CODE_ALPHABET, CODE_LENGTH } from '../domain/checkin.js';

export { CODE_ALPHABET, CODE_LENGTH };

/** A handful of substrings a printed label should never show a family; matched after the code is drawn. */
const BLOCKED = [
  'ASS',
  'FUCK',
  'SHIT',
  'CU',
  'PQP',
  'XXX',
  'KKK',
  'NAZI',
  'PUTA',
  'CAGA',
  'BUNDA',
  'MERDA',
  'PORRA',
];

export const isOffensive = (code: string): boolean => BLOCKED.some((w) => code.includes(w));

/** The UTC calendar day of an instant, the unit of daily codes and day keys. */
export const utcDay = (at: Date): string => at.toISOString().slice(0, 10);

export const dayKeyMessage = (day: string): string => `chamada-day:${day}`;

/**
 * Maps digest bytes to code characters by rejection sampling (bytes ≥ 248 = 8 × 31 are skipped), so
 * every character is equally likely. `undefined` when the digest runs out (about once in 10^40).
 */
export const codeFromDigest = (digest: Uint8Array): string | undefined => {
  const limit = Math.floor(256 / CODE_ALPHABET.length) * CODE_ALPHABET.length;
  let code = '';
  for (const byte of digest) {
    if (byte >= limit) continue;
    code += CODE_ALPHABET[byte % CODE_ALPHABET.length];
    if (code.length === CODE_LENGTH) return code;
  }
  return undefined;
};

/**
 * The child's code for the day of `dayKey`. `hmac(message)` is HMAC-SHA-256 keyed with the day key. An
 * offensive draw is re-derived deterministically with a counter, so every device lands on the same code.
 */
export const dailyCode = (studentId: string, hmac: (message: string) => Uint8Array): string => {
  for (let n = 0; n < 100; n += 1) {
    const code = codeFromDigest(hmac(n === 0 ? `code:${studentId}` : `code:${studentId}:${n}`));
    if (code !== undefined && !isOffensive(code)) return code;
  }
  throw new Error('no acceptable code in 100 draws');
};

/** Codes are typed by people: compare ignoring case and surrounding spaces. */
export const normaliseCode = (typed: string): string => typed.trim().toUpperCase();

export type CheckoutDecision =
  | { readonly kind: 'CHECK_OUT' }
  | { readonly kind: 'MISMATCH'; readonly remainingAttempts: number; readonly locksNow: boolean }
  | { readonly kind: 'LOCKED' }
  | { readonly kind: 'ALREADY_CHECKED_OUT' }
  | { readonly kind: 'SUPERSEDED' }
  | { readonly kind: 'ADULT_NOT_AUTHORIZED' };

/**
 * One check-out attempt against a check-in. Once `failedAttempts` reaches the limit every attempt is
 * LOCKED, the right code included, until an emergency check-out; a wrong code counts one failure.
 * The code is checked before the adult, so a wrong adult with the right code does not burn an attempt.
 */
export const decideCheckout = (input: {
  readonly status: 'CHECKED_IN' | 'CHECKED_OUT' | 'SUPERSEDED';
  readonly failedAttempts: number;
  readonly maxAttempts: number;
  readonly codeMatches: boolean;
  readonly adultAllowed: boolean;
}): CheckoutDecision => {
  if (input.status === 'CHECKED_OUT') return { kind: 'ALREADY_CHECKED_OUT' };
  if (input.status === 'SUPERSEDED') return { kind: 'SUPERSEDED' };
  if (input.failedAttempts >= input.maxAttempts) return { kind: 'LOCKED' };
  if (!input.codeMatches) {
    const remainingAttempts = Math.max(0, input.maxAttempts - input.failedAttempts - 1);
    return { kind: 'MISMATCH', remainingAttempts, locksNow: remainingAttempts === 0 };
  }
  if (!input.adultAllowed) return { kind: 'ADULT_NOT_AUTHORIZED' };
  return { kind: 'CHECK_OUT' };
};

/** A change asked of a child's check-in aspect at one session (by a request, or a tablet offline). */
export interface CheckinCommand {
  readonly type: 'CHECK_IN' | 'CHECK_OUT' | 'EMERGENCY_CHECKOUT';
  /** The check-in opened (a fresh id) or closed. */
  readonly checkInId: string;
}

/** The check-ins of the aspect as they stand: the projection's on the server, the desk's on a tablet. */
export interface CheckinStanding {
  readonly checkInId: string;
  readonly status: string;
}

export type CheckinDecision =
  | { readonly kind: 'EVENT'; readonly type: CheckinCommand['type']; readonly checkInId: string }
  | { readonly kind: 'REFUSED'; readonly reason: 'ALREADY_CHECKED_IN' | 'CHECK_IN_ID_TAKEN' | 'NOT_OPEN' };

/**
 * Whether a command changes the child's check-ins at a session, from those check-ins as they stand:
 * a child has at most one open check-in per session, a check-in id opens once, and only an open
 * check-in can be closed. A desk or a request asks it before it records anything (through the
 * admission rule, `rules/admission.ts`, for a check-in); the fold (`rules/projections.ts`) asks it of
 * every event the conflict rule applied, and one it refuses changes nothing.
 */
export const decideCheckin = (
  checkins: ReadonlyArray<CheckinStanding>,
  command: CheckinCommand,
): CheckinDecision => {
  if (command.type === 'CHECK_IN') {
    if (checkins.some((c) => c.status === 'CHECKED_IN'))
      return { kind: 'REFUSED', reason: 'ALREADY_CHECKED_IN' };
    if (checkins.some((c) => c.checkInId === command.checkInId))
      return { kind: 'REFUSED', reason: 'CHECK_IN_ID_TAKEN' };
    return { kind: 'EVENT', type: 'CHECK_IN', checkInId: command.checkInId };
  }
  return checkins.some((c) => c.checkInId === command.checkInId && c.status === 'CHECKED_IN')
    ? { kind: 'EVENT', type: command.type, checkInId: command.checkInId }
    : { kind: 'REFUSED', reason: 'NOT_OPEN' };
};

export const remainingAttempts = (failedAttempts: number, maxAttempts: number): number =>
  Math.max(0, maxAttempts - failedAttempts);

/** Emergency check-out: ADMIN always; CHAMADOR (or an `attendance` role) unless the policy says ADMIN only. */
export const mayEmergencyCheckout = (
  roles: ReadonlyArray<string>,
  permissions: ReadonlyArray<string>,
  adminOnly: boolean,
): boolean =>
  roles.includes('ADMIN') ||
  (!adminOnly && (roles.includes('CHAMADOR') || permissions.includes('attendance')));

export const MAX_GRANT_WINDOW_MS = 7 * 24 * 60 * 60 * 1000;

/** The last millisecond of the UTC day of `at`: the default end of a temporary (N3) grant. */
export const endOfUtcDay = (at: Date): Date => new Date(Date.parse(`${utcDay(at)}T23:59:59.999Z`));

export type GrantWindow =
  | { readonly ok: true; readonly validFrom: Date; readonly validUntil: Date }
  | { readonly ok: false; readonly reason: 'ENDS_BEFORE_START' | 'LONGER_THAN_7_DAYS' | 'ALREADY_OVER' };

/**
 * The window of an N3 grant: from `validFrom` (default now) to `validUntil` (default the end of that
 * UTC day), at most 7 days long, and not already over.
 */
export const grantWindow = (now: Date, validFrom?: Date, validUntil?: Date): GrantWindow => {
  const from = validFrom ?? now;
  const until = validUntil ?? endOfUtcDay(from);
  if (until.getTime() <= from.getTime()) return { ok: false, reason: 'ENDS_BEFORE_START' };
  if (until.getTime() - from.getTime() > MAX_GRANT_WINDOW_MS)
    return { ok: false, reason: 'LONGER_THAN_7_DAYS' };
  if (until.getTime() <= now.getTime()) return { ok: false, reason: 'ALREADY_OVER' };
  return { ok: true, validFrom: from, validUntil: until };
};

/** A grant opens the gate only inside its window and while unrevoked; after it, it is inert. */
export const grantActive = (
  grant: { readonly validFrom: string; readonly validUntil: string; readonly revokedAt: string | null },
  now: Date,
): boolean =>
  grant.revokedAt === null &&
  Date.parse(grant.validFrom) <= now.getTime() &&
  now.getTime() <= Date.parse(grant.validUntil);

/** Phone-suffix matching at the gate: the last digits typed must end the phone on record. */
export const phoneSuffixMatches = (phone: string, suffix: string): boolean => {
  const digits = phone.replace(/\D/g, '');
  const typed = suffix.replace(/\D/g, '');
  return typed.length >= 4 && digits.endsWith(typed);
};

/** Who is in a session's room, and who has come and gone. */
export interface Headcount {
  readonly checkedIn: number;
  readonly checkedOut: number;
}

/**
 * The headcount from each child's check-ins at the session, in order: a child counts once, by their
 * latest check-in that stands (a superseded one lost a conflict and never happened), as in the room
 * while it is open and as gone once it is closed. The server counts the projections; the desk, the
 * roster with its own events over it.
 */
export const headcountOf = (children: Iterable<ReadonlyArray<{ readonly status: string }>>): Headcount => {
  let checkedIn = 0;
  let checkedOut = 0;
  for (const checkins of children) {
    const latest = standingStatus(checkins);
    if (latest === 'CHECKED_IN') checkedIn += 1;
    else if (latest === 'CHECKED_OUT') checkedOut += 1;
  }
  return { checkedIn, checkedOut };
};

/** A child's latest check-in that stands at a session (a superseded one never happened), if any. */
export const standingStatus = (checkins: ReadonlyArray<{ readonly status: string }>): string | undefined =>
  checkins.filter((c) => c.status !== 'SUPERSEDED').at(-1)?.status;

/** Whether one more child may come in: never limited without a capacity; full at it. */
export const roomIsFull = (checkedIn: number, capacity: number | null): boolean =>
  capacity !== null && checkedIn >= capacity;

/** The volunteers a ratio asks for (at least one while a child is in); null without a ratio. */
export const volunteersNeeded = (checkedIn: number, childrenPerVolunteer: number | null): number | null =>
  childrenPerVolunteer === null ? null : Math.ceil(checkedIn / childrenPerVolunteer);
