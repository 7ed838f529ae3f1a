/**
 * Which copy of an event the pipeline may project, on a CouchDB cluster (decision 0023).
 *
 * Two service instances that store the same event at the same moment (a tablet's batch sent again
 * through another instance) write two copies of it that differ in their server time. One reaches the
 * cluster's write quorum; the other is withdrawn by its writer (`quorumWrites.ts`) a few milliseconds
 * later. Until then, and always on the node that took it, the change feed can show the withdrawn copy.
 * Projected, it gives a conflict a `detectedAt` from the wrong server time, whose audit entry (keyed by
 * that time) stays when the right copy is projected after it: the same decision audited twice.
 *
 * So on a cluster every page of the feed is read again as all the leaves of its documents (a quorum
 * `_bulk_get`, which merges what the answering copies know), and:
 * - one live leaf: that copy is projected, whichever copy the feed showed;
 * - no live leaf: the copy the feed showed was withdrawn since; the withdrawal's own change comes later
 *   (a deletion the feed shows is left as it is);
 * - a live leaf where the feed shows a deletion: the node serving the feed holds only a withdrawn
 *   copy so far, and the copy that stands is projected;
 * - a deletion with nothing but withdrawals as leaves: a write withdrawn (its writer heard 503, or
 *   wrote it again, whose change comes later): nothing to project. Quarantined as a deleted event, it
 *   put a spurious entry in the quarantine report for every such write (35 in the two-instance row
 *   with a node killed). A deletion that is not a withdrawal stays one, and is quarantined;
 * - several: a writer has not withdrawn its copy yet. The page stops before that change, and the
 *   pipeline looks again shortly (the withdrawal wakes it too). A leaf still there after `graceMs` was
 *   left by a writer that stopped in between: every instance then keeps the leaf CouchDB itself makes
 *   the winner (highest generation, then revision) and withdraws the others, the same choice everywhere.
 * A document whose leaves could not be read (the cluster answered an error for it, as while a node
 * dies) stops the page too, and is read again shortly: taken for "no live leaf", its event was skipped
 * for good and a withdrawal of it quarantined (the two-instance row with a node killed: 240 events
 * never projected, 29 quarantined).
 */
import { WITHDRAWN } from '../store/quorumWrites.js';
import type { Change } from './changeFeed.js';
import type { Page, Seq } from './eventPipeline.js';

export interface Leaf {
  readonly rev: string;
  readonly deleted: boolean;
  readonly doc: unknown;
}

/** What the cluster answered for a document whose leaves it could not read. */
export const UNREADABLE = 'unreadable';

export type Leaves = ReadonlyArray<Leaf> | typeof UNREADABLE;

export interface SettledPage {
  readonly page: Page;
  /** Leaves to withdraw: left behind by a writer that stopped between its write and its withdrawal. */
  readonly withdraw: ReadonlyArray<{ readonly id: string; readonly rev: string }>;
  /** The document whose copies are not settled yet; the page ends before it. */
  readonly waitingFor: string | undefined;
  /** Whether `waitingFor` waits for its leaves to be readable (no grace runs), not for a withdrawal. */
  readonly unreadable: boolean;
}

const generation = (rev: string): number => Number.parseInt(rev, 10);

const isWithdrawal = (l: Leaf): boolean => l.deleted && Reflect.get(Object(l.doc), 'withdrawn') === WITHDRAWN;

/** CouchDB's winner among live leaves: the highest generation, then the highest revision id. */
export const winningLeaf = (live: ReadonlyArray<Leaf>): Leaf | undefined =>
  [...live].sort(
    (a, b) => generation(b.rev) - generation(a.rev) || (a.rev < b.rev ? 1 : a.rev > b.rev ? -1 : 0),
  )[0];

/**
 * The part of `page` that may be projected now. `leaves` has every leaf of each document the page
 * names (a document it has nothing for is left as the feed showed it); `unsettledSince` says since
 * when each document has been seen with several live leaves.
 */
export const settledPage = (
  page: Page,
  leaves: ReadonlyMap<string, Leaves>,
  since: Seq,
  unsettledSince: ReadonlyMap<string, number>,
  now: number,
  graceMs: number,
): SettledPage => {
  const kept: Change[] = [];
  const withdraw: Array<{ id: string; rev: string }> = [];
  let lastSeq: Seq = since;
  for (const change of page.changes) {
    const known = leaves.get(change.id);
    if (known === UNREADABLE)
      return { page: { changes: kept, lastSeq }, withdraw, waitingFor: change.id, unreadable: true };
    const live = known?.filter((l) => !l.deleted) ?? [];
    if (known === undefined || (live.length === 0 && change.deleted))
      kept.push(
        known !== undefined && known.length > 0 && known.every(isWithdrawal)
          ? { ...change, superseded: true }
          : change,
      );
    else if (live.length > 1) {
      const first = unsettledSince.get(change.id) ?? now;
      if (now - first < graceMs)
        return { page: { changes: kept, lastSeq }, withdraw, waitingFor: change.id, unreadable: false };
      const winner = winningLeaf(live);
      for (const l of live) if (l !== winner) withdraw.push({ id: change.id, rev: l.rev });
      if (winner !== undefined) kept.push({ ...change, deleted: false, doc: winner.doc });
    } else
      kept.push(
        live[0] === undefined
          ? { ...change, superseded: true }
          : { ...change, deleted: false, doc: live[0].doc },
      );
    lastSeq = change.seq;
  }
  return {
    page: { changes: kept, lastSeq: page.lastSeq },
    withdraw,
    waitingFor: undefined,
    unreadable: false,
  };
};
