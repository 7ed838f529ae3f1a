/**
 * The event pipeline wired to the store: the events database's change feed wakes it, pages of changes
 * are pulled after the persisted checkpoint (so a backlog of 200,000 events is read a page at a time,
 * never all at once), and each page is projected by `projector.ts`. Once the pulls have caught up, the
 * feed carries the documents and the pages are taken from it (`tail`) instead of read again.
 *
 * `settle` gives request handlers read-your-writes: it waits until the pipeline has projected the
 * given events and returns their aspects as they then stand.
 */
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import {
  bufferTime,
  catchError,
  concatMap,
  defer,
  EMPTY,
  filter,
  interval,
  map,
  merge,
  type Observable,
  Subject,
  type Subscription,
  takeUntil,
} from 'rxjs';
import type { PendingAuditEntry } from '../domain/audit.js';
import { boundedCache } from '../lib/boundedCache.js';
import { detached } from '../lib/deadline.js';
import { pacedWriter } from '../lib/pacedWriter.js';
import { waitAtMost } from '../lib/timeouts.js';
import type { AspectProjection } from '../rules/projections.js';
import { copiesOf } from '../store/copies.js';
import { isRemote } from '../store/docs.js';
import type { Database } from '../store/pouch.js';
import type { ProjectionStore } from '../store/projections.js';
import { withdrawal } from '../store/quorumWrites.js';
import { type Change, followChanges$ } from './changeFeed.js';
import { type BatchOutcome, eventPipeline$, type Page, type Seq } from './eventPipeline.js';
import { type ProjectedBatch, type ProjectorDeps, projectBatch, settleForks } from './projector.js';
import { type Leaf, type Leaves, settledPage, UNREADABLE } from './settledCopies.js';

export interface EventPipelineOptions {
  readonly events: Database;
  readonly projections: ProjectionStore;
  readonly audit: (entries: ReadonlyArray<PendingAuditEntry>) => Promise<void>;
  readonly writeThrough?: (projection: AspectProjection) => Promise<void>;
  /** Other instances' pipelines commit the projections too (CouchDB): `ProjectorDeps.othersCommit`. */
  readonly othersCommit?: boolean;
  readonly onError?: (error: unknown) => void;
  /** Each batch's decisions, once projected (before its checkpoint is saved). */
  readonly onProjected?: (batch: ProjectedBatch) => void;
  /** Each page of the feed once projected: its changes and the time projecting it took. */
  readonly onPage?: (page: { readonly changes: number; readonly seconds: number }) => void;
  readonly pageSize?: number;
  readonly retryDelayMs?: number;
  readonly clock?: () => Date;
  /**
   * Ids of projection documents the projections' feed showed with several leaves (on CouchDB, where
   * other instances' pipelines commit too): their forks are settled (decision 0038).
   */
  readonly forked$?: Observable<string>;
  /** How long ids of forked documents are gathered before they are settled together. */
  readonly forkBufferMs?: number;
  /** How many forked aspects a settle merged (none when another instance got there first). */
  readonly onForksSettled?: (aspects: number) => void;
  /**
   * The pipeline has stopped, for `heldMs` so far, before one event document whose copies are not
   * settled (several live leaves) or not readable on the cluster: told every `heldReportMs` while it
   * lasts, so an operator sees a pipeline that waits rather than one that is idle.
   */
  readonly onHeld?: (held: {
    readonly id: string;
    readonly unreadable: boolean;
    readonly heldMs: number;
  }) => void;
  /**
   * Copies of events the pipeline withdrew itself: several live leaves past the grace, the writers of
   * all but CouchDB's winner taken to have stopped in between (`settledCopies.ts`).
   */
  readonly onWithdrawn?: (copies: ReadonlyArray<{ readonly id: string; readonly rev: string }>) => void;
  /** How long a document of several live leaves waits for its writer's withdrawal (tests shorten it). */
  readonly unsettledGraceMs?: number;
  /** How often `onHeld` is told while the pipeline stays held before one document. */
  readonly heldReportMs?: number;
  /** How often the pipeline looks for stored events with no change feed telling it (`IDLE_LOOK_MS`). */
  readonly idleLookMs?: number;
  /** At most one checkpoint write per this many milliseconds (`CHECKPOINT_EVERY_MS`). */
  readonly checkpointEveryMs?: number;
  /**
   * Take pages from the feed once caught up (`tail`). The default: on CouchDB, where a page read is a
   * request; not on the embedded store, where PouchDB answers a live feed with documents by a query of
   * its own after every write, and check-ins ran at 0.74× of the rate without it (decision 0019).
   */
  readonly pagesFromFeed?: boolean;
}

/** Events stored but not yet projected. */
export interface PipelineBacklog {
  /** Changes of the events database after the last projected page. */
  readonly pending: number;
  /** The server time of the oldest of them; undefined when none waits. */
  readonly oldestStoredAt: string | undefined;
}

export interface SettledEvent {
  readonly eventId: string;
  readonly aspect: string;
  /**
   * This process's append stored it just now (not a duplicate of an earlier write): this pipeline,
   * already running, has not projected it unless it says so, and `settle` need not look in the store.
   */
  readonly justStored?: boolean;
}

export interface EventPipeline {
  /**
   * One value per projected page, once its checkpoint is offered: written at once after a quiet
   * second, else by the second's trailing write (`CHECKPOINT_EVERY_MS`).
   */
  readonly outcomes$: Observable<BatchOutcome>;
  wake(): void;
  /**
   * Waits (at most `timeoutMs`) until the pipeline has projected the events and returns each of their
   * aspects as this pipeline's commit of them left it (or, for events it did not project since it
   * started, as the store holds it); an aspect whose events are not all projected in time is left out.
   */
  settle(events: ReadonlyArray<SettledEvent>, timeoutMs?: number): Promise<Map<string, AspectProjection>>;
  /** The aspect as projected so far (its head version and value); undefined before any event. */
  current(aspect: string): Promise<AspectProjection | undefined>;
  /** Resolves once everything stored before the call has been projected. */
  catchUp(): Promise<void>;
  /** What is stored after the last projected page: two reads of the events database. */
  backlog(): Promise<PipelineBacklog>;
  /** Finishes the page in hand and stops. */
  stop(): Promise<void>;
}

/** Runs each write-through in turn (each ignores the aspect kinds that are not its own). */
export const writeThroughAll =
  (all: ReadonlyArray<(p: AspectProjection) => Promise<void>>) =>
  async (p: AspectProjection): Promise<void> => {
    for (const w of all) await w(p);
  };

const toPage = (res: PouchDB.Core.ChangesResponse<object>): Page => ({
  changes: res.results.map(
    (c): Change => ({
      id: c.id,
      seq: c.seq,
      deleted: c.deleted === true,
      ...(c.doc === undefined ? {} : { doc: c.doc }),
    }),
  ),
  lastSeq: res.last_seq,
});

/**
 * The count in a sequence: the number itself on the embedded store, the leading number of CouchDB's
 * opaque `N-…` (the sum of the shards' counts, so an estimate on a cluster).
 */
const seqCount = (seq: Seq): number =>
  typeof seq === 'number' ? seq : Number(/^(\d+)/.exec(seq)?.[1] ?? Number.NaN);

const StoredAt = t.type({ serverTimestamp: t.string });

/** Every leaf of each document, from a `_bulk_get` without revisions (CouchDB's `open_revs=all`). */
const leavesOf = async (db: Database, ids: ReadonlyArray<string>): Promise<Map<string, Leaves>> => {
  const out = new Map<string, Leaves>();
  if (ids.length === 0) return out;
  const got = await db.bulkGet({ docs: ids.map((id) => ({ id })) });
  for (const result of got.results) {
    const leaves: Leaf[] = [];
    // An error in place of a leaf (while a node dies, the whole batch answers internal_fabric_error):
    // what the document holds is unknown, which is not "no live leaf".
    const unreadable = result.docs.length === 0 || result.docs.some((answer) => !('ok' in answer));
    for (const answer of unreadable ? [] : result.docs) {
      if (!('ok' in answer)) continue;
      const doc: unknown = answer.ok;
      const rev: unknown = typeof doc === 'object' && doc !== null ? Reflect.get(doc, '_rev') : undefined;
      if (typeof rev !== 'string') continue;
      leaves.push({ rev, deleted: Reflect.get(Object(doc), '_deleted') === true, doc });
    }
    out.set(result.id, unreadable ? UNREADABLE : leaves);
  }
  return out;
};

/**
 * How long a document of several live leaves waits for its writer's withdrawal before the pipeline
 * settles it itself: three store timeouts and more, so a writer still at it has withdrawn by then.
 */
const UNSETTLED_GRACE_MS = 15_000;

/** How often a pipeline held before one document says so (`onHeld`). */
const HELD_REPORT_MS = 10_000;

/**
 * How often the pipeline looks for stored events without being woken. The live change feed wakes it,
 * but a feed can fall silent without failing (the "store stalled" row on three nodes, after node 1
 * was thawed: 8 events stored and not projected 72 s later, the pipeline idle, nothing logged, so no
 * feed error either). One `_changes` read of at most a page every few seconds bounds that.
 */
const IDLE_LOOK_MS = 5_000;

/**
 * At most one checkpoint write a second (`lib/pacedWriter.ts`): under load a write per batch was a
 * CouchDB request per check-in or two, and a checkpoint a second behind costs a restart after a
 * crash the replay of that second's batches, which change nothing. A stop writes the latest.
 */
const CHECKPOINT_EVERY_MS = 1_000;

/**
 * The most changes the feed holds for the pulls (`tail`; with their documents, about a megabyte or
 * two). A feed that runs further ahead of the projecting is let go, and the pulls read the store again
 * until they catch up and follow it anew.
 */
const TAIL_MOST = 2_000;

/**
 * How long a `settle` waits for the feed to bring its events before the pipeline reads the store for
 * them all the same, at most once per this interval (a feed that fell silent, or one behind).
 */
const SETTLE_LOOK_MS = 1_000;

/** Sequences are opaque on CouchDB: equal when their text is. */
const sameSeq = (a: Seq, b: Seq): boolean => String(a) === String(b);

/** How long a stop waits for the last checkpoint write (a store that is away must not hold it). */
const LAST_CHECKPOINT_WAIT_MS = 5_000;

/**
 * How many aspects the pipeline remembers as its last commits left them, for `settle` to answer from
 * without reading the projections back (two CouchDB reads per check-in otherwise). A batch holds at
 * most a page (500) of aspects, so a request's aspect outlives several batches after its own.
 */
const RECENT_ASPECTS = 2_000;

export const startEventPipeline = async (options: EventPipelineOptions): Promise<EventPipeline> => {
  const since = await options.projections.checkpoint();
  const wakes$ = new Subject<void>();
  // A wake-up runs the pipeline's pulls at once, in the caller's async context: a request's settle or
  // catch-up would make them its own, and its deadline would cut them (decision 0046).
  const wakeNow = () => detached(() => wakes$.next());
  const stop$ = new Subject<void>();
  const outcomes$ = new Subject<BatchOutcome>();
  // Pulls are numbered; a drain that ends reports the number of its last (short) pull, which saw
  // everything stored before it started.
  const drained$ = new Subject<number>();
  let pulls = 0;
  let lastPull = 0;
  // The last pull stopped before a document whose copies are not settled (or not readable): the drain
  // that ends with it has not seen everything, and a wake 250 ms later starts the one that will.
  let lastPullHeld = false;
  let projectedUpTo: Seq = since;
  // A try of the drain failed since the last page was projected: the page that failed may have
  // written records from a copy another writer had moved past, or committed aspects and stopped
  // before their audit (`BatchOptions.afterFailure`).
  let failedSinceProjected = false;
  let stopped = false;
  const drainWaiters = new Set<() => void>();
  const projector: ProjectorDeps = {
    projections: options.projections,
    audit: options.audit,
    ...(options.writeThrough === undefined ? {} : { writeThrough: options.writeThrough }),
    ...(options.clock === undefined ? {} : { clock: options.clock }),
    ...(options.othersCommit === undefined ? {} : { othersCommit: options.othersCommit }),
  };
  // What was stored before this start: pages up to it are a replay when the last process stopped
  // without saving its checkpoint (a crash), and may hold a commit whose audit it never wrote
  // (`BatchOptions.afterFailure`; the records' rewrite it also brings costs a replay little).
  // Sequences are numbers on the embedded store; on CouchDB, where they are not, every page audits
  // again what it finds committed (`othersCommit`).
  const storedBeforeStart = (await options.events.info()).update_seq;
  let replayingTo = typeof storedBeforeStart === 'number' ? storedBeforeStart : undefined;
  const replays = (batch: ReadonlyArray<{ readonly seq: Seq }>): boolean => {
    if (replayingTo === undefined) return false;
    const to = replayingTo;
    if (batch.some((d) => typeof d.seq === 'number' && d.seq <= to)) return true;
    replayingTo = undefined;
    return false;
  };

  const checkpoints = pacedWriter<Seq>({
    write: (seq) => options.projections.saveCheckpoint(seq),
    everyMs: options.checkpointEveryMs ?? CHECKPOINT_EVERY_MS,
    onError: (error) => options.onError?.(error),
  });

  // Aspects as this pipeline's last commits left them (see `settle`).
  const recent = boundedCache<AspectProjection>({ maxEntries: RECENT_ASPECTS });
  const remember = (projected: ReadonlyArray<AspectProjection>) => {
    for (const p of projected) {
      const held = recent.get(p.aspect);
      const events = new Set(p.events.map((e) => e.eventId));
      // A copy lacking an event of the one held is older (a fork settle that ends after a later
      // batch's commit) or the store lost a copy meanwhile: neither is sure, so the store says.
      if (held !== undefined && !held.events.every((e) => events.has(e.eventId))) recent.delete(p.aspect);
      else recent.set(p.aspect, p);
    }
  };

  const clustered = (await copiesOf(options.events)) > 1;
  const unsettledSince = new Map<string, number>();
  // The document the pulls stop before, since when, and when that was last told.
  let holding: { id: string; since: number; told: number } | undefined;
  /** On a cluster, the page as far as its copies are settled (`settledCopies.ts`). */
  const settled = async (page: Page, from: Seq): Promise<{ page: Page; held: boolean }> => {
    if (!clustered) return { page, held: false };
    const ids = page.changes.filter((c) => !c.id.startsWith('_design/')).map((c) => c.id);
    const now = Date.now();
    const out = settledPage(
      page,
      await leavesOf(options.events, ids),
      from,
      unsettledSince,
      now,
      options.unsettledGraceMs ?? UNSETTLED_GRACE_MS,
    );
    for (const id of ids) if (id !== out.waitingFor) unsettledSince.delete(id);
    if (out.withdraw.length > 0) {
      await options.events.bulkDocs(out.withdraw.map((w) => withdrawal(w.id, w.rev)));
      options.onWithdrawn?.(out.withdraw);
    }
    if (out.waitingFor === undefined) holding = undefined;
    else {
      if (!out.unreadable && !unsettledSince.has(out.waitingFor)) unsettledSince.set(out.waitingFor, now);
      if (holding?.id !== out.waitingFor) holding = { id: out.waitingFor, since: now, told: now };
      else if (now - holding.told >= (options.heldReportMs ?? HELD_REPORT_MS)) {
        holding.told = now;
        options.onHeld?.({ id: holding.id, unreadable: out.unreadable, heldMs: now - holding.since });
      }
      // The withdrawal wakes the pipeline through the feed; this covers a writer that stopped.
      setTimeout(() => {
        if (!stopped) wakeNow();
      }, 250).unref();
    }
    return { page: out.page, held: out.waitingFor !== undefined };
  };

  // The events feed with its documents, followed from where a read of the store caught up: a pull
  // from where one of its changes follows on is answered from it, with no read (on CouchDB, one
  // request a page). Each change is held with the sequence it follows, so a page taken from it starts
  // exactly where the one before ended. Sequences are compared only with the same feed's own: CouchDB
  // writes one change's sequence differently from request to request.
  interface Tail {
    readonly entries: Array<{ readonly prev: Seq; readonly change: Change }>;
    readonly end: { seq: Seq };
    readonly subscription: Subscription;
  }
  let tail: Tail | undefined;
  const letGo = () => {
    tail?.subscription.unsubscribe();
    tail = undefined;
  };
  const pagesFromFeed = options.pagesFromFeed ?? isRemote(options.events);
  const follow = (from: Seq) => {
    letGo();
    // A read that ends after a stop (its page was in hand) opens no feed: none would close it.
    if (stopped || !pagesFromFeed) return;
    const entries: Tail['entries'] = [];
    const end = { seq: from };
    const subscription = followChanges$(options.events, { since: from, includeDocs: true })
      .pipe(takeUntil(stop$))
      .subscribe((change) => {
        entries.push({ prev: end.seq, change });
        end.seq = change.seq;
        if (entries.length > TAIL_MOST) {
          if (tail?.entries === entries) letGo();
        } else wakeSoon();
      });
    tail = { entries, end, subscription };
  };
  // One wake for the changes a feed tells together (a chunk of lines), not one page per change.
  let wakeQueued = false;
  const wakeSoon = () => {
    if (wakeQueued) return;
    wakeQueued = true;
    queueMicrotask(() => {
      wakeQueued = false;
      wakeNow();
    });
  };
  /** Whether the feed in hand goes on from `seq`. */
  const tailFollows = (seq: Seq): boolean =>
    tail !== undefined && (sameSeq(tail.end.seq, seq) || tail.entries.some((e) => sameSeq(e.prev, seq)));
  /** The page after `from` from the feed in hand; undefined when the feed does not go on from there. */
  const fromTail = (from: Seq, limit: number): Page | undefined => {
    if (tail === undefined) return undefined;
    const { entries } = tail;
    const at = entries.findIndex((e) => sameSeq(e.prev, from));
    if (at < 0) {
      if (!sameSeq(tail.end.seq, from)) return undefined;
      entries.length = 0;
      return { changes: [], lastSeq: from };
    }
    // The changes before `from` were projected by the pages before.
    entries.splice(0, at);
    const taken = entries.slice(0, limit);
    const last = taken[taken.length - 1];
    return last === undefined ? undefined : { changes: taken.map((e) => e.change), lastSeq: last.change.seq };
  };
  // A read of the store is wanted for the next pulls, until one comes back short: a look now and
  // then (the feed may fall silent without failing), a `catchUp` (it must see everything stored
  // before it), a settle kept waiting. The pulls of a drain that ends reading saw everything stored
  // before it began; one that ends on the feed's pages saw what the feed has told. Numbered like the
  // pulls: only a read that began after the latest want satisfies it.
  let readWantedAfter: number | undefined = 0;
  const wantRead = () => {
    readWantedAfter = pulls;
  };
  let lastReadAt = 0;
  let lastPullRead = false;
  const waitingSince = new Set<{ readonly at: number }>();
  const idleLookMs = options.idleLookMs ?? IDLE_LOOK_MS;
  const looks$ = interval(Math.min(idleLookMs, SETTLE_LOOK_MS)).pipe(
    filter(() => {
      const now = Date.now();
      const oldestWait = Math.min(...[...waitingSince].map((w) => w.at));
      const look =
        now - lastReadAt >= idleLookMs ||
        (now - oldestWait >= SETTLE_LOOK_MS && now - lastReadAt >= SETTLE_LOOK_MS);
      if (look) wantRead();
      return look;
    }),
  );

  const streams$ = eventPipeline$({
    // Any change to the events database is a reason to look: the feed the pages come from wakes the
    // pipeline itself; without it, a feed of the changes alone (`now`: the checkpoint covers the rest).
    wake$: merge(
      defer(async () => undefined),
      wakes$,
      looks$,
      pagesFromFeed ? EMPTY : followChanges$(options.events, { since: 'now' }).pipe(map(() => undefined)),
    ).pipe(takeUntil(stop$)),
    pull: (from: Seq, limit: number) =>
      defer(async () => {
        pulls += 1;
        const number = pulls;
        const fed = readWantedAfter === undefined ? fromTail(from, limit) : undefined;
        if (fed === undefined) lastReadAt = Date.now();
        const read = fed ?? toPage(await options.events.changes({ since: from, limit, include_docs: true }));
        const { page, held } = await settled(read, from);
        lastPull = number;
        lastPullHeld = held;
        lastPullRead = fed === undefined;
        if (lastPullRead && !held && read.changes.length < limit) {
          if (readWantedAfter !== undefined && number > readWantedAfter) readWantedAfter = undefined;
          // Caught up by reading: the feed goes on from here (an empty page leaves the cursor).
          const caughtUpAt = page.changes.length === 0 ? from : page.lastSeq;
          if (!tailFollows(caughtUpAt)) follow(caughtUpAt);
        }
        return page;
      }),
    process: (batch) =>
      defer(async () => {
        const started = performance.now();
        const projected = await projectBatch(projector, batch, {
          afterFailure: failedSinceProjected || replays(batch),
        });
        failedSinceProjected = false;
        remember(projected.projected);
        options.onProjected?.(projected);
        options.onPage?.({ changes: batch.length, seconds: (performance.now() - started) / 1000 });
        return projected;
      }),
    saveCheckpoint: (seq) => defer(() => checkpoints.offer(seq)),
    since,
    pageSize: options.pageSize ?? 500,
    retryDelayMs: options.retryDelayMs ?? 1000,
    onError: (error) => {
      // The retry reads the store: a catch-up waiting must see a drain that ends reading.
      wantRead();
      failedSinceProjected = true;
      options.onError?.(error);
    },
    onDrained: () => {
      if (!lastPullHeld && lastPullRead) drained$.next(lastPull);
    },
  });

  const done = new Promise<void>((resolve) => {
    const subscription: Subscription = streams$.subscribe({
      next: (outcome) => {
        projectedUpTo = outcome.lastSeq;
        outcomes$.next(outcome);
      },
      complete: () => resolve(),
      error: (e: unknown) => {
        options.onError?.(e);
        resolve();
      },
    });
    stop$.subscribe(() => {
      // Leave the page in hand a moment to finish; a store that stays down must not hold shutdown.
      setTimeout(() => {
        subscription.unsubscribe();
        resolve();
      }, 5000).unref();
    });
  });

  // A fork is settled by whichever instance gets there first; the others find nothing left to merge.
  // Settling is no batch of the feed: it saves no checkpoint. A settle that fails (the store away or
  // slow after a stall) is tried again after the retry delay, for as long as the pipeline runs: the
  // feed may not show that document again, and a fork left behind hides events from every reader.
  const forksAgain$ = new Subject<ReadonlyArray<string>>();
  const settling = options.forked$
    ?.pipe(
      takeUntil(stop$),
      bufferTime(options.forkBufferMs ?? 250),
      (ids$) => merge(ids$, forksAgain$),
      filter((ids) => ids.length > 0),
      concatMap((ids) =>
        defer(async () => {
          // A quarantine record is no aspect: its leaves hold no events to merge, only detection times.
          await options.projections.settleQuarantineForks(ids);
          const aspects = await options.projections.forkedAspects([...new Set(ids)]);
          if (aspects.length === 0) return;
          const settled = await settleForks(projector, aspects);
          remember(settled.projected);
          if (settled.aspectsWritten > 0) options.onForksSettled?.(settled.aspectsWritten);
          options.onProjected?.({
            aspectsWritten: settled.aspectsWritten,
            conflictsChanged: settled.decided,
            quarantined: [],
            quarantinesRecorded: [],
            projected: settled.projected,
          });
        }).pipe(
          catchError((e: unknown) => {
            options.onError?.(e);
            setTimeout(() => {
              if (!stopped) forksAgain$.next(ids);
            }, options.retryDelayMs ?? 1000).unref();
            return EMPTY;
          }),
        ),
      ),
    )
    .subscribe();

  const pipeline: EventPipeline = {
    outcomes$: outcomes$.asObservable(),
    wake: () => {
      if (stopped) return;
      wantRead();
      wakeNow();
    },

    async settle(events, timeoutMs = 5000) {
      const wantedBy = new Map<string, string[]>();
      for (const e of events) {
        const list = wantedBy.get(e.aspect);
        if (list === undefined) wantedBy.set(e.aspect, [e.eventId]);
        else list.push(e.eventId);
      }
      const aspects = [...wantedBy.keys()];
      /** Whether `projection` holds every event wanted of its aspect. */
      const holdsWanted = (projection: AspectProjection): boolean => {
        const held = new Set(projection.events.map((e) => e.eventId));
        return (wantedBy.get(projection.aspect) ?? []).every((id) => held.has(id));
      };
      const pending = new Set(events.map((e) => e.eventId));
      let release: () => void = () => undefined;
      const allSeen = new Promise<void>((resolve) => {
        release = resolve;
      });
      // Subscribed before looking, so an outcome that lands between the look and the wait is not missed.
      const sub = outcomes$.subscribe((o) => {
        for (const e of o.events) pending.delete(e.eventId);
        if (pending.size === 0) release();
      });
      try {
        // Event by event: of an aspect's events, some may be projected already and the rest not yet.
        for (const aspect of aspects) {
          const held = new Set(recent.get(aspect)?.events.map((e) => e.eventId));
          for (const id of wantedBy.get(aspect) ?? []) if (held.has(id)) pending.delete(id);
        }
        // An event this process did not just store (a resend, a retried request) may have been
        // projected before this pipeline started, or by another instance while this one's feed is
        // behind: the store says so. One just stored is this pipeline's to project, and it tells.
        const unsure = events.filter((e) => pending.has(e.eventId) && e.justStored !== true);
        // The feed brings a stored event; a settle kept waiting has the store read (`looks$`).
        if (pending.size > 0) wakeNow();
        if (unsure.length > 0) {
          const known = await options.projections.loadAspects([...new Set(unsure.map((e) => e.aspect))]);
          for (const a of known.values()) for (const e of a.events) pending.delete(e.eventId);
        }
        if (pending.size > 0) {
          const waiting = { at: Date.now() };
          waitingSince.add(waiting);
          try {
            await waitAtMost(allSeen, timeoutMs);
          } finally {
            waitingSince.delete(waiting);
          }
        }
      } finally {
        sub.unsubscribe();
      }
      const out = new Map<string, AspectProjection>();
      const unread: string[] = [];
      // As this pipeline last committed them; the store says for the others.
      for (const aspect of aspects) {
        const projection = recent.get(aspect);
        if (projection !== undefined && holdsWanted(projection)) out.set(aspect, projection);
        else unread.push(aspect);
      }
      if (unread.length === 0) return out;
      for (const [aspect, projection] of await options.projections.project(unread))
        if (holdsWanted(projection)) out.set(aspect, projection);
      return out;
    },

    current: async (aspect) => (await options.projections.project([aspect])).get(aspect),

    catchUp() {
      const asked = pulls;
      // A stopped pipeline projects nothing more: there is nothing to wait for.
      if (stopped) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const release = () => {
          drainWaiters.delete(release);
          sub.unsubscribe();
          resolve();
        };
        drainWaiters.add(release);
        const sub = drained$.subscribe((pull) => {
          if (pull > asked) release();
        });
        pipeline.wake();
      });
    },

    async backlog() {
      const from = projectedUpTo;
      const [info, first] = await Promise.all([
        options.events.info(),
        options.events.changes({ since: from, limit: 1, include_docs: true }),
      ]);
      const oldest = first.results[0];
      if (oldest === undefined) return { pending: 0, oldestStoredAt: undefined };
      const stamped = StoredAt.decode(oldest.doc);
      const counted = seqCount(info.update_seq) - seqCount(from);
      return {
        // A change is waiting, whatever the arithmetic on opaque sequences says.
        pending: Number.isFinite(counted) ? Math.max(1, counted) : 1,
        oldestStoredAt: E.isRight(stamped) ? stamped.right.serverTimestamp : undefined,
      };
    },

    async stop() {
      if (stopped) return;
      stopped = true;
      stop$.next();
      stop$.complete();
      letGo();
      settling?.unsubscribe();
      await done;
      checkpoints.close();
      // A restart then replays nothing of what this process projected (nothing would change if it did).
      await waitAtMost(
        checkpoints.flush().catch((error: unknown) => options.onError?.(error)),
        LAST_CHECKPOINT_WAIT_MS,
      );
      outcomes$.complete();
      drained$.complete();
      // Callers still waiting in catchUp are released: nothing more will be drained.
      for (const release of [...drainWaiters]) release();
    },
  };
  return pipeline;
};
