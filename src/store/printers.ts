/**
 * Printers set up in the office (0051), in the private database: `printer:<printerId>`. A church has
 * a few, read whole and written rarely.
 */
import { PrinterDoc } from '../domain/printing.js';
import { getDoc, listDocs } from './docs.js';
import { putDoc, removeDoc } from './docWrites.js';
import type { Database } from './pouch.js';

export type PrinterFields = Omit<PrinterDoc, '_id' | '_rev' | 'docType'>;

export interface PrinterStore {
  /** Ordered by name. */
  list(): Promise<PrinterDoc[]>;
  get(printerId: string): Promise<PrinterDoc | undefined>;
  /** `EXISTS` when the id is taken (a retried creation under the same Idempotency-Key). */
  create(fields: PrinterFields): Promise<PrinterDoc | 'EXISTS'>;
  /** Compare-and-swap on `current._rev`. */
  update(current: PrinterDoc, next: PrinterFields): Promise<PrinterDoc | 'CONFLICT'>;
  /** `CONFLICT` when it changed or was removed since it was read (`removeDoc`). */
  remove(current: PrinterDoc): Promise<'REMOVED' | 'CONFLICT'>;
}

const idOf = (printerId: string): string => `printer:${printerId}`;

export const printerStore = (db: Database): PrinterStore => ({
  list: async () =>
    (await listDocs(db, PrinterDoc, 'printer')).sort((a, b) => a.name.localeCompare(b.name, 'pt-BR')),
  get: (printerId) => getDoc(db, PrinterDoc, idOf(printerId)),
  create: (fields) =>
    putDoc(db, { _id: idOf(fields.printerId), docType: 'printer' as const, ...fields }, 'EXISTS'),
  update: (current, next) =>
    putDoc(db, { _id: current._id, _rev: current._rev, docType: 'printer' as const, ...next }, 'CONFLICT'),
  remove: (current) => removeDoc(db, current),
});
