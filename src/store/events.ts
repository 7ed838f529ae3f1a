/**
 * The event store's write side: events are created once and never changed or removed. There is no
 * update or delete here on purpose; appending the same event id twice stores it once.
 */
import { EventDoc, eventDocId, type NewEvent, toEventDoc } from '../domain/event.js';
import { putBatched } from './batchedPut.js';
import { decodeDoc, getDoc, getDocs } from './docs.js';
import type { Database } from './pouch.js';
import { liveLeaves } from './quorumWrites.js';
import { isConflict, isShortOfQuorum, isStored } from './storeErrors.js';

export interface EventStore {
  /** `stored` the first time, `duplicate` when an event with that id already exists. */
  append(event: NewEvent): Promise<'stored' | 'duplicate'>;
  /** Appends many in one write; each id reports `stored` or `duplicate` (already there). */
  appendMany(events: ReadonlyArray<NewEvent>): Promise<Map<string, 'stored' | 'duplicate'>>;
  get(eventId: string): Promise<EventDoc | undefined>;
  /** The events among `eventIds` that exist, by id. */
  getMany(eventIds: ReadonlyArray<string>): Promise<Map<string, EventDoc>>;
  /** Every event of one aspect, for conflict resolution. */
  ofAspect(aspect: string): Promise<EventDoc[]>;
}

export const eventStore = (db: Database): EventStore => {
  /**
   * After a write short of its quorum (a cluster, decision 0023; the copy is withdrawn), whether the
   * event is stored all the same: another instance stored it at the same moment, and that write
   * reached the quorum. False for any other failure.
   */
  const storedByAnother = async (failure: unknown, id: string): Promise<boolean> =>
    isShortOfQuorum(failure) && (await hasLiveLeaf(id));
  // Every leaf (`open_revs=all`), not the winner a plain read answers: with a node down, a copy that
  // took only the withdrawn write answers "deleted" while the copy that stands is on another node. A
  // live leaf of another writer stays: its writer withdraws only below a leaf that sorts higher, which
  // stays in turn (`quorumWrites.ts`, `keep: 'winner'`).
  const hasLiveLeaf = async (id: string): Promise<boolean> =>
    liveLeaves(await db.get(id, { open_revs: 'all' }).catch(() => undefined)).length > 0;
  return {
    async append(event) {
      const doc = toEventDoc(event);
      try {
        await putBatched(db, doc);
        return 'stored';
      } catch (e) {
        if (isConflict(e) || (await storedByAnother(e, doc._id))) return 'duplicate';
        throw e;
      }
    },
    async appendMany(events) {
      const out = new Map<string, 'stored' | 'duplicate'>();
      if (events.length === 0) return out;
      const results = await db.bulkDocs(events.map(toEventDoc));
      for (const [i, r] of results.entries()) {
        const event = events[i];
        if (event === undefined) continue;
        if (isStored(r)) out.set(event.eventId, 'stored');
        else if (isConflict(r) || (await storedByAnother(r, eventDocId(event.eventId))))
          out.set(event.eventId, 'duplicate');
        else throw new Error(`event write failed: ${r.name ?? 'unknown'}`, { cause: r });
      }
      return out;
    },
    get: (eventId) => getDoc(db, EventDoc, eventDocId(eventId)),
    async getMany(eventIds) {
      const docs: EventDoc[] = await getDocs(db, EventDoc, eventIds.map(eventDocId));
      return new Map(docs.map((d) => [d.eventId, d]));
    },
    async ofAspect(aspect) {
      const found = await db.find({ selector: { aspect }, limit: 100_000, use_index: 'idx-by-aspect' });
      return found.docs.map((d) => decodeDoc(EventDoc, d._id, d));
    },
  };
};
