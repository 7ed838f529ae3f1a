/**
 * The event store's write side: events are created once and never changed by the service's requests;
 * appending the same event id twice stores it once. Retention (decision 0045) is the one exception, by
 * two marked writes the pipeline knows (decision 0063): an event past its period is retired (a tombstone marked
 * `retired`, nothing of the event left in it), and the events of an anonymised student keep their
 * envelope but lose the personal values of their payload (marked `anonymisedAt`).
 */
import * as E from 'fp-ts/lib/Either.js';
import { EventDoc, eventDocId, isRetiredEvent, type NewEvent, RETIRED, toEventDoc } from '../domain/event.js';
import { putBatched } from './batchedPut.js';
import { decodeDoc, getDoc, getDocs } from './docs.js';
import { sentAgainAfterSilence } from './docWrites.js';
import { indexIn } from './indexes.js';
import type { Database } from './pouch.js';
import { liveLeaves } from './quorumWrites.js';
import { removeEach, rewriteEach } from './rewrites.js';
import { isConflict, isShortOfQuorum, isStored } from './storeErrors.js';

export interface EventStore {
  /** `stored` the first time, `duplicate` when an event with that id already exists. */
  append(event: NewEvent): Promise<'stored' | 'duplicate'>;
  /**
   * Appends many, `EVENTS_PER_WRITE` a bulk write; each id reports `stored` or `duplicate` (already
   * there). The writes go one after the other in the given order, unless no two events share a
   * subject or an aspect (`independent`): then `EVENT_WRITES_AT_ONCE` go at once.
   */
  appendMany(events: ReadonlyArray<NewEvent>): Promise<Map<string, 'stored' | 'duplicate'>>;
  get(eventId: string): Promise<EventDoc | undefined>;
  /** The events among `eventIds` that exist, by id. */
  getMany(eventIds: ReadonlyArray<string>): Promise<Map<string, EventDoc>>;
  /** Every event of one aspect, for conflict resolution. */
  ofAspect(aspect: string): Promise<EventDoc[]>;
  /**
   * Gives each event among `eventIds` not anonymised yet the payload `anonymise` makes of its own,
   * marked `anonymisedAt: at`; the envelope (ids, kind, actor, times) stays. Answers how many it wrote.
   */
  anonymise(
    eventIds: ReadonlyArray<string>,
    anonymise: (payload: Readonly<Record<string, unknown>>) => Record<string, unknown>,
    at: string,
  ): Promise<number>;
  /** Retires the events among `eventIds` (a tombstone marked `retired`); answers how many it retired. */
  retire(eventIds: ReadonlyArray<string>, at: string): Promise<number>;
  /** Which of `eventIds` were retired: a tablet pushing one again must be told the server has it. */
  retiredAmong(eventIds: ReadonlyArray<string>): Promise<Set<string>>;
}

/**
 * Events per bulk write. With CouchDB's guard, which ran in its JavaScript engine for each document,
 * 500 events took 1.5 to 3 s in one request on a busy 2-core machine, near the store's 5 s silence
 * limit (issue #41). Without it (decision 0063) one write of an import batch's 500 measured cheaper
 * beside heavy load, but the import sent again after a failed write answered 503 once in four runs on
 * the test server (express-pouchdb, in the test's process): kept at 100 until measured on a quiet
 * machine.
 */
export const EVENTS_PER_WRITE = 100;
/**
 * Bulk writes at once for independent events (one per child), when a call holds more than one write.
 * Several writes at once used several of CouchDB's JavaScript engine processes while the guard ran
 * (decision 0057); without it, they still overlap one write's round trip with another's work.
 */
export const EVENT_WRITES_AT_ONCE = 4;

/**
 * Whether no two events share a subject or an aspect: the order among them is then no one's to keep.
 * The pipeline and conflict resolution order the events of one aspect (or one subject) only.
 */
export const independent = (events: ReadonlyArray<NewEvent>): boolean => {
  const seen = new Set<string>();
  for (const e of events) {
    const keys = [
      `subject ${e.subjectType} ${e.subjectId}`,
      ...(e.aspect === undefined ? [] : [`aspect ${e.aspect}`]),
    ];
    for (const key of keys) {
      if (seen.has(key)) return false;
      seen.add(key);
    }
  }
  return true;
};

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
      const parts: Array<ReadonlyArray<NewEvent>> = [];
      for (let from = 0; from < events.length; from += EVENTS_PER_WRITE)
        parts.push(events.slice(from, from + EVENTS_PER_WRITE));
      // Each part's outcomes, joined in the order given at the end whichever write ended first.
      const outcomes = parts.map(() => new Map<string, 'stored' | 'duplicate'>());
      const write = async (k: number) => {
        const part = parts[k] ?? [];
        const out = outcomes[k] ?? new Map<string, 'stored' | 'duplicate'>();
        // Sent again after a cut answer, an event stored by the first send answers a conflict: a duplicate.
        const { result: results } = await sentAgainAfterSilence(() => db.bulkDocs(part.map(toEventDoc)));
        for (const [i, r] of results.entries()) {
          const event = part[i];
          if (event === undefined) continue;
          if (isStored(r)) out.set(event.eventId, 'stored');
          else if (isConflict(r) || (await storedByAnother(r, eventDocId(event.eventId))))
            out.set(event.eventId, 'duplicate');
          else throw new Error(`event write failed: ${r.name ?? 'unknown'}`, { cause: r });
        }
      };
      // Events of one subject or aspect: one write at a time, in the order given, so a later one is
      // never stored before an earlier one was, as when the call was a single write.
      const atOnce = parts.length > 1 && independent(events) ? EVENT_WRITES_AT_ONCE : 1;
      let next = 0;
      let failed = false;
      const worker = async () => {
        for (let k = next++; k < parts.length && !failed; k = next++)
          await write(k).catch((e: unknown) => {
            failed = true;
            throw e;
          });
      };
      // A failed write fails the call once the writes under way have ended (no new one starts): none
      // is left running behind the answer.
      const ended = await Promise.allSettled(Array.from({ length: atOnce }, worker));
      for (const e of ended) if (e.status === 'rejected') throw e.reason;
      return new Map(outcomes.flatMap((o) => [...o]));
    },
    get: (eventId) => getDoc(db, EventDoc, eventDocId(eventId)),
    async getMany(eventIds) {
      const docs: EventDoc[] = await getDocs(db, EventDoc, eventIds.map(eventDocId));
      return new Map(docs.map((d) => [d.eventId, d]));
    },
    async ofAspect(aspect) {
      const found = await db.find({
        selector: { aspect },
        limit: 100_000,
        use_index: indexIn(db, 'by-aspect'),
      });
      return found.docs.map((d) => decodeDoc(EventDoc, d._id, d));
    },
    anonymise: (eventIds, anonymise, at) =>
      rewriteEach(db, eventIds.map(eventDocId), (doc) => {
        const event = EventDoc.decode(doc);
        // Another kind of document under an event's id is not this store's to rewrite.
        if (E.isLeft(event) || typeof doc.anonymisedAt === 'string') return undefined;
        return { ...doc, payload: anonymise(event.right.payload), anonymisedAt: at };
      }),
    retire: (eventIds, at) => removeEach(db, eventIds.map(eventDocId), { retired: RETIRED, retiredAt: at }),
    async retiredAmong(eventIds) {
      const out = new Set<string>();
      if (eventIds.length === 0) return out;
      const rows = (await db.allDocs({ keys: eventIds.map(eventDocId) })).rows;
      const deleted = rows.flatMap((row) =>
        'error' in row || row.value.deleted !== true ? [] : [{ id: row.id, rev: row.value.rev }],
      );
      if (deleted.length === 0) return out;
      // A tombstone's body says why it is one: retired, or a copy withdrawn short of its quorum.
      const got = await db.bulkGet({ docs: deleted });
      for (const result of got.results)
        for (const answer of result.docs)
          if ('ok' in answer && isRetiredEvent(answer.ok)) out.add(result.id.slice(EVENT_PREFIX.length));
      return out;
    },
  };
};

const EVENT_PREFIX = eventDocId('');
