/**
 * The event store's write side: events are created once and never changed or removed. There is no
 * update or delete here on purpose; appending the same event id twice stores it once.
 */
import { EventDoc, eventDocId, type NewEvent } from '../domain/event.js';
import { decodeDoc, getDoc } from './docs.js';
import type { Database } from './pouch.js';
import { isConflict } from './storeErrors.js';

export interface EventStore {
  /** `stored` the first time, `duplicate` when an event with that id already exists. */
  append(event: NewEvent): Promise<'stored' | 'duplicate'>;
  get(eventId: string): Promise<EventDoc | undefined>;
  /** Every event of one aspect, for conflict resolution. */
  ofAspect(aspect: string): Promise<EventDoc[]>;
}

export const eventStore = (db: Database): EventStore => ({
  async append(event) {
    const doc: EventDoc = { _id: eventDocId(event.eventId), docType: 'event', ...event };
    try {
      await db.put(doc);
      return 'stored';
    } catch (e) {
      if (isConflict(e)) return 'duplicate';
      throw e;
    }
  },
  get: (eventId) => getDoc(db, EventDoc, eventDocId(eventId)),
  async ofAspect(aspect) {
    const found = await db.find({ selector: { aspect }, limit: 100_000, use_index: 'idx-by-aspect' });
    return found.docs.map((d) => decodeDoc(EventDoc, d._id, d));
  },
});
