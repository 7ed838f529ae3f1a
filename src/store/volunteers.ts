/**
 * Volunteers in a session's room, in the private database: one document per stay,
 * `volunteer:<sessionId>:<checkedInAt>:<volunteerId>`, so a session's volunteers are one range read
 * in the order they came. Ids are random; a check-out is a compare-and-swap.
 */
import { VolunteerDoc } from '../domain/volunteers.js';
import { decodeDoc } from './docs.js';
import { putDoc } from './docWrites.js';
import type { Database } from './pouch.js';

const sessionPrefix = (sessionId: string): string => `volunteer:${sessionId}:`;

export type NewVolunteer = Omit<VolunteerDoc, '_id' | '_rev' | 'docType'>;

export interface VolunteerStore {
  /** Every stay at the session, oldest first. */
  ofSession(sessionId: string): Promise<VolunteerDoc[]>;
  create(volunteer: NewVolunteer): Promise<VolunteerDoc>;
  /** Compare-and-swap on `current._rev`; `CONFLICT` when it changed since it was read. */
  update(current: VolunteerDoc, next: NewVolunteer): Promise<VolunteerDoc | 'CONFLICT'>;
}

export const volunteerStore = (db: Database): VolunteerStore => ({
  async ofSession(sessionId) {
    const prefix = sessionPrefix(sessionId);
    const found = await db.allDocs({ startkey: prefix, endkey: `${prefix}\ufff0`, include_docs: true });
    return found.rows.flatMap((r) => (r.doc === undefined ? [] : [decodeDoc(VolunteerDoc, r.id, r.doc)]));
  },
  async create(volunteer) {
    const doc = {
      _id: `${sessionPrefix(volunteer.sessionId)}${volunteer.checkedInAt}:${volunteer.volunteerId}`,
      docType: 'volunteer' as const,
      ...volunteer,
    };
    return { ...doc, _rev: (await db.put(doc)).rev };
  },
  update: (current, next) =>
    putDoc(db, { _id: current._id, _rev: current._rev, docType: 'volunteer' as const, ...next }, 'CONFLICT'),
});
