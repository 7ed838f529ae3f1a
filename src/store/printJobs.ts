/**
 * Print jobs (0051), in the requests database (what requests leave behind for a while, out of the
 * private database's change feed): `printjob:<jobId>`, kept a week (`expiresAt`, purged through the
 * same index as the idempotency ledger's entries).
 *
 * A job is claimed before it is sent: `claim` sets `claimedBy` and `leaseUntil` by compare-and-swap,
 * so of two workers (two instances, or later a print agent) one sends it; a claim whose lease has
 * lapsed (its worker died) can be taken again. Every later write is a compare-and-swap too.
 */
import { PRINT_JOB_KEEP_MS, PrintJobDoc } from '../domain/printing.js';
import { decodeDoc, getDoc } from './docs.js';
import { conflictAs } from './docWrites.js';
import { indexIn } from './indexes.js';
import type { Database } from './pouch.js';

export type PrintJobFields = Omit<PrintJobDoc, '_id' | '_rev' | 'docType'>;

export interface PrintJobStore {
  get(jobId: string): Promise<PrintJobDoc | undefined>;
  /** `EXISTS` when the id is taken (a retried request under the same Idempotency-Key). */
  create(fields: PrintJobFields): Promise<PrintJobDoc | 'EXISTS'>;
  /** Compare-and-swap on `current._rev`. */
  update(current: PrintJobDoc, next: PrintJobFields): Promise<PrintJobDoc | 'CONFLICT'>;
  /** The jobs not yet done or failed: queued, or claimed by a worker. */
  unfinished(): Promise<PrintJobDoc[]>;
  /** Removes jobs whose week has passed, a bounded batch at a time; how many it removed. */
  purgeExpired(now: Date): Promise<number>;
}

const idOf = (jobId: string): string => `printjob:${jobId}`;
const PURGE_BATCH = 200;
/** Beyond any job the worker still holds. */
const MAX_UNFINISHED = 10_000;

/** The document as stored: the job's fields, and when it may be purged (ms, as the ledger's entries). */
const stored = (fields: PrintJobFields) => ({
  docType: 'printJob' as const,
  ...fields,
  expiresAt: Date.parse(fields.createdAt) + PRINT_JOB_KEEP_MS,
});

const put = async (db: Database, doc: ReturnType<typeof stored> & { _id: string; _rev?: string }) => {
  const { expiresAt: _e, ...job } = doc;
  return { ...job, _rev: (await db.put(doc)).rev };
};

export const printJobStore = (db: Database): PrintJobStore => ({
  get: (jobId) => getDoc(db, PrintJobDoc, idOf(jobId)),
  create: (fields) => conflictAs('EXISTS', () => put(db, { _id: idOf(fields.jobId), ...stored(fields) })),
  update: (current, next) =>
    conflictAs('CONFLICT', () => put(db, { _id: current._id, _rev: current._rev, ...stored(next) })),
  async unfinished() {
    const found = await db.find({
      selector: { docType: 'printJob', status: { $in: ['queued', 'printing'] } },
      use_index: indexIn(db, 'by-docType-status'),
      limit: MAX_UNFINISHED,
    });
    return found.docs.map((d) => decodeDoc(PrintJobDoc, d._id, d));
  },
  async purgeExpired(now) {
    const found = await db.find({
      selector: { docType: 'printJob', expiresAt: { $lte: now.getTime() } },
      use_index: indexIn(db, 'by-docType-expiresAt'),
      fields: ['_id', '_rev'],
      limit: PURGE_BATCH,
    });
    if (found.docs.length === 0) return 0;
    await db.bulkDocs(found.docs.map((d) => ({ _id: d._id, _rev: d._rev, _deleted: true })));
    return found.docs.length;
  },
});
