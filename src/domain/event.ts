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
 * and nothing of the event. The pipeline passes over it, and reports any other deletion (decision 0063).
 */
export const RETIRED = 'retention';

/** Whether a deleted event document is a retirement (rather than a copy withdrawn short of its quorum). */
export const isRetiredEvent = (tombstone: unknown): boolean =>
  typeof tombstone === 'object' && tombstone !== null && Reflect.get(tombstone, 'retired') === RETIRED;

/**
 * Whether a live event document's revision is one the service's own writes leave (decision 0063):
 * without a guard in the database, the pipeline reports any other as a rewritten event. The store
 * writes an event once (generation 1); the marked writes after that are a deletion (a withdrawal or a
 * retirement, which leaves no live document), the same event stored again over a withdrawal (two
 * generations on: delete, create), and an anonymisation (one generation on, marked `anonymisedAt`).
 * So an unmarked live event sits at an odd generation and an anonymised one at an even one; a change
 * of a live event by anything else moves it one generation off that. Read from the generation alone
 * because CouchDB's compaction drops the bodies (and the deleted flags) of the revisions before.
 */
export const isSanctionedRevision = (rev: string, doc: unknown): boolean => {
  const generation = Number(/^(\d+)-/.exec(rev)?.[1] ?? Number.NaN);
  if (!Number.isSafeInteger(generation) || generation < 1) return false;
  const anonymised =
    typeof doc === 'object' && doc !== null && typeof Reflect.get(doc, 'anonymisedAt') === 'string';
  return generation % 2 === (anonymised ? 0 : 1);
};

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
