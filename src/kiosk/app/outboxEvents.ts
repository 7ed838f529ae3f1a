/**
 * The events the tablet records, in exactly the shapes `/api/v1/replication/events` accepts: built
 * here, checked with the server's codecs before they are written (a bug here must fail on the tablet,
 * not come back refused after the network returns), and read back for the desk's view. Pure.
 */
import * as E from 'fp-ts/lib/Either.js';
import { eventDocId } from '../../domain/event.js';
import { decodeSyncEvent, type SyncEvent } from '../../domain/eventTypes.js';
import type { RosterStudent } from '../../domain/roster.js';
import { phoneSuffix } from '../../rules/roster.js';
import type { LocalCheckinEvent } from './checkinState.js';

export type OutboxDoc = SyncEvent & { readonly _id: string };

interface Common {
  readonly eventId: string;
  readonly now: Date;
  readonly studentId: string;
  readonly sessionId: string;
  readonly checkInId: string;
  readonly baseVersion: string | null;
}

const checked = (event: SyncEvent): OutboxDoc => {
  const decoded = decodeSyncEvent(event);
  if (E.isLeft(decoded)) throw new Error(`the kiosk built an invalid ${event.type} event`);
  return { _id: eventDocId(decoded.right.eventId), ...decoded.right };
};

/** The fields every check-in event carries, from what the desk knows when it records one. */
const envelope = (c: Common) => ({
  eventId: c.eventId,
  clientTimestamp: c.now.toISOString(),
  studentId: c.studentId,
  sessionId: c.sessionId,
  checkInId: c.checkInId,
  baseVersion: c.baseVersion,
});

/** A check-in; an ADMIN's override of the admission rule carries its justification to the server. */
export const checkInDoc = (
  c: Common & { readonly override?: { readonly justification: string } | undefined },
): OutboxDoc =>
  checked({
    type: 'CHECK_IN',
    ...envelope(c),
    ...(c.override === undefined ? {} : { override: { justification: c.override.justification } }),
  });

export const checkOutDoc = (c: Common & { readonly pickupPerson: string }): OutboxDoc =>
  checked({ type: 'CHECK_OUT', ...envelope(c), pickupPerson: c.pickupPerson });

export const emergencyCheckoutDoc = (
  c: Common & { readonly pickupPerson: string; readonly justification: string },
): OutboxDoc =>
  checked({
    type: 'EMERGENCY_CHECKOUT',
    ...envelope(c),
    pickupPerson: c.pickupPerson,
    justification: c.justification,
  });

/** The check-in events among outbox documents; anything else (or undecodable) is left out. */
export const localCheckinEvents = (docs: ReadonlyArray<Record<string, unknown>>): LocalCheckinEvent[] => {
  const out: LocalCheckinEvent[] = [];
  for (const { _id: _i, _rev: _r, ...doc } of docs) {
    const decoded = decodeSyncEvent(doc);
    if (E.isLeft(decoded)) continue;
    const e = decoded.right;
    if (e.type === 'CHECK_IN' || e.type === 'CHECK_OUT' || e.type === 'EMERGENCY_CHECKOUT') {
      out.push({
        eventId: e.eventId,
        type: e.type,
        sessionId: e.sessionId,
        studentId: e.studentId,
        checkInId: e.checkInId,
        clientTimestamp: e.clientTimestamp,
      });
    }
  }
  return out;
};

/** What the "new child" form gathers; optional fields are absent when left blank. */
export interface VisitorInput {
  readonly displayName: string;
  readonly guardianName: string;
  readonly phone: string;
  readonly allergies?: string;
  readonly specialNeeds?: string;
}

/** The form's fields the server's codec refused, by field name (empty: the registration is valid). */
export type VisitorProblems = ReadonlySet<keyof VisitorInput>;

const visitorEvent = (
  input: VisitorInput,
  ids: { readonly eventId: string; readonly studentId: string; readonly classId: string; readonly now: Date },
): SyncEvent & { readonly type: 'VISITOR_REGISTERED' } => ({
  type: 'VISITOR_REGISTERED',
  eventId: ids.eventId,
  clientTimestamp: ids.now.toISOString(),
  studentId: ids.studentId,
  classId: ids.classId,
  displayName: input.displayName,
  guardianName: input.guardianName,
  phone: input.phone,
  ...(input.allergies === undefined ? {} : { allergies: input.allergies }),
  ...(input.specialNeeds === undefined ? {} : { specialNeeds: input.specialNeeds }),
});

const FORM_FIELDS: ReadonlyArray<keyof VisitorInput> = [
  'displayName',
  'guardianName',
  'phone',
  'allergies',
  'specialNeeds',
];
const isFormField = (key: string): key is keyof VisitorInput =>
  (FORM_FIELDS as ReadonlyArray<string>).includes(key);

/**
 * The form's fields checked with the server's own codec of the event (the API's validation, not a
 * copy of it): the fields named by the codec's errors are the ones to correct.
 */
export const visitorProblems = (input: VisitorInput): VisitorProblems => {
  const decoded = decodeSyncEvent(
    visitorEvent(input, {
      eventId: crypto.randomUUID(),
      studentId: crypto.randomUUID(),
      classId: crypto.randomUUID(),
      now: new Date(),
    }),
  );
  if (E.isRight(decoded)) return new Set();
  if (decoded.left.reason !== 'VALIDATION_FAILED') throw new Error('the kiosk built an unknown event');
  return new Set(decoded.left.errors.flatMap((e) => e.context.map((c) => c.key).filter(isFormField)));
};

export const visitorRegisteredDoc = (
  input: VisitorInput,
  ids: { readonly eventId: string; readonly studentId: string; readonly classId: string; readonly now: Date },
): OutboxDoc => checked(visitorEvent(input, ids));

/**
 * The children this tablet registered, as the desk shows them until the roster brings the server's
 * record: what a pulled roster document would hold, the guardian's phone as its last four digits
 * only (as the roster gives it), never shown in full once recorded.
 */
export const localVisitors = (
  docs: ReadonlyArray<Record<string, unknown>>,
): Array<{ readonly eventId: string; readonly student: RosterStudent }> => {
  const out: Array<{ readonly eventId: string; readonly student: RosterStudent }> = [];
  for (const { _id: _i, _rev: _r, ...doc } of docs) {
    const decoded = decodeSyncEvent(doc);
    if (E.isLeft(decoded) || decoded.right.type !== 'VISITOR_REGISTERED') continue;
    const e = decoded.right;
    out.push({
      eventId: e.eventId,
      student: {
        _id: `student:${e.studentId}`,
        docType: 'rosterStudent',
        studentId: e.studentId,
        displayName: e.displayName,
        classId: e.classId,
        photoRef: null,
        allergies: e.allergies ?? null,
        specialNeeds: e.specialNeeds ?? null,
        visitor: true,
        pickup: [
          {
            name: e.guardianName,
            level: 'N1',
            relationship: 'guardian',
            phoneSuffixes: [phoneSuffix(e.phone)],
          },
        ],
      },
    });
  }
  return out;
};
