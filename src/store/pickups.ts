/** Pickup entries (N2) and temporary grants (N3) in the private database. */
import { GrantDoc, PickupEntryDoc } from '../domain/pickup.js';
import { decodeDoc, getDoc, listDocs } from './docs.js';
import { putDoc } from './docWrites.js';
import { indexIn } from './indexes.js';
import type { Database } from './pouch.js';
import { removeEach } from './rewrites.js';

export const pickupDocId = (pickupId: string): string => `pickupEntry:${pickupId}`;
export const grantDocId = (authorizationId: string): string => `pickupGrant:${authorizationId}`;

export type NewPickupEntry = Omit<PickupEntryDoc, '_id' | '_rev' | 'docType'>;
export type NewGrant = Omit<GrantDoc, '_id' | '_rev' | 'docType'>;

export interface PickupStore {
  getEntry(pickupId: string): Promise<PickupEntryDoc | undefined>;
  entriesOf(studentId: string): Promise<PickupEntryDoc[]>;
  createEntry(entry: NewPickupEntry): Promise<PickupEntryDoc>;
  updateEntry(current: PickupEntryDoc, next: NewPickupEntry): Promise<PickupEntryDoc | 'CONFLICT'>;
  getGrant(authorizationId: string): Promise<GrantDoc | undefined>;
  grantsOf(studentId: string): Promise<GrantDoc[]>;
  createGrant(grant: NewGrant): Promise<GrantDoc>;
  updateGrant(current: GrantDoc, next: NewGrant): Promise<GrantDoc | 'CONFLICT'>;
  /** Every entry and grant, for the tablets' roster of every child (one read each). */
  allEntries(): Promise<PickupEntryDoc[]>;
  allGrants(): Promise<GrantDoc[]>;
  /**
   * Retention (0045): removes a child's pickup entries and grants (the adults' names and phones) once
   * the child is anonymised. Answers how many documents it removed.
   */
  removeOfStudent(studentId: string): Promise<number>;
}

const byStudent = async (db: Database, docType: string, studentId: string) =>
  (
    await db.find({
      selector: { docType, studentId },
      limit: 10_000,
      use_index: indexIn(db, 'by-docType-studentId'),
    })
  ).docs;

export const pickupStore = (db: Database): PickupStore => {
  const put = async <D extends { _id: string }>(doc: D): Promise<D & { _rev: string }> => ({
    ...doc,
    _rev: (await db.put(doc)).rev,
  });
  const cas = <D extends { _id: string; _rev: string }>(doc: D) => putDoc(db, doc, 'CONFLICT');
  return {
    getEntry: (id) => getDoc(db, PickupEntryDoc, pickupDocId(id)),
    entriesOf: async (studentId) =>
      (await byStudent(db, 'pickupEntry', studentId)).map((d) => decodeDoc(PickupEntryDoc, d._id, d)),
    createEntry: (entry) =>
      put({ _id: pickupDocId(entry.pickupId), docType: 'pickupEntry' as const, ...entry }),
    updateEntry: (current, next) =>
      cas({ _id: current._id, _rev: current._rev, docType: 'pickupEntry' as const, ...next }),
    getGrant: (id) => getDoc(db, GrantDoc, grantDocId(id)),
    grantsOf: async (studentId) =>
      (await byStudent(db, 'pickupGrant', studentId)).map((d) => decodeDoc(GrantDoc, d._id, d)),
    createGrant: (grant) =>
      put({ _id: grantDocId(grant.authorizationId), docType: 'pickupGrant' as const, ...grant }),
    updateGrant: (current, next) =>
      cas({ _id: current._id, _rev: current._rev, docType: 'pickupGrant' as const, ...next }),
    allEntries: () => listDocs(db, PickupEntryDoc, 'pickupEntry'),
    allGrants: () => listDocs(db, GrantDoc, 'pickupGrant'),
    async removeOfStudent(studentId) {
      const docs = [
        ...(await byStudent(db, 'pickupEntry', studentId)),
        ...(await byStudent(db, 'pickupGrant', studentId)),
      ];
      return removeEach(
        db,
        docs.map((d) => d._id),
      );
    },
  };
};
