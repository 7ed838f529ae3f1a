/**
 * Retention of the audit log (decision 0045): entries past the audit period keep who acted, where,
 * when and with what outcome, and lose their subject (its id, and the ids in their details). The log's
 * ids sort by time (`audit:<created_at>:<audit_id>`), so the entries older than an instant are one
 * range of ids, read a page at a time.
 *
 * A checkpoint (`_local/retention-audit`, never copied by a backup) says up to which instant every
 * entry was anonymised: the next run reads from a week before it, not from the first entry. The week
 * covers an entry written late with an older time (a pipeline decision keyed by its events' time);
 * a restore leaves no checkpoint, so the first run after it reads the whole range again.
 */
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import { AuditDoc } from '../domain/audit.js';
import { decodeDoc } from './docs.js';
import { retryOnConflict } from './docWrites.js';
import type { Database } from './pouch.js';
import { rewriteEach } from './rewrites.js';
import { isNotFound } from './storeErrors.js';

const CHECKPOINT_ID = '_local/retention-audit';
const Checkpoint = t.type({ _rev: t.string, before: t.string });
const PAGE = 200;
const MARGIN_MS = 7 * 86_400_000;
const PREFIX = 'audit:';

export interface AuditRetention {
  /**
   * Every entry created before `before` since a week before the checkpoint (all of them without
   * one), a page at a time in time order: `visit` has each page before the next is read.
   */
  eachBefore(before: string, visit: (page: ReadonlyArray<AuditDoc>) => Promise<void>): Promise<void>;
  /** Rewrites the entries with no subject and the details `details` makes; answers how many. */
  anonymise(
    entries: ReadonlyArray<Pick<AuditDoc, '_id'>>,
    details: (d: Readonly<Record<string, unknown>>) => Record<string, unknown>,
  ): Promise<number>;
  /** Every entry before `before` is anonymised: the next run may start from there. */
  markDone(before: string): Promise<void>;
}

const readCheckpoint = async (db: Database): Promise<{ rev: string; before: string } | undefined> => {
  const doc: unknown = await db.get(CHECKPOINT_ID).catch((e: unknown) => {
    if (isNotFound(e)) return undefined;
    throw e;
  });
  const decoded = doc === undefined ? undefined : Checkpoint.decode(doc);
  return decoded !== undefined && E.isRight(decoded)
    ? { rev: decoded.right._rev, before: decoded.right.before }
    : undefined;
};

export const auditRetention = (db: Database): AuditRetention => ({
  async eachBefore(before, visit) {
    const checkpoint = await readCheckpoint(db);
    const from =
      checkpoint === undefined
        ? PREFIX
        : `${PREFIX}${new Date(Date.parse(checkpoint.before) - MARGIN_MS).toISOString()}`;
    const end = `${PREFIX}${before}`;
    let startkey = from;
    for (;;) {
      if (startkey >= end) return;
      const res = await db.allDocs({
        startkey,
        endkey: end,
        inclusive_end: false,
        include_docs: true,
        limit: PAGE,
      });
      const page = res.rows.flatMap((row) =>
        row.doc === undefined ? [] : [decodeDoc(AuditDoc, row.id, row.doc)],
      );
      await visit(page);
      const last = res.rows.at(-1);
      if (last === undefined || res.rows.length < PAGE) return;
      startkey = `${last.id}\u0000`;
    }
  },

  anonymise: (entries, details) =>
    rewriteEach(
      db,
      entries.map((e) => e._id),
      (raw) => {
        const doc = AuditDoc.decode(raw);
        return E.isLeft(doc) ? undefined : { ...raw, subject_id: null, details: details(doc.right.details) };
      },
    ),

  // Five losses in a row: the next run marks it again.
  markDone: (before) =>
    retryOnConflict(
      5,
      async () => {
        const current = await readCheckpoint(db);
        // Another instance's run may have gone further; a checkpoint never moves back.
        if (current !== undefined && current.before >= before) return;
        await db.put({ _id: CHECKPOINT_ID, ...(current === undefined ? {} : { _rev: current.rev }), before });
      },
      () => undefined,
    ),
});
