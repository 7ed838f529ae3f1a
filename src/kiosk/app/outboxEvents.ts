/**
 * The events the tablet records, in exactly the shapes `/api/v1/replication/events` accepts: built
 * here, checked with the server's codecs before they are written (a bug here must fail on the tablet,
 * not come back refused after the network returns), and read back for the desk's view. Pure.
 */
import * as E from 'fp-ts/lib/Either.js';
import { eventDocId } from '../../domain/event.js';
import { decodeSyncEvent, type SyncEvent } from '../../domain/eventTypes.js';
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

export const checkInDoc = (c: Common): OutboxDoc => checked({ type: 'CHECK_IN', ...envelope(c) });

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
