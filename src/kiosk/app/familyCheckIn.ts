/**
 * A family at the kiosk, as pure functions of the tablet's roster (decision 0052): the families a
 * guardian's last four phone digits name, the session each child would be checked in to now, and who
 * the family screen ticks. No DOM, no PouchDB: the screens (`screens/family.ts`, `familyLookup.ts`)
 * and the tests call these alike.
 */
import type { RosterFamily, RosterStudent } from '../../domain/roster.js';
import { firstName } from '../../rules/familyPass.js';
import type { RosterIndex, RosterSessionDoc } from './rosterIndex.js';
import { sessionOpen } from './rosterIndex.js';

/** How many digits a guardian types: the roster holds no more of a phone (0018). */
export const LOOKUP_DIGITS = 4;

/** What a lookup shows of one family: first names only, nothing that tells families apart otherwise. */
export interface FamilyMatch {
  readonly familyKey: string;
  readonly guardianName: string;
  /** The children's first names, in the order the family screen lists them. */
  readonly children: ReadonlyArray<string>;
}

/** The typed text's digits, when they are exactly four (spaces, dashes and the like ignored). */
export const lookupDigits = (typed: string): string | undefined => {
  const digits = typed.replace(/\D/g, '');
  return digits.length === LOOKUP_DIGITS ? digits : undefined;
};

const byName = (a: RosterStudent, b: RosterStudent): number =>
  a.displayName.localeCompare(b.displayName, 'pt-BR', { sensitivity: 'base' });

/**
 * The family's children the tablet holds, by name. A child the office deleted leaves the roster (its
 * student document goes) before the family document is rewritten, so only `students` is trusted.
 */
export const familyChildren = (
  index: Pick<RosterIndex, 'students'>,
  family: Pick<RosterFamily, 'studentIds'>,
): RosterStudent[] => family.studentIds.flatMap((id) => index.students.get(id) ?? []).sort(byName);

/**
 * The families whose guardian phone ends in the typed four digits, with at least one child on this
 * tablet; several families may share them, so each is shown by the guardian's and children's first
 * names, ordered by the guardian's name. Fewer or more than four digits match nothing: a lookup never
 * lists the roster.
 */
export const lookupFamilies = (
  index: Pick<RosterIndex, 'students' | 'families'>,
  typed: string,
): FamilyMatch[] => {
  const digits = lookupDigits(typed);
  if (digits === undefined) return [];
  const matches: FamilyMatch[] = [];
  for (const family of index.families.values()) {
    if (family.phoneSuffix !== digits) continue;
    const children = familyChildren(index, family);
    if (children.length === 0) continue;
    matches.push({
      familyKey: family.familyKey,
      guardianName: family.guardianName,
      children: children.map((c) => firstName(c.displayName)),
    });
  }
  return matches.sort(
    (a, b) =>
      a.guardianName.localeCompare(b.guardianName, 'pt-BR', { sensitivity: 'base' }) ||
      a.children.join(' ').localeCompare(b.children.join(' '), 'pt-BR') ||
      a.familyKey.localeCompare(b.familyKey),
  );
};

/** The tablet's calendar day, as the sessions screen reads it (sessions are dated in local time). */
export const tabletDay = (at: Date): string =>
  `${at.getFullYear()}-${String(at.getMonth() + 1).padStart(2, '0')}-${String(at.getDate()).padStart(2, '0')}`;

const startMs = (s: RosterSessionDoc): number => (s.startsAt === null ? -Infinity : Date.parse(s.startsAt));
const endMs = (s: RosterSessionDoc): number => (s.endsAt === null ? Infinity : Date.parse(s.endsAt));

/**
 * The session a child of `classId` is checked in to now: of the class's open sessions of the tablet's
 * day (the day the sessions screen offers), the one under way (a session without times lasts the day),
 * else the next to start, else the last to have started (a family arriving late). Undefined: the class
 * has no open session today.
 */
export const sessionNow = (
  index: Pick<RosterIndex, 'sessions' | 'deactivatedClasses'>,
  classId: string,
  now: Date,
): RosterSessionDoc | undefined => {
  const day = tabletDay(now);
  const t = now.getTime();
  const today = index.sessions.filter(
    (s) => s.classId === classId && s.date === day && sessionOpen(index, s),
  );
  const running = today.filter((s) => startMs(s) <= t && t < endMs(s));
  if (running.length > 0) return running.reduce((a, b) => (startMs(b) > startMs(a) ? b : a));
  const next = today.filter((s) => startMs(s) > t).sort((a, b) => startMs(a) - startMs(b))[0];
  return next ?? today.sort((a, b) => startMs(b) - startMs(a))[0];
};

/** Why a child of the family is not ticked. */
export type NotTicked =
  /** The child's class has no open session today. */
  | 'NO_SESSION'
  /** Already in the room (checked in at this or another door). */
  | 'INSIDE';

export interface FamilyRow {
  readonly student: RosterStudent;
  /** The session the child goes to now, if any. */
  readonly session: RosterSessionDoc | undefined;
  /** Ticked when the family opens: a session now, and not in the room already. */
  readonly ticked: boolean;
  readonly why: NotTicked | undefined;
}

/**
 * The family screen's rows: every child on the tablet, by name, each ticked when their own class has a
 * session now and they are not inside yet. `inside` says whether a child has an open check-in at a
 * session (the roster with this tablet's own events over it).
 */
export const familyRows = (
  index: Pick<RosterIndex, 'students' | 'sessions' | 'deactivatedClasses'>,
  family: Pick<RosterFamily, 'studentIds'>,
  now: Date,
  inside: (sessionId: string, studentId: string) => boolean,
): FamilyRow[] =>
  familyChildren(index, family).map((student) => {
    const session = sessionNow(index, student.classId, now);
    const why: NotTicked | undefined =
      session === undefined
        ? 'NO_SESSION'
        : inside(session.sessionId, student.studentId)
          ? 'INSIDE'
          : undefined;
    return { student, session, ticked: why === undefined, why };
  });

/** Whether the family has nobody to check in now (every child without a session, or inside already). */
export const nobodyToCheckIn = (rows: ReadonlyArray<FamilyRow>): boolean => rows.every((r) => !r.ticked);

/**
 * Lookups a self-service tablet answers a minute: enough for a queue of families (one each, some
 * mistyped), too few to walk the 10,000 endings for every family's first names (a day at this pace).
 */
export const SELF_LOOKUPS_PER_MINUTE = 8;
const MINUTE_MS = 60_000;

/**
 * Whether one more lookup is answered now, given when the recent ones were (`recentMs`), and the
 * times to keep: the last minute's, with this one when it is answered.
 */
export const throttleLookup = (
  recentMs: ReadonlyArray<number>,
  nowMs: number,
  limit = SELF_LOOKUPS_PER_MINUTE,
): { readonly answered: boolean; readonly recentMs: ReadonlyArray<number> } => {
  const kept = recentMs.filter((at) => nowMs - at < MINUTE_MS);
  return kept.length < limit
    ? { answered: true, recentMs: [...kept, nowMs] }
    : { answered: false, recentMs: kept };
};
