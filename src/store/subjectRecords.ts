/**
 * What the data-subject export (LGPD art. 18) reads about one student beyond the record and its
 * consents: every event naming the student, and the check-ins, pickup entries and grants of the
 * student, each read whole through its index (no paging: the export is everything held).
 */
import type * as t from 'io-ts';
import { CheckinDoc } from '../domain/checkin.js';
import { EventDoc } from '../domain/event.js';
import { GrantDoc, PickupEntryDoc } from '../domain/pickup.js';
import { decodeDoc } from './docs.js';
import { indexIn } from './indexes.js';
import type { Database } from './pouch.js';

/** More than any one student gathers; the export must not stop short of what is held. */
const EVERYTHING = 100_000;

export interface SubjectRecords {
  /** Every event whose subject is the student, in no particular order. */
  eventsOf(studentId: string): Promise<EventDoc[]>;
  checkinsOf(studentId: string): Promise<CheckinDoc[]>;
  pickupEntriesOf(studentId: string): Promise<PickupEntryDoc[]>;
  grantsOf(studentId: string): Promise<GrantDoc[]>;
}

export const subjectRecords = (dbs: {
  readonly events: Database;
  readonly private: Database;
}): SubjectRecords => {
  const ofStudent = async <C extends t.Mixed>(codec: C, docType: string, studentId: string) =>
    (
      await dbs.private.find({
        selector: { docType, studentId },
        limit: EVERYTHING,
        use_index: indexIn(dbs.private, 'by-docType-studentId'),
      })
    ).docs.map((d): t.TypeOf<C> => decodeDoc(codec, d._id, d));
  return {
    async eventsOf(studentId) {
      const found = await dbs.events.find({
        selector: { subjectId: studentId },
        limit: EVERYTHING,
        use_index: indexIn(dbs.events, 'by-subject-and-time'),
      });
      return found.docs.map((d) => decodeDoc(EventDoc, d._id, d));
    },
    checkinsOf: (studentId) => ofStudent(CheckinDoc, 'checkin', studentId),
    pickupEntriesOf: (studentId) => ofStudent(PickupEntryDoc, 'pickupEntry', studentId),
    grantsOf: (studentId) => ofStudent(GrantDoc, 'pickupGrant', studentId),
  };
};
