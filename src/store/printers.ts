/**
 * Printers set up in the office (0051), in the private database: `printer:<printerId>`. A church has
 * a few, read whole and written rarely.
 */
import { PrinterDoc } from '../domain/printing.js';
import { getDoc, listDocs } from './docs.js';
import type { Database } from './pouch.js';
import { isConflict, isNotFound } from './storeErrors.js';

export type PrinterFields = Omit<PrinterDoc, '_id' | '_rev' | 'docType'>;

export interface PrinterStore {
  /** Ordered by name. */
  list(): Promise<PrinterDoc[]>;
  get(printerId: string): Promise<PrinterDoc | undefined>;
  /** `EXISTS` when the id is taken (a retried creation under the same Idempotency-Key). */
  create(fields: PrinterFields): Promise<PrinterDoc | 'EXISTS'>;
  /** Compare-and-swap on `current._rev`. */
  update(current: PrinterDoc, next: PrinterFields): Promise<PrinterDoc | 'CONFLICT'>;
  /** `CONFLICT` when it changed since it was read; one already gone counts as removed. */
  remove(current: PrinterDoc): Promise<'REMOVED' | 'CONFLICT'>;
}

const idOf = (printerId: string): string => `printer:${printerId}`;

export const printerStore = (db: Database): PrinterStore => ({
  list: async () =>
    (await listDocs(db, PrinterDoc, 'printer')).sort((a, b) => a.name.localeCompare(b.name, 'pt-BR')),
  get: (printerId) => getDoc(db, PrinterDoc, idOf(printerId)),
  async create(fields) {
    const doc = { _id: idOf(fields.printerId), docType: 'printer' as const, ...fields };
    try {
      return { ...doc, _rev: (await db.put(doc)).rev };
    } catch (e) {
      if (isConflict(e)) return 'EXISTS';
      throw e;
    }
  },
  async update(current, next) {
    const doc = { _id: current._id, _rev: current._rev, docType: 'printer' as const, ...next };
    try {
      return { ...doc, _rev: (await db.put(doc)).rev };
    } catch (e) {
      if (isConflict(e)) return 'CONFLICT';
      throw e;
    }
  },
  async remove(current) {
    try {
      await db.remove(current._id, current._rev);
      return 'REMOVED';
    } catch (e) {
      if (isNotFound(e)) return 'REMOVED';
      if (isConflict(e)) return 'CONFLICT';
      throw e;
    }
  },
});
