/**
 * The event store's write side: events are created once and never changed or removed. There is no
 * update or delete here on purpose; appending the same event id twice stores it once.
 */
import { type EventDoc, eventDocId, type NewEvent } from '../domain/event.js';
import type { Database } from './pouch.js';
import { isConflict } from './storeErrors.js';

export interface EventStore {
  /** `stored` the first time, `duplicate` when an event with that id already exists. */
  append(event: NewEvent): Promise<'stored' | 'duplicate'>;
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
});
