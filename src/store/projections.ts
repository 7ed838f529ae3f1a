import canonicalize from 'canonicalize';
/**
 * The projections database: aspect documents, conflict records and quarantined event ids written by
 * the event pipeline, and the pipeline's checkpoint. Writes are compare-and-swap on each document's
 * revision; a batch that meets a concurrent writer (a second instance on the same CouchDB) reports
 * `CONFLICT` and the pipeline runs it again from fresh reads, which is safe because every document
 * here is a function of the events alone.
 */
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import { decodeChange } from '../domain/eventTypes.js';
import {
  type AdmissionException,
  AspectDoc,
  admissionExceptionDocId,
  aspectDocId,
  ConflictDoc,
  conflictDocId,
  QuarantineDoc,
  quarantineDocId,
  type StoredAspectEvent,
} from '../domain/projection.js';
import {
  type AspectEventRecord,
  type AspectProjection,
  type ConflictRecordFull,
  kindOfAspect,
  projectAspect,
} from '../rules/projections.js';
import { type DocCache, forgetChanged, noDocCache, weighedCache } from './docCache.js';
import { decodeDoc, getDocs, UndecodableDocument } from './docs.js';
import { indexIn } from './indexes.js';
import type { Database } from './pouch.js';
import { removeEach, rewriteEach } from './rewrites.js';
import { isConflict, isNotFound, isStored } from './storeErrors.js';

const CHECKPOINT_ID = '_local/event-pipeline';
/**
 * The most aspect events the cache holds, over all its aspects (about 0.5 KB each in the heap). An
 * aspect holds every event of its subject (a child checked in and out sixty-five times at one session
 * holds 130; a child-day re-marked at every sync of the soak, 33), so the bound of 20,000 aspects it
 * had bounded nothing: ten minutes of soak cached some 67,000 events, and the live heap grew with
 * them (64 → 81 MB). 5,000 holds what a door works on (a session of a few hundred children, one or
 * two events each) and the pages the pipeline projects; an aspect not held is read from the store.
 */
export const MAX_CACHED_ASPECT_EVENTS = 5_000;
/**
 * pouchdb-find fetches a page's documents with `allDocs({ keys })`, which PouchDB's LevelDB adapter
 * answers with one iterator per key, all started at once: pages of 500 were 500 concurrent LevelDB
 * reads (460 in flight in a heap snapshot of the ten-minute soak), whose native memory malloc kept
 * (+10 MB over the run; reliability.md). 50 keeps a page's burst small.
 */
const AspectPage = 50;
const Checkpoint = t.type({ _id: t.string, _rev: t.string, seq: t.union([t.string, t.number]) });

/**
 * A selector for the times after `at`. pouchdb-find (the embedded store, express-pouchdb) reads `$gt`
 * on an index's last field from `at` itself and drops the rows equal to it after applying its limit:
 * a limit no larger than `at`'s records answered nothing. The server's times are ISO instants to the
 * millisecond, so the next millisecond is the same bound as a plain start key, on every backend. A
 * time of another form keeps `$gt` (CouchDB's Mango reads it right).
 */
export const laterThan = (at: string): Record<string, string> => {
  const ms = Date.parse(at);
  return Number.isFinite(ms) && new Date(ms).toISOString() === at
    ? { $gte: new Date(ms + 1).toISOString() }
    : { $gt: at };
};

export interface LoadedAspect {
  /** The winning revision, the one a commit writes on. */
  readonly rev: string;
  /** Every event the document holds: on a fork, those of all its live leaves. */
  readonly events: ReadonlyArray<AspectEventRecord>;
  /**
   * Live leaves beside the winning revision: two pipelines committed the aspect on different copies
   * of a cluster at once, a write that lost on the quorum having landed on one copy (decision 0038).
   * `events` merges theirs with the winner's (`winnerEvents`); the next commit writes the merge on
   * `rev` and deletes these leaves, so no event one of them holds is lost to the winner.
   */
  readonly fork?: {
    readonly revs: ReadonlyArray<string>;
    readonly winnerEvents: ReadonlyArray<AspectEventRecord>;
  };
}

export interface ProjectionWrite {
  readonly aspects: ReadonlyArray<{
    readonly projection: AspectProjection;
    readonly rev: string | undefined;
    /** The losing leaves of a forked aspect (`LoadedAspect.fork`), deleted with the commit. */
    readonly forks?: ReadonlyArray<string>;
  }>;
  /**
   * Every conflict record the batch's aspects hold, written where the stored one differs or is
   * missing. All of them, not only those the batch changed: the records and the aspect are written in
   * one `_bulk_docs`, which is no transaction, so an attempt whose aspect write lost may still have
   * put its records over a newer writer's; whichever pipeline next projects the aspect puts them right.
   */
  readonly conflicts: ReadonlyArray<ConflictRecordFull>;
  /** The other events of those aspects, no losers: a conflict record stored for one is removed. */
  readonly noConflict: ReadonlyArray<string>;
}

export interface Quarantine {
  readonly docId: string;
  readonly reason: string;
}

/** A quarantine as stored: `detectedAt` is undefined for a record from before it was kept. */
export interface StoredQuarantine extends Quarantine {
  readonly detectedAt: string | undefined;
  /** This call stored it (not a replay, nor another instance's earlier detection). */
  readonly firstDetected: boolean;
}

export interface ConflictQuery {
  readonly from?: string;
  readonly to?: string;
  readonly subjectId?: string;
  /** Keyset: `[detectedAt, _id]` of the last record of the previous page. */
  readonly after?: readonly [string, string];
  readonly limit: number;
}

export interface ProjectionStore {
  /** The aspects as stored; `fresh` reads them from the store, not from what this process holds. */
  loadAspects(
    aspects: ReadonlyArray<string>,
    options?: { readonly fresh?: boolean },
  ): Promise<Map<string, LoadedAspect>>;
  /** The aspects as they stand, projected from their stored events; absent ones are left out. */
  project(aspects: ReadonlyArray<string>): Promise<Map<string, AspectProjection>>;
  /**
   * Every aspect whose name starts with `prefix` (`checkin:<sessionId>:`, a session's check-ins), as
   * it stands: one range read of the ids, which sort by aspect name.
   */
  projectPrefix(prefix: string): Promise<AspectProjection[]>;
  commit(write: ProjectionWrite): Promise<'OK' | 'CONFLICT'>;
  checkpoint(): Promise<string | number>;
  saveCheckpoint(seq: string | number): Promise<void>;
  /**
   * Aspect documents of one kind whose day lies in [fromDay, toDay], handed to `visit` a page at a
   * time (each aspect once): memory stays bounded by the page, where reading ten thousand aspects at
   * once did not, so callers keep only what they need of each.
   */
  eachAspectByDay(
    kind: string,
    fromDay: string,
    toDay: string,
    visit: (doc: AspectDoc) => void,
  ): Promise<void>;
  conflicts(query: ConflictQuery): Promise<ConflictDoc[]>;
  /**
   * Keeps what the admission rule found of offline check-ins on arrival, one record per event. A
   * resend writes the same record again (built from the stored event), which changes nothing.
   */
  recordAdmissionExceptions(exceptions: ReadonlyArray<AdmissionException>): Promise<void>;
  quarantined(): Promise<QuarantineDoc[]>;
  /**
   * Stores each quarantine unless it is already stored (first writer wins, on every instance) and
   * returns each as stored, with the time it was first detected.
   */
  recordQuarantines(found: ReadonlyArray<Quarantine>, at: string): Promise<StoredQuarantine[]>;
  /**
   * The aspects behind projection documents the feed showed with several leaves: an aspect document
   * names its own; a conflict record still forked names the aspect whose commit rewrites it.
   */
  forkedAspects(docIds: ReadonlyArray<string>): Promise<string[]>;
  /**
   * Settles the quarantine records among `docIds` that two pipelines stored at once on a cluster,
   * each with its own detection time (a fork): every leaf but the first detection's is deleted.
   * Answers how many leaves it deleted (none when another instance got there first).
   */
  settleQuarantineForks(docIds: ReadonlyArray<string>): Promise<number>;
  /** Removes every projection and the checkpoint, so the pipeline rebuilds from the first event. */
  reset(): Promise<void>;
}

/**
 * What retention (decision 0045) ends in the projections, through the same store (its cache forgets
 * what it changes). The pipeline never calls these; a batch that meets one of their writes is a
 * compare-and-swap conflict like another instance's, and is redone from fresh reads.
 */
export interface ProjectionRetention {
  /**
   * Retention (0045): removes the aspects and what was derived from their events (conflict records,
   * the admission rule's exceptions), the aspect document last, so a run cut short finds the aspect
   * again and finishes. Answers how many aspects it removed.
   */
  retireAspects(aspects: ReadonlyArray<string>): Promise<number>;
  /**
   * Retention (0045): rewrites each aspect with every event's payload as `anonymise` makes it, and the
   * value folded again from them. Answers how many aspects it rewrote (one unchanged is not).
   */
  anonymiseAspects(
    aspects: ReadonlyArray<string>,
    anonymise: (payload: Readonly<Record<string, unknown>>) => Record<string, unknown>,
  ): Promise<number>;
  /** Retention (0045): removes the admission rule's exceptions of these events. */
  removeAdmissionExceptions(eventIds: ReadonlyArray<string>): Promise<number>;
}

export const toStoredEvent = (e: AspectEventRecord): StoredAspectEvent => ({
  eventId: e.eventId,
  type: e.type,
  baseVersion: e.baseVersion,
  subjectId: e.subjectId,
  userId: e.userId,
  role: e.role,
  deviceId: e.deviceId,
  clientTimestamp: e.clientTimestamp,
  serverTimestamp: e.serverTimestamp,
  payload: { ...e.payload },
});

export const fromStoredEvent = (s: StoredAspectEvent): AspectEventRecord | undefined => {
  const change = decodeChange(s.type, s.payload);
  return change === undefined
    ? undefined
    : {
        eventId: s.eventId,
        baseVersion: s.baseVersion,
        subjectId: s.subjectId,
        userId: s.userId,
        role: s.role,
        deviceId: s.deviceId,
        clientTimestamp: s.clientTimestamp,
        serverTimestamp: s.serverTimestamp,
        type: s.type,
        payload: s.payload,
        change,
      };
};

/** An aspect document's projection, recomputed from its stored events (never the stored value). */
export const projectionOfDoc = (doc: AspectDoc): AspectProjection | undefined => {
  const kind = kindOfAspect(doc.aspect);
  if (kind === undefined) return undefined;
  const events = doc.events.flatMap((s) => {
    const r = fromStoredEvent(s);
    return r === undefined ? [] : [r];
  });
  return projectAspect(doc.aspect, kind, events, []);
};

const dayOf = (p: AspectProjection): string => {
  const state = p.state;
  if (state?.kind === 'attendance') return state.day;
  // A check-in aspect and a student field sort by the day of their first event.
  return p.events[0]?.clientTimestamp.slice(0, 10) ?? '';
};

const sessionOf = (p: AspectProjection): string | null => {
  const state = p.state;
  if (state?.kind === 'attendance') return state.sessionId;
  if (state?.kind === 'checkin') return state.sessionId;
  return null;
};

const aspectDocBody = (p: AspectProjection) => ({
  _id: aspectDocId(p.aspect),
  docType: 'aspect' as const,
  aspect: p.aspect,
  kind: p.kind,
  subjectId: p.subjectId,
  sessionId: sessionOf(p),
  day: dayOf(p),
  events: p.events.map(toStoredEvent),
  applied: [...p.applied],
  superseded: [...p.superseded],
  waiting: [...p.waiting],
  version: p.version,
  state: p.state,
});

const conflictDocBody = (c: ConflictRecordFull) => ({
  _id: conflictDocId(c.loser.eventId),
  docType: 'conflict' as const,
  aspect: c.aspect,
  kind: c.kind,
  subjectId: c.subjectId,
  policy: c.policy,
  winner: c.winner,
  loser: c.loser,
  detectedAt: c.detectedAt,
});

const ConflictingLeaves = t.type({ _conflicts: t.array(t.string) });

/** The live leaves beside the winner that a document read with `conflicts: true` names. */
const conflictingRevs = (doc: unknown): ReadonlyArray<string> =>
  ConflictingLeaves.is(doc) ? doc._conflicts : [];

interface StoredConflictDoc {
  readonly rev: string;
  readonly body: string | undefined;
  /** Its other live leaves (a fork, decision 0038), deleted by the commit that reads them. */
  readonly forks: ReadonlyArray<string>;
}

/**
 * The stored conflict records of the given ids, each as its revision and its body in canonical form
 * (compared with the body a commit means to store); absent and deleted ids are left out.
 */
const conflictDocs = async (
  db: Database,
  ids: ReadonlyArray<string>,
): Promise<Map<string, StoredConflictDoc>> => {
  const out = new Map<string, StoredConflictDoc>();
  if (ids.length === 0) return out;
  const res = await db.allDocs({ keys: [...ids], include_docs: true, conflicts: true });
  for (const row of res.rows) {
    if ('error' in row || row.value.deleted === true) continue;
    const doc: unknown = row.doc;
    const body =
      typeof doc === 'object' && doc !== null
        ? Object.fromEntries(Object.entries(doc).filter(([k]) => k !== '_rev' && k !== '_conflicts'))
        : undefined;
    out.set(row.id, { rev: row.value.rev, body: canonicalize(body), forks: conflictingRevs(doc) });
  }
  return out;
};

/** The events an aspect document holds; a stored event this code cannot read makes it undecodable. */
const eventsOfDoc = (doc: AspectDoc): AspectEventRecord[] =>
  doc.events.map((s) => {
    const record = fromStoredEvent(s);
    if (record === undefined) throw new UndecodableDocument(doc._id);
    return record;
  });

/**
 * The live losing leaves of forked documents (aspects, quarantine records), by document id, decoded
 * with `codec` (`_bulk_get` of the revisions their winners name). A leaf deleted since it was named is
 * no longer part of the fork.
 */
const forkLeaves = async <C extends t.Mixed>(
  db: Database,
  forked: ReadonlyArray<{ readonly id: string; readonly rev: string }>,
  codec: C,
): Promise<Map<string, Array<t.TypeOf<C>>>> => {
  const out = new Map<string, Array<t.TypeOf<C>>>();
  if (forked.length === 0) return out;
  const got = await db.bulkGet({ docs: forked.map(({ id, rev }) => ({ id, rev })) });
  for (const result of got.results)
    for (const answer of result.docs) {
      if (!('ok' in answer)) continue;
      const doc: unknown = answer.ok;
      if (Reflect.get(Object(doc), '_deleted') === true) continue;
      out.set(result.id, [...(out.get(result.id) ?? []), decodeDoc(codec, result.id, doc)]);
    }
  return out;
};

/**
 * What the projections' change feed tells an aspect cache where other instances' pipelines commit too:
 * the aspect a change names is forgotten unless the cache holds that very revision (this pipeline's
 * own commit coming back).
 */
export const aspectChanged = (
  cache: DocCache<LoadedAspect>,
  change: { readonly id: string; readonly rev?: string; readonly leaves?: number },
): void => {
  if (!change.id.startsWith(ASPECT_PREFIX)) return;
  const aspect = change.id.slice(ASPECT_PREFIX.length);
  // Several leaves: the revision held may be a losing one, which a commit would extend (decision 0038).
  if ((change.leaves ?? 1) > 1) cache.forget(aspect);
  else forgetChanged(cache, aspect, change.rev, (a) => a.rev);
};
const ASPECT_PREFIX = aspectDocId('');
const CONFLICT_PREFIX = conflictDocId('');

/**
 * `entries` holds aspects as this process last read or wrote them (see decision 0019). Where other
 * instances' pipelines commit too (CouchDB), the projections' change feed forgets what they change
 * (`aspectChanged`). A commit that meets a conflict forgets its aspects, so the retry reads the store. It holds at most `maxCachedEvents`
 * events in all, whatever bound on entries it has of its own.
 */
export const projectionStore = (
  db: Database,
  entries: DocCache<LoadedAspect> = noDocCache(),
  maxCachedEvents: number = MAX_CACHED_ASPECT_EVENTS,
): ProjectionStore & ProjectionRetention => {
  const cache = weighedCache(entries, (a) => a.events.length, maxCachedEvents);
  const UNKNOWN = Symbol('unknown');
  /** The checkpoint's revision as this store last wrote it (undefined: none stored). */
  let checkpointRev: string | undefined | typeof UNKNOWN = UNKNOWN;
  const store: ProjectionStore & ProjectionRetention = {
    async project(aspects) {
      const out = new Map<string, AspectProjection>();
      for (const [aspect, a] of await store.loadAspects(aspects)) {
        const kind = kindOfAspect(aspect);
        if (kind !== undefined) out.set(aspect, projectAspect(aspect, kind, a.events, []));
      }
      return out;
    },

    async projectPrefix(prefix) {
      const from = aspectDocId(prefix);
      const res = await db.allDocs({ startkey: from, endkey: `${from}\ufff0`, include_docs: true });
      return res.rows.flatMap((row) => {
        const doc = row.doc === undefined ? undefined : decodeDoc(AspectDoc, row.id, row.doc);
        const p = doc === undefined ? undefined : projectionOfDoc(doc);
        return p === undefined ? [] : [p];
      });
    },

    loadAspects: (aspects, options = {}) => {
      if (options.fresh === true) for (const aspect of aspects) cache.forget(aspect);
      return cache.readMany(aspects, async (missing) => {
        const found = new Map<string, LoadedAspect>();
        const docs: AspectDoc[] = await getDocs(db, AspectDoc, missing.map(aspectDocId), { conflicts: true });
        // Forks are rare (a cluster, two pipelines, one aspect, the same moment): the read that finds
        // none costs nothing more than the plain one.
        const leaves = await forkLeaves(
          db,
          docs.flatMap((doc) => conflictingRevs(doc).map((rev) => ({ id: doc._id, rev }))),
          AspectDoc,
        );
        for (const doc of docs) {
          const events = eventsOfDoc(doc);
          const others = leaves.get(doc._id) ?? [];
          if (others.length === 0) {
            found.set(doc.aspect, { rev: doc._rev, events });
            continue;
          }
          // The winner's copy of an event last: the copy the store settled on is read there first.
          const merged = new Map<string, AspectEventRecord>();
          for (const e of [...others.flatMap(eventsOfDoc), ...events]) merged.set(e.eventId, e);
          found.set(doc.aspect, {
            rev: doc._rev,
            events: [...merged.values()],
            fork: { revs: others.map((o) => o._rev), winnerEvents: events },
          });
        }
        return found;
      });
    },

    async commit(write) {
      // Aspects without a loser (nearly every check-in) have no record to compare or remove, so the
      // read is skipped (issue #23: one `_all_docs` per commit). Being a loser is monotonic in the
      // event set (`conflicts.ts`: a group of events on one base only grows, and only a newcomer can
      // become its winner), so a record of one of these events can only come from an attempt that
      // held events this one lacks; that attempt's retry or replay, or this pipeline once it projects
      // those events (then with losers, and reading), puts the records right.
      const stored =
        write.conflicts.length === 0
          ? new Map<string, StoredConflictDoc>()
          : await conflictDocs(db, [
              ...write.conflicts.map((c) => conflictDocId(c.loser.eventId)),
              ...write.noConflict.map(conflictDocId),
            ]);
      const docs: Array<{ readonly _id: string; readonly _rev?: string; readonly _deleted?: boolean }> = [
        ...write.aspects.map(({ projection, rev }) => ({
          ...aspectDocBody(projection),
          ...(rev === undefined ? {} : { _rev: rev }),
        })),
        ...write.aspects.flatMap(({ projection, forks }) =>
          (forks ?? []).map((rev) => ({ _id: aspectDocId(projection.aspect), _rev: rev, _deleted: true })),
        ),
        ...write.conflicts.flatMap((c): Array<{ readonly _id: string; readonly _rev?: string }> => {
          const body = conflictDocBody(c);
          const now = stored.get(body._id);
          if (now === undefined) return [body];
          const forks = now.forks.map((rev) => ({ _id: body._id, _rev: rev, _deleted: true }));
          return now.body === canonicalize(body) ? forks : [{ ...body, _rev: now.rev }, ...forks];
        }),
        ...write.noConflict.flatMap((loser) => {
          const now = stored.get(conflictDocId(loser));
          return now === undefined ? [] : [{ _id: conflictDocId(loser), _rev: now.rev, _deleted: true }];
        }),
      ];
      if (docs.length === 0) return 'OK';
      const written = write.aspects.map((a) => a.projection.aspect);
      for (const aspect of written) cache.forget(aspect);
      const results = await db.bulkDocs(docs).catch((e: unknown) => {
        for (const aspect of written) cache.forget(aspect);
        throw e;
      });
      let conflicted = false;
      for (const r of results) {
        if (isStored(r)) continue;
        if (isConflict(r)) conflicted = true;
        else {
          for (const aspect of written) cache.forget(aspect);
          throw new Error(`projection write failed: ${r.name ?? 'unknown'} ${r.message ?? ''}`);
        }
      }
      // Aspect documents come first in `docs`, so their results are the first ones, in order.
      write.aspects.forEach(({ projection }, i) => {
        const r = results[i];
        if (r !== undefined && 'ok' in r && r.ok === true)
          cache.remember(projection.aspect, { rev: r.rev, events: projection.events });
        else cache.forget(projection.aspect);
      });
      return conflicted ? 'CONFLICT' : 'OK';
    },

    async checkpoint() {
      const doc: unknown = await db.get(CHECKPOINT_ID).catch((e: unknown) => {
        if (isNotFound(e)) return undefined;
        throw e;
      });
      if (doc === undefined) return 0;
      const decoded = Checkpoint.decode(doc);
      if (E.isLeft(decoded)) throw new UndecodableDocument(CHECKPOINT_ID);
      return decoded.right.seq;
    },

    async saveCheckpoint(seq) {
      for (let attempt = 0; attempt < 5; attempt += 1) {
        // The revision this store last wrote, while nothing says it moved: one request per batch instead
        // of two. Another writer (a second instance, a reset) makes the put a 409, and the retry reads.
        let rev = checkpointRev;
        if (rev === UNKNOWN) {
          const current: unknown = await db.get(CHECKPOINT_ID).catch((e: unknown) => {
            if (isNotFound(e)) return undefined;
            throw e;
          });
          const decoded = current === undefined ? undefined : Checkpoint.decode(current);
          rev = decoded !== undefined && E.isRight(decoded) ? decoded.right._rev : undefined;
        }
        checkpointRev = UNKNOWN;
        try {
          const r = await db.put({ _id: CHECKPOINT_ID, ...(rev === undefined ? {} : { _rev: rev }), seq });
          checkpointRev = r.rev;
          return;
        } catch (e) {
          if (!isConflict(e)) throw e;
        }
      }
      throw new Error('the pipeline checkpoint stayed contended');
    },

    async eachAspectByDay(kind, fromDay, toDay, visit) {
      const seen = new Set<string>();
      // Pages by offset in index order; an aspect created meanwhile can shift one already visited
      // into the next page, and `seen` skips it (aspects are never deleted but by a reset).
      for (let skip = 0; ; skip += AspectPage) {
        const found = await db.find({
          selector: { docType: 'aspect', kind, day: { $gte: fromDay, $lte: toDay } },
          limit: AspectPage,
          skip,
          use_index: indexIn(db, 'by-docType-kind-day'),
        });
        for (const d of found.docs) {
          if (seen.has(d._id)) continue;
          seen.add(d._id);
          visit(decodeDoc(AspectDoc, d._id, d));
        }
        if (found.docs.length < AspectPage) return;
      }
    },

    async forkedAspects(docIds) {
      const aspects = new Set<string>();
      const records: string[] = [];
      for (const id of docIds)
        if (id.startsWith(ASPECT_PREFIX)) aspects.add(id.slice(ASPECT_PREFIX.length));
        else if (id.startsWith(CONFLICT_PREFIX)) records.push(id);
      if (records.length > 0) {
        const res = await db.allDocs({ keys: records, include_docs: true, conflicts: true });
        for (const row of res.rows) {
          const doc: unknown = 'error' in row ? undefined : row.doc;
          const aspect: unknown = Reflect.get(Object(doc), 'aspect');
          if (conflictingRevs(doc).length > 0 && typeof aspect === 'string') aspects.add(aspect);
        }
      }
      return [...aspects];
    },

    async settleQuarantineForks(docIds) {
      const prefix = quarantineDocId('');
      const ids = [...new Set(docIds.filter((id) => id.startsWith(prefix)))];
      if (ids.length === 0) return 0;
      const res = await db.allDocs({ keys: ids, include_docs: true, conflicts: true });
      const forked = res.rows.flatMap((row) =>
        'error' in row || row.value.deleted === true || conflictingRevs(row.doc).length === 0
          ? []
          : [
              {
                id: row.id,
                winner: decodeDoc(QuarantineDoc, row.id, row.doc),
                revs: conflictingRevs(row.doc),
              },
            ],
      );
      if (forked.length === 0) return 0;
      const losers = await forkLeaves(
        db,
        forked.flatMap((f) => f.revs.map((rev) => ({ id: f.id, rev }))),
        QuarantineDoc,
      );
      // The first detection stays: its time is the one the audit entry's claim holds (a record from
      // before detection times were kept sorts first, as the oldest).
      const first = (a: QuarantineDoc, b: QuarantineDoc) =>
        (a.detectedAt ?? '') < (b.detectedAt ?? '') ||
        ((a.detectedAt ?? '') === (b.detectedAt ?? '') && a._rev < b._rev);
      const deletions = forked.flatMap(({ id, winner }) => {
        const leaves = [winner, ...(losers.get(id) ?? [])];
        const kept = leaves.reduce((k, leaf) => (first(leaf, k) ? leaf : k));
        return leaves.filter((l) => l !== kept).map((l) => ({ _id: id, _rev: l._rev, _deleted: true }));
      });
      if (deletions.length === 0) return 0;
      const results = await db.bulkDocs(deletions);
      // A leaf another instance deleted first is a 409 here: settled all the same.
      const failed = results.find((r) => !isStored(r) && !isConflict(r));
      if (failed !== undefined)
        throw new Error(`quarantine fork not settled: ${'name' in failed ? failed.name : 'unknown'}`);
      return results.filter(isStored).length;
    },

    async recordAdmissionExceptions(exceptions) {
      const results = await db.bulkDocs(
        exceptions.map((e) => ({
          _id: admissionExceptionDocId(e.event.eventId),
          docType: 'conflict' as const,
          ...e,
        })),
      );
      const failed = results.find((r) => !isStored(r) && !isConflict(r));
      if (failed !== undefined)
        throw new Error(`admission exception not stored: ${'name' in failed ? failed.name : 'unknown'}`);
    },

    async conflicts(query) {
      const want = query.limit + 1;
      const bySubject = query.subjectId === undefined ? {} : { subjectId: query.subjectId };
      const until: Record<string, string> = query.to === undefined ? {} : { $lt: query.to };
      const sort: Array<Record<string, 'asc'>> = [{ docType: 'asc' }, { detectedAt: 'asc' }];
      const use_index = indexIn(db, 'by-docType-detectedAt');
      /** The records of a range of times, with their documents, in index order (time, then id). */
      const inRange = async (detectedAt: Record<string, string>, limit: number): Promise<ConflictDoc[]> => {
        if (limit <= 0) return [];
        const found = await db.find({
          selector: { docType: 'conflict', detectedAt, ...bySubject },
          sort,
          limit,
          use_index,
        });
        return found.docs.map((d) => decodeDoc(ConflictDoc, d._id, d));
      };
      const after = query.after;
      if (after === undefined) {
        return inRange({ $gte: query.from ?? '', ...until }, want);
      }
      const [at, afterId] = after;
      if (query.to !== undefined && at >= query.to) return [];
      // The rest of the cursor's instant, by id. A batch of events is stamped with one server time, so
      // an instant may hold a whole report: skipping to the cursor within it (as pages did) read every
      // record before it again, page after page (page 9 of 1,800 records of one instant took 24 times
      // the first on CouchDB). Its ids are read from the index alone (on CouchDB the index covers the
      // query: no document is read), then the page's documents by key.
      const ties: ConflictDoc[] = [];
      let lastId = afterId;
      let instantDone = false;
      while (!instantDone && ties.length < want) {
        const asked = want - ties.length;
        const ids = (
          await db.find({
            selector: { docType: 'conflict', detectedAt: at, _id: { $gt: lastId }, ...bySubject },
            fields: ['_id', 'docType', 'detectedAt'],
            sort,
            limit: asked,
            use_index,
          })
        ).docs.map((d) => d._id);
        // A record removed since the ids were read (retention) is left out, and the next ids read in
        // its place: the page stays full while the report goes on.
        ties.push(...(await getDocs(db, ConflictDoc, ids)));
        instantDone = ids.length < asked;
        lastId = ids.at(-1) ?? lastId;
      }
      const later =
        ties.length < want ? await inRange({ ...laterThan(at), ...until }, want - ties.length) : [];
      return [...ties, ...later];
    },

    async recordQuarantines(found, at) {
      if (found.length === 0) return [];
      const results = await db.bulkDocs(
        found.map((q) => ({
          _id: quarantineDocId(q.docId),
          docType: 'quarantine' as const,
          docId: q.docId,
          reason: q.reason,
          detectedAt: at,
        })),
      );
      return Promise.all(
        found.map(async (q, i): Promise<StoredQuarantine> => {
          const r = results[i];
          if (r !== undefined && isStored(r)) return { ...q, detectedAt: at, firstDetected: true };
          if (r === undefined || !isConflict(r))
            throw new Error(`quarantine write failed: ${r?.name ?? 'unknown'} ${r?.message ?? ''}`);
          // Stored before (a replay, or another instance): its first detection is the one that counts.
          const id = quarantineDocId(q.docId);
          const stored = decodeDoc(QuarantineDoc, id, await db.get(id));
          return {
            docId: stored.docId,
            reason: stored.reason,
            detectedAt: stored.detectedAt,
            firstDetected: false,
          };
        }),
      );
    },

    async quarantined() {
      const found = await db.find({ selector: { docType: 'quarantine' }, limit: 100_000 });
      return found.docs.map((d) => decodeDoc(QuarantineDoc, d._id, d));
    },

    async retireAspects(aspects) {
      for (const aspect of aspects) cache.forget(aspect);
      const ids = aspects.map(aspectDocId);
      const docs: AspectDoc[] = await getDocs(db, AspectDoc, ids);
      const eventIds = docs.flatMap((d) => d.events.map((e) => e.eventId));
      await removeEach(db, [...eventIds.map(conflictDocId), ...eventIds.map(admissionExceptionDocId)]);
      const retired = await removeEach(
        db,
        docs.map((d) => d._id),
      );
      for (const aspect of aspects) cache.forget(aspect);
      return retired;
    },

    async anonymiseAspects(aspects, anonymise) {
      for (const aspect of aspects) cache.forget(aspect);
      const rewritten = await rewriteEach(db, aspects.map(aspectDocId), (raw) => {
        const decoded = AspectDoc.decode(raw);
        if (E.isLeft(decoded)) return undefined;
        const doc = decoded.right;
        const kind = kindOfAspect(doc.aspect);
        if (kind === undefined) return undefined;
        const events = eventsOfDoc({
          ...doc,
          events: doc.events.map((e) => ({ ...e, payload: anonymise(e.payload) })),
        });
        const { _id: _i, ...body } = aspectDocBody(projectAspect(doc.aspect, kind, events, []));
        const { _id: _d, _rev: _r, ...before } = doc;
        return canonicalize(body) === canonicalize(before) ? undefined : body;
      });
      for (const aspect of aspects) cache.forget(aspect);
      return rewritten;
    },

    removeAdmissionExceptions: (eventIds) => removeEach(db, eventIds.map(admissionExceptionDocId)),

    async reset() {
      cache.clear();
      for (;;) {
        const page = await db.allDocs({ limit: 500 });
        const docs = page.rows.filter((r) => !r.id.startsWith('_design/'));
        if (docs.length === 0) break;
        await db.bulkDocs(docs.map((r) => ({ _id: r.id, _rev: r.value.rev, _deleted: true })));
      }
      const checkpoint: unknown = await db.get(CHECKPOINT_ID).catch(() => undefined);
      const decoded = checkpoint === undefined ? undefined : Checkpoint.decode(checkpoint);
      checkpointRev = UNKNOWN;
      if (decoded !== undefined && E.isRight(decoded)) await db.remove(CHECKPOINT_ID, decoded.right._rev);
      cache.clear();
    },
  };
  return store;
};
