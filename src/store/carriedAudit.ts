/**
 * A mutation's audit entry rides in the idempotency ledger's record of its response, and reaches the
 * audit log after the answer (decision 0041). Only where this process is the ledger's one writer (the
 * embedded store): the record's write is the one the answer waits for, and the log's write follows in
 * the audit writer's next batch.
 *
 * Nothing acknowledged is lost: the record holds the entry before the answer goes out. A checkpoint in
 * the requests database (`_local/carried-audit`) names the sequence up to which every carried entry is
 * in the log; a start reads the records written after it and appends their entries again, under the
 * time and id they carry, so an entry already in the log is not written twice. The checkpoint moves
 * only when every entry tracked before its sequence was read has reached the log; an append that
 * failed keeps it where it is, and the next tick reads the records again.
 *
 * The lag is bounded: past `maxBacklog` entries on their way, an answer waits for its own entry, as
 * every answer did before.
 */
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import type { AuditCarrier, AuditLog, CarriedAuditEntry } from '../domain/audit.js';
import { IdempotencyRecord } from '../domain/idempotencyRecord.js';
import type { Database } from './pouch.js';
import { isNotFound } from './storeErrors.js';

export const CHECKPOINT_ID = '_local/carried-audit';
/** Entries on their way to the log past which an answer waits for its own. */
export const MAX_CARRIED_BACKLOG = 1_000;
const RECOVER_PAGE = 500;

const Checkpoint = t.type({ _rev: t.string, seq: t.union([t.number, t.string]) });

export interface CarriedAuditTrail extends AuditCarrier {
  /**
   * Appends the entries of the records stored after the checkpoint, then moves the checkpoint to
   * what the store holds now once everything tracked is in the log; false when it could not move.
   */
  tick(): Promise<boolean>;
}

export interface CarriedAuditOptions {
  readonly requests: Database;
  readonly audit: Pick<AuditLog, 'appendKeyed'>;
  readonly now?: () => number;
  readonly maxBacklog?: number;
  readonly onAppendFailure?: (e: unknown) => void;
}

export const carriedAuditTrail = (options: CarriedAuditOptions): CarriedAuditTrail => {
  const { requests, audit } = options;
  const now = options.now ?? Date.now;
  const maxBacklog = options.maxBacklog ?? MAX_CARRIED_BACKLOG;
  /** Each tracked entry: when it was tracked, and whether it reached the log (false: it did not). */
  const tracked = new Map<number, { readonly since: number; readonly done: Promise<boolean> }>();
  let counter = 0;
  /**
   * The records after the checkpoint must be read again: at the start (a stopped process may have left
   * entries on their way), and after an entry of theirs did not reach the log.
   */
  let reread = true;
  /** An append failed since the checkpoint last moved. */
  let failing = false;

  const append = (c: CarriedAuditEntry): Promise<boolean> =>
    audit.appendKeyed(c.entry, { at: c.at, auditId: c.auditId }).then(
      () => true,
      (e: unknown) => {
        options.onAppendFailure?.(e);
        return false;
      },
    );

  const readCheckpoint = async () => {
    const doc: unknown = await requests.get(CHECKPOINT_ID).catch((e: unknown) => {
      if (isNotFound(e)) return undefined;
      throw e;
    });
    if (doc === undefined) return undefined;
    const decoded = Checkpoint.decode(doc);
    // An unreadable checkpoint is read past from the start: appending an entry again costs nothing.
    return E.isRight(decoded) ? decoded.right : undefined;
  };

  /** Appends every carried entry of the records after the checkpoint; true when all reached the log. */
  const recover = async (since: number | string): Promise<boolean> => {
    let from = since;
    for (;;) {
      const page = await requests.changes({ since: from, include_docs: true, limit: RECOVER_PAGE });
      const appended = await Promise.all(
        page.results.flatMap((change) => {
          const decoded = IdempotencyRecord.decode(change.doc);
          if (E.isLeft(decoded) || decoded.right.state !== 'complete') return [];
          const carried = decoded.right.audit;
          return carried === undefined ? [] : [append(carried)];
        }),
      );
      if (!appended.every(Boolean)) {
        failing = true;
        return false;
      }
      if (page.results.length < RECOVER_PAGE) return true;
      from = page.last_seq;
    }
  };

  const tickOnce = async (): Promise<boolean> => {
    // Read before looking at what is tracked: an entry whose record is at or below `seq` is either
    // tracked now or was settled before this read.
    const seq = (await requests.info()).update_seq;
    const pending = [...tracked.values()].map((e) => e.done);
    const checkpoint = await readCheckpoint();
    if (reread) {
      reread = false;
      const recovered = await recover(checkpoint?.seq ?? 0).catch((e: unknown) => {
        reread = true;
        throw e;
      });
      if (!recovered) {
        reread = true;
        return false;
      }
    }
    const reached = await Promise.all(pending);
    if (!reached.every(Boolean) || reread) return false;
    await requests.put({
      _id: CHECKPOINT_ID,
      ...(checkpoint === undefined ? {} : { _rev: checkpoint._rev }),
      seq,
    });
    failing = false;
    return true;
  };
  let ticking: Promise<unknown> = Promise.resolve();

  return {
    carry(entry) {
      counter += 1;
      const id = counter;
      let settle: (ok: boolean) => void = () => undefined;
      const done = new Promise<boolean>((resolve) => {
        settle = (ok) => {
          tracked.delete(id);
          if (!ok) {
            reread = true;
            failing = true;
          }
          resolve(ok);
        };
      });
      tracked.set(id, { since: now(), done });
      return {
        async stored() {
          const appended = append(entry);
          void appended.then(settle);
          // Over the bound, this answer waits for its own entry: the lag stops growing.
          if (tracked.size > maxBacklog) await appended;
        },
        // Nothing of it in the ledger to recover: the caller writes the entry itself.
        dropped: () => settle(true),
      };
    },

    tick() {
      // One at a time (the periodic tick, the purge's, the stop's): the checkpoint has one writer.
      const run = ticking.then(tickOnce);
      ticking = run.then(
        () => undefined,
        () => undefined,
      );
      return run;
    },

    backlog() {
      let oldest: number | undefined;
      for (const e of tracked.values()) oldest = oldest === undefined ? e.since : Math.min(oldest, e.since);
      return {
        entries: tracked.size,
        oldestMs: oldest === undefined ? 0 : Math.max(0, now() - oldest),
        failing,
      };
    },
  };
};
