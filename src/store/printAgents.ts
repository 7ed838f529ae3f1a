/**
 * Print agents (0054), in the private database: `printAgent:<agentId>`. A church has one or two;
 * each is read on every call the agent makes (its token is checked against the stored digest).
 */
import { PrintAgentDoc } from '../domain/printAgents.js';
import { getDoc, listDocs } from './docs.js';
import { putDoc } from './docWrites.js';
import type { Database } from './pouch.js';

export type PrintAgentFields = Omit<PrintAgentDoc, '_id' | '_rev' | 'docType'>;

export interface PrintAgentStore {
  /** Oldest first. */
  list(): Promise<PrintAgentDoc[]>;
  get(agentId: string): Promise<PrintAgentDoc | undefined>;
  /** `EXISTS` when the id is taken (a retried issue under the same Idempotency-Key). */
  create(fields: PrintAgentFields): Promise<PrintAgentDoc | 'EXISTS'>;
  /** Compare-and-swap on `current._rev`. */
  update(current: PrintAgentDoc, next: PrintAgentFields): Promise<PrintAgentDoc | 'CONFLICT'>;
}

const idOf = (agentId: string): string => `printAgent:${agentId}`;

export const printAgentStore = (db: Database): PrintAgentStore => ({
  list: async () =>
    (await listDocs(db, PrintAgentDoc, 'printAgent')).sort((a, b) => a.createdAt.localeCompare(b.createdAt)),
  get: (agentId) => getDoc(db, PrintAgentDoc, idOf(agentId)),
  create: (fields) =>
    putDoc(db, { _id: idOf(fields.agentId), docType: 'printAgent' as const, ...fields }, 'EXISTS'),
  update: (current, next) =>
    putDoc(db, { _id: current._id, _rev: current._rev, docType: 'printAgent' as const, ...next }, 'CONFLICT'),
});
