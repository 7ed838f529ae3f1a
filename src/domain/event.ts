/**
 * The immutable event envelope, stored once in the events database and never changed. Events that
 * take part in conflict resolution name their `aspect` and the `baseVersion` their device last saw
 * (see `rules/conflicts.ts`); record-keeping events (user administration, consents) leave them out.
 */
import * as t from 'io-ts';

export const EventDoc = t.intersection([
  t.type({
    _id: t.string,
    docType: t.literal('event'),
    eventId: t.string,
    type: t.string,
    subjectType: t.string,
    subjectId: t.string,
    payload: t.UnknownRecord,
    actor: t.type({ userId: t.string, role: t.string }),
    deviceId: t.union([t.string, t.null]),
    clientTimestamp: t.string,
    serverTimestamp: t.string,
  }),
  t.partial({ aspect: t.string, baseVersion: t.union([t.string, t.null]) }),
]);
export type EventDoc = t.TypeOf<typeof EventDoc>;
export type NewEvent = Omit<EventDoc, '_id' | 'docType'>;

export const eventDocId = (eventId: string): string => `event:${eventId}`;

/**
 * The mark of an event retention retired (decision 0045): its tombstone carries `retired: 'retention'`
 * and nothing of the event. The events guard lets only such a deletion through (`eventsDesign.ts`),
 * and the pipeline passes over it.
 */
export const RETIRED = 'retention';

/** Whether a deleted event document is a retirement (rather than a copy withdrawn short of its quorum). */
export const isRetiredEvent = (tombstone: unknown): boolean =>
  typeof tombstone === 'object' && tombstone !== null && Reflect.get(tombstone, 'retired') === RETIRED;

/** The document an event is stored as. */
export const toEventDoc = (event: NewEvent): EventDoc => ({
  _id: eventDocId(event.eventId),
  docType: 'event',
  ...event,
});

/**
 * Whether a stored event is the one a client sends again (a retry, a second batch): the same aspect
 * from the same user. Anything else under that id is another event claiming it (EVENT_ID_TAKEN).
 */
export const isResendOf = (stored: EventDoc, aspect: string, userId: string): boolean =>
  stored.aspect === aspect && stored.actor.userId === userId;
