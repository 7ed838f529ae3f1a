/**
 * The tablet's two PouchDB databases in IndexedDB and their replication with the service:
 * `chamada-roster` pulls `/api/v1/replication/roster`, `chamada-outbox` pushes the events this tablet
 * records to `/api/v1/replication/events` (decision 0018). Replication runs as one-shot passes (push,
 * then pull) whenever something is recorded, the browser comes back online, or a timer ticks, one pass
 * at a time, so "waiting to sync" is exact: the outbox changes after the sequence of the last push that
 * completed. Events the server refuses are remembered (they are not waiting any more, and the desk
 * stops showing their effect).
 */
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import PouchDB from 'pouchdb-browser';

const TICK_MS = 15_000;
/** The pipeline applies pushed events a moment after they are stored; their outcome comes with a pull. */
const OUTCOME_PULL_MS = 1_500;
const ONLINE_CHECK_MS = 1_000;
/**
 * After a pass that could not reach the server, the next one comes sooner than the tick, doubling up
 * to this: `navigator.onLine` is only a hint (true on a network without the server, and true in a page
 * reloaded while Chromium emulates offline).
 */
const RETRY_MAX_MS = 5_000;
const META_ID = '_local/kiosk-sync';

const Meta = t.type({
  pushedSeq: t.union([t.number, t.string]),
  refused: t.array(t.type({ eventId: t.string, reason: t.string })),
});
type Meta = t.TypeOf<typeof Meta>;
const MetaDoc = t.intersection([Meta, t.type({ _rev: t.string })]);

const RefusedDoc = t.partial({ id: t.string, reason: t.string, message: t.string });
const PouchError = t.partial({ status: t.number, name: t.string });

/**
 * What the header shows of the tablet's sync: connectivity, the outbox and sign-in trouble. Not the
 * server's `SyncStatus`, which is the outcome of one synced event.
 */
export interface SyncEngineState {
  /** The browser says it is online and the last pass reached the server. */
  readonly online: boolean;
  readonly syncing: boolean;
  readonly pending: number;
  readonly refused: ReadonlyArray<{ readonly eventId: string; readonly reason: string }>;
  readonly lastSyncAt: string | null;
  /** The server refused the credentials: only signing in again lets the outbox go. */
  readonly authProblem: 'none' | 'signed_out' | 'forbidden';
}

export interface SyncEngine {
  readonly roster: PouchDB.Database;
  readonly outbox: PouchDB.Database;
  status(): SyncEngineState;
  onStatus(listener: (s: SyncEngineState) => void): void;
  /** Called after a pull brought roster changes. */
  onRosterChanged(listener: () => void): void;
  /** Asks for a pass soon; passes never overlap. */
  kick(): void;
  /** One pass now; resolves when it ends (used after sign-in, which needs the roster). */
  syncNow(): Promise<SyncEngineState>;
  /** Recounts what waits (after a local write). */
  recount(): Promise<void>;
  start(): void;
}

const authProblemOf = (e: unknown): SyncEngineState['authProblem'] | undefined => {
  const decoded = PouchError.decode(e);
  if (E.isLeft(decoded)) return undefined;
  const { status, name } = decoded.right;
  if (status === 401 || name === 'unauthorized') return 'signed_out';
  if (status === 403 || name === 'forbidden') return 'forbidden';
  return undefined;
};

export const makeSyncEngine = (authedFetch: typeof fetch, canSync: () => boolean): SyncEngine => {
  const roster = new PouchDB('chamada-roster', { auto_compaction: true });
  const outbox = new PouchDB('chamada-outbox');
  const remote = (name: 'roster' | 'events') =>
    new PouchDB(`${location.origin}/api/v1/replication/${name}`, {
      skip_setup: true,
      fetch: (url, opts) => authedFetch(url, opts),
    });

  let status: SyncEngineState = {
    online: navigator.onLine,
    syncing: false,
    pending: 0,
    refused: [],
    lastSyncAt: null,
    authProblem: 'none',
  };
  const statusListeners: Array<(s: SyncEngineState) => void> = [];
  const rosterListeners: Array<() => void> = [];
  const update = (patch: Partial<SyncEngineState>) => {
    status = { ...status, ...patch };
    for (const l of statusListeners) l(status);
  };

  const readMeta = async (): Promise<{ meta: Meta; rev: string | undefined }> => {
    try {
      const decoded = MetaDoc.decode(await outbox.get(META_ID));
      if (E.isRight(decoded)) {
        const { _rev, ...meta } = decoded.right;
        return { meta, rev: _rev };
      }
    } catch {
      // No pass has completed on this tablet yet.
    }
    return { meta: { pushedSeq: 0, refused: [] }, rev: undefined };
  };

  const recount = async () => {
    const { meta } = await readMeta();
    const changes = await outbox.changes({ since: meta.pushedSeq });
    update({ pending: changes.results.length, refused: meta.refused });
  };

  const push = async (): Promise<number> => {
    const result = await outbox.replicate.to(remote('events'), { batch_size: 100 });
    const { meta, rev } = await readMeta();
    const refused = [...meta.refused];
    for (const raw of result.errors) {
      const e = RefusedDoc.decode(raw);
      const id = E.isRight(e) ? (e.right.id ?? '') : '';
      if (!id.startsWith('event:')) continue;
      const reason = E.isRight(e) ? (e.right.reason ?? e.right.message ?? 'refused') : 'refused';
      refused.push({ eventId: id.slice('event:'.length), reason });
    }
    const next: Meta = { pushedSeq: result.last_seq, refused };
    await outbox.put({ _id: META_ID, ...(rev === undefined ? {} : { _rev: rev }), ...next });
    return result.docs_written;
  };

  const pull = async () => {
    const result = await roster.replicate.from(remote('roster'), { batch_size: 500 });
    if (result.docs_written > 0) for (const l of rosterListeners) l();
  };

  let running: Promise<SyncEngineState> | undefined;
  let again = false;
  let failures = 0;
  let retry: number | undefined;
  const retrySoon = () => {
    failures += 1;
    window.clearTimeout(retry);
    retry = window.setTimeout(() => void syncNow(), Math.min(RETRY_MAX_MS, 500 * 2 ** failures));
  };
  const pass = async (): Promise<SyncEngineState> => {
    if (!navigator.onLine || !canSync()) {
      // The `online` event (or the watch below) starts the next pass.
      update({ online: navigator.onLine });
      await recount();
      return status;
    }
    update({ syncing: true });
    try {
      const pushed = await push();
      await pull();
      failures = 0;
      update({ online: true, authProblem: 'none', lastSyncAt: new Date().toISOString() });
      if (pushed > 0) window.setTimeout(() => void syncNow(), OUTCOME_PULL_MS);
    } catch (e) {
      console.warn('chamada: sync pass failed', e);
      const problem = authProblemOf(e);
      if (problem === undefined) {
        update({ online: false });
        retrySoon();
      } else update({ online: true, authProblem: problem });
    } finally {
      await recount();
      update({ syncing: false });
    }
    return status;
  };

  const syncNow = (): Promise<SyncEngineState> => {
    if (running !== undefined) {
      again = true;
      return running;
    }
    running = (async () => {
      let last = await pass();
      while (again) {
        again = false;
        last = await pass();
      }
      return last;
    })().finally(() => {
      running = undefined;
    });
    return running;
  };

  return {
    roster,
    outbox,
    status: () => status,
    onStatus: (l) => {
      statusListeners.push(l);
    },
    onRosterChanged: (l) => {
      rosterListeners.push(l);
    },
    kick: () => {
      void syncNow();
    },
    syncNow,
    recount,
    start() {
      let wasOnline = navigator.onLine;
      const watch = () => {
        const now = navigator.onLine;
        if (now === wasOnline) return;
        wasOnline = now;
        if (now) void syncNow();
        else update({ online: false });
      };
      window.addEventListener('online', watch);
      window.addEventListener('offline', watch);
      // The events are not always delivered (a page reloaded while offline missed `online` in
      // Chromium); reading the flag costs nothing.
      window.setInterval(watch, ONLINE_CHECK_MS);
      window.setInterval(() => void syncNow(), TICK_MS);
      void syncNow();
    },
  };
};
