/**
 * The immutable event envelope, stored once in the events database and never changed. This issue's
 * events are user events; the sync issue brings the attendance and roster kinds and the pipeline.
 */
import * as t from 'io-ts';

export const EventDoc = t.type({
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
});
export type EventDoc = t.TypeOf<typeof EventDoc>;
export type NewEvent = Omit<EventDoc, '_id' | 'docType'>;

export const eventDocId = (eventId: string): string => `event:${eventId}`;
