/**
 * Projections, as pure functions of an aspect's events: which events stand (the conflict rule in
 * `conflicts.ts`), what the aspect's value is after them (a fold over the applied chain), and the
 * conflict records with both sides described. Nothing here depends on the order events arrived in or
 * on the time they were processed, so a rebuild from the events gives the same documents.
 */
import type { AspectChange, VisitorRegistration } from '../domain/eventTypes.js';
import { decideCheckin } from './checkin.js';
import { type ConflictPolicy, resolveAspect } from './conflicts.js';

/** One event of an aspect as the projection keeps it. */
export interface AspectEventRecord {
  readonly eventId: string;
  readonly baseVersion: string | null;
  readonly subjectId: string;
  readonly userId: string;
  readonly role: string;
  readonly deviceId: string | null;
  readonly clientTimestamp: string;
  readonly serverTimestamp: string;
  /** The stored kind and payload, kept as they are; `change` is the payload decoded for its kind. */
  readonly type: string;
  readonly payload: Readonly<Record<string, unknown>>;
  readonly change: AspectChange;
}

export type AspectKind = 'attendance' | 'checkin' | 'student' | 'visitor';

export const kindOfAspect = (aspect: string): AspectKind | undefined => {
  const head = aspect.slice(0, aspect.indexOf(':'));
  return head === 'attendance' || head === 'checkin' || head === 'student' || head === 'visitor'
    ? head
    : undefined;
};

export interface AttendanceState {
  readonly kind: 'attendance';
  readonly studentId: string;
  readonly sessionId: string | null;
  /** The UTC day of the mark's device time. */
  readonly day: string;
  readonly mark: 'PRESENT' | 'ABSENT';
  readonly eventId: string;
  readonly markedBy: string;
  readonly role: string;
  readonly deviceId: string | null;
  readonly markedAt: string;
}

export interface CheckinRecord {
  readonly checkInId: string;
  readonly status: 'CHECKED_IN' | 'CHECKED_OUT';
  readonly checkedInAt: string;
  readonly checkedInBy: string;
  readonly checkedOutAt: string | null;
  readonly checkedOutBy: string | null;
  readonly pickupPerson: string | null;
  readonly emergency: boolean;
  readonly justification: string | null;
  readonly visitor: boolean;
}

export interface CheckinState {
  readonly kind: 'checkin';
  readonly studentId: string;
  readonly sessionId: string;
  /** Every check-in of the child at this session, in the order they happened (re-entries follow). */
  readonly checkins: ReadonlyArray<CheckinRecord>;
  /** Applied events that changed nothing (a check-out of a check-in that was not open). */
  readonly ineffective: ReadonlyArray<string>;
}

export interface StudentFieldState {
  readonly kind: 'student';
  readonly studentId: string;
  readonly field: string;
  readonly value: unknown;
  readonly eventId: string;
}

/** A first-time visitor as registered: the record the server creates, once, from the standing event. */
export interface VisitorState extends VisitorRegistration {
  readonly kind: 'visitor';
  readonly studentId: string;
  readonly eventId: string;
  readonly registeredAt: string;
  readonly registeredBy: string;
  /** Applied registrations after the first: the child exists already, so they change nothing. */
  readonly ineffective: ReadonlyArray<string>;
}

export type AspectState = AttendanceState | CheckinState | StudentFieldState | VisitorState;

const foldAttendance = (last: AspectEventRecord): AttendanceState | null =>
  last.change.type === 'MARK_PRESENT' || last.change.type === 'MARK_ABSENT'
    ? {
        kind: 'attendance',
        studentId: last.subjectId,
        sessionId: last.change.sessionId,
        day: last.clientTimestamp.slice(0, 10),
        mark: last.change.type === 'MARK_PRESENT' ? 'PRESENT' : 'ABSENT',
        eventId: last.eventId,
        markedBy: last.userId,
        role: last.role,
        deviceId: last.deviceId,
        markedAt: last.clientTimestamp,
      }
    : null;

const foldCheckin = (applied: ReadonlyArray<AspectEventRecord>): CheckinState | null => {
  const first = applied[0];
  if (first === undefined) return null;
  const checkins: CheckinRecord[] = [];
  const ineffective: string[] = [];
  let sessionId = '';
  for (const e of applied) {
    const c = e.change;
    if (c.type !== 'CHECK_IN' && c.type !== 'CHECK_OUT' && c.type !== 'EMERGENCY_CHECKOUT') {
      ineffective.push(e.eventId);
      continue;
    }
    if (c.type === 'CHECK_IN') sessionId = c.sessionId;
    // The same rule a desk or a request asked before recording: an event it refuses changes nothing.
    if (decideCheckin(checkins, { type: c.type, checkInId: c.checkInId }).kind === 'REFUSED') {
      ineffective.push(e.eventId);
      continue;
    }
    if (c.type === 'CHECK_IN') {
      checkins.push({
        checkInId: c.checkInId,
        status: 'CHECKED_IN',
        checkedInAt: e.clientTimestamp,
        checkedInBy: e.userId,
        checkedOutAt: null,
        checkedOutBy: null,
        pickupPerson: null,
        emergency: false,
        justification: null,
        visitor: c.visitor,
      });
    } else {
      const at = checkins.findIndex((r) => r.checkInId === c.checkInId && r.status === 'CHECKED_IN');
      const open = checkins[at];
      if (open === undefined) continue;
      checkins[at] = {
        ...open,
        status: 'CHECKED_OUT',
        checkedOutAt: e.clientTimestamp,
        checkedOutBy: e.userId,
        pickupPerson: c.pickupPerson,
        emergency: c.type === 'EMERGENCY_CHECKOUT',
        justification: c.type === 'EMERGENCY_CHECKOUT' ? c.justification : null,
      };
    }
  }
  return { kind: 'checkin', studentId: first.subjectId, sessionId, checkins, ineffective };
};

const foldStudentField = (last: AspectEventRecord): StudentFieldState | null =>
  last.change.type === 'STUDENT_FIELD_SET'
    ? {
        kind: 'student',
        studentId: last.subjectId,
        field: last.change.field,
        value: last.change.value,
        eventId: last.eventId,
      }
    : null;

/**
 * A registration creates the child; the first applied one stands. A second one on the same id (only a
 * faulty device sends one: ids are generated per registration) is a later version of the aspect that
 * changes nothing, since a registration is not an edit: edits are STUDENT_FIELD_SET events.
 */
const foldVisitor = (applied: ReadonlyArray<AspectEventRecord>): VisitorState | null => {
  const [first, ...rest] = applied;
  if (first === undefined || first.change.type !== 'VISITOR_REGISTERED') return null;
  const { type: _type, ...fields } = first.change;
  return {
    kind: 'visitor',
    studentId: first.subjectId,
    ...fields,
    eventId: first.eventId,
    registeredAt: first.clientTimestamp,
    registeredBy: first.userId,
    ineffective: rest.map((e) => e.eventId),
  };
};

/** The aspect's value after its applied events, in order; null before any. */
export const foldAspect = (
  kind: AspectKind,
  applied: ReadonlyArray<AspectEventRecord>,
): AspectState | null => {
  const last = applied[applied.length - 1];
  if (last === undefined) return null;
  switch (kind) {
    case 'attendance':
      return foldAttendance(last);
    case 'checkin':
      return foldCheckin(applied);
    case 'student':
      return foldStudentField(last);
    case 'visitor':
      return foldVisitor(applied);
  }
};

/** What an event changed, for the conflict report: kinds and fields, never personal values. */
export interface ChangeSummary {
  readonly type: string;
  readonly field?: string;
  readonly checkInId?: string;
}

export const summarise = (change: AspectChange): ChangeSummary => {
  switch (change.type) {
    case 'STUDENT_FIELD_SET':
      return { type: change.type, field: change.field };
    case 'CHECK_IN':
    case 'CHECK_OUT':
    case 'EMERGENCY_CHECKOUT':
      return { type: change.type, checkInId: change.checkInId };
    default:
      return { type: change.type };
  }
};

export interface ConflictSide {
  readonly eventId: string;
  readonly userId: string;
  readonly role: string;
  readonly deviceId: string | null;
  readonly clientTimestamp: string;
  readonly serverTimestamp: string;
  readonly change: ChangeSummary;
}

export interface ConflictRecordFull {
  readonly aspect: string;
  readonly kind: AspectKind;
  readonly subjectId: string;
  readonly policy: ConflictPolicy;
  readonly winner: ConflictSide;
  readonly loser: ConflictSide;
  /** When the server learnt of the conflict: the later of the two server timestamps. */
  readonly detectedAt: string;
}

const side = (e: AspectEventRecord): ConflictSide => ({
  eventId: e.eventId,
  userId: e.userId,
  role: e.role,
  deviceId: e.deviceId,
  clientTimestamp: e.clientTimestamp,
  serverTimestamp: e.serverTimestamp,
  change: summarise(e.change),
});

// ISO instants compare as strings; Math.max would turn them into NaN.
const laterOf = (a: string, b: string): string => (a < b ? b : a);

export interface AspectProjection {
  readonly aspect: string;
  readonly kind: AspectKind;
  readonly subjectId: string;
  /** Every event of the aspect, sorted by eventId. */
  readonly events: ReadonlyArray<AspectEventRecord>;
  readonly applied: ReadonlyArray<string>;
  readonly superseded: ReadonlyArray<string>;
  readonly waiting: ReadonlyArray<string>;
  /** The eventId of the aspect's current version; null before any. */
  readonly version: string | null;
  readonly state: AspectState | null;
  readonly conflicts: ReadonlyArray<ConflictRecordFull>;
}

/**
 * Whether the aspect's events already hold every one of `incoming`, as the same copy. One event has
 * one stored copy at a time, but on a CouchDB cluster two instances may both have written one, and
 * the copy that stands (decision 0023) can differ from one projected earlier in its server time.
 */
export const holdsEvents = (
  known: ReadonlyArray<AspectEventRecord>,
  incoming: ReadonlyArray<AspectEventRecord>,
): boolean => {
  const held = new Map(known.map((e) => [e.eventId, e.serverTimestamp]));
  return incoming.every((e) => held.get(e.eventId) === e.serverTimestamp);
};

/**
 * Merges events into an aspect and projects it again. An event already present is replaced by the
 * incoming copy, which was read later (see `holdsEvents`); a replay brings the same copy.
 */
export const projectAspect = (
  aspect: string,
  kind: AspectKind,
  known: ReadonlyArray<AspectEventRecord>,
  incoming: ReadonlyArray<AspectEventRecord>,
): AspectProjection => {
  const byId = new Map<string, AspectEventRecord>();
  for (const e of [...known, ...incoming]) byId.set(e.eventId, e);
  const events = [...byId.values()].sort((a, b) =>
    a.eventId < b.eventId ? -1 : a.eventId > b.eventId ? 1 : 0,
  );
  const resolution = resolveAspect(
    aspect,
    events.map((e) => ({
      eventId: e.eventId,
      aspect,
      baseVersion: e.baseVersion,
      actorRole: e.role,
      clientTimestamp: e.clientTimestamp,
    })),
  );
  const applied = resolution.applied.flatMap((id) => {
    const e = byId.get(id);
    return e === undefined ? [] : [e];
  });
  const conflicts = resolution.conflicts.flatMap((c): ConflictRecordFull[] => {
    const winner = byId.get(c.winnerEventId);
    const loser = byId.get(c.loserEventId);
    if (winner === undefined || loser === undefined) return [];
    return [
      {
        aspect,
        kind,
        subjectId: loser.subjectId,
        policy: c.policy,
        winner: side(winner),
        loser: side(loser),
        detectedAt: laterOf(winner.serverTimestamp, loser.serverTimestamp),
      },
    ];
  });
  return {
    aspect,
    kind,
    subjectId: events[0]?.subjectId ?? '',
    events,
    applied: resolution.applied,
    superseded: resolution.superseded,
    waiting: resolution.waiting,
    version: resolution.applied[resolution.applied.length - 1] ?? null,
    state: foldAspect(kind, applied),
    conflicts,
  };
};

export type EventStanding = 'APPLIED' | 'SUPERSEDED' | 'WAITING';

export const standingOf = (p: AspectProjection, eventId: string): EventStanding | undefined =>
  p.applied.includes(eventId)
    ? 'APPLIED'
    : p.superseded.includes(eventId)
      ? 'SUPERSEDED'
      : p.waiting.includes(eventId)
        ? 'WAITING'
        : undefined;

/** What an event came to: its standing, with an applied check-in change that changed nothing told apart. */
export type EventOutcome = EventStanding | 'NO_EFFECT';

/**
 * The one reading of an event's outcome, for a request's answer and a tablet's sync status alike:
 * applied in order but ineffective (a check-out of a check-in that was not open) is `NO_EFFECT`.
 * Undefined when the projection does not hold the event.
 */
export const outcomeOf = (p: AspectProjection, eventId: string): EventOutcome | undefined => {
  const standing = standingOf(p, eventId);
  return standing === 'APPLIED' &&
    (p.state?.kind === 'checkin' || p.state?.kind === 'visitor') &&
    p.state.ineffective.includes(eventId)
    ? 'NO_EFFECT'
    : standing;
};

/** Why an event was superseded, as every answer names it: the policy, the winner and the loser. */
export interface Supersession {
  readonly policy: ConflictPolicy;
  readonly winnerEventId: string;
  readonly loserEventId: string;
}

/**
 * The conflict that superseded `eventId`, from the projection's records (an event built on a loser has
 * a record of its own, `BASED_ON_SUPERSEDED`); undefined when it was not superseded.
 */
export const supersessionOf = (p: AspectProjection, eventId: string): Supersession | undefined => {
  if (standingOf(p, eventId) !== 'SUPERSEDED') return undefined;
  const record = p.conflicts.find((c) => c.loser.eventId === eventId);
  return record === undefined
    ? undefined
    : { policy: record.policy, winnerEventId: record.winner.eventId, loserEventId: record.loser.eventId };
};
