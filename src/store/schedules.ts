/** Recurring schedules (decision 0031), one document each in the private database. */
import { randomUUID } from 'node:crypto';
import { ScheduleDoc, type ScheduleFields } from '../domain/schedules.js';
import { getDoc, listDocs } from './docs.js';
import { putDoc } from './docWrites.js';
import type { Database } from './pouch.js';

export const scheduleDocId = (scheduleId: string): string => `schedule:${scheduleId}`;

export interface ScheduleStore {
  get(scheduleId: string): Promise<ScheduleDoc | undefined>;
  /** Ordered by creation. */
  list(): Promise<ScheduleDoc[]>;
  create(fields: ScheduleFields): Promise<ScheduleDoc>;
  /** Compare-and-swap on `current._rev`. */
  update(current: ScheduleDoc, next: ScheduleFields): Promise<ScheduleDoc | 'CONFLICT'>;
}

export const scheduleStore = (db: Database): ScheduleStore => ({
  get: (scheduleId) => getDoc(db, ScheduleDoc, scheduleDocId(scheduleId)),
  list: async () =>
    (await listDocs(db, ScheduleDoc, 'schedule')).sort(
      (a, b) => a.createdAt.localeCompare(b.createdAt) || a._id.localeCompare(b._id),
    ),
  async create(fields) {
    const scheduleId = randomUUID();
    const doc = { ...fields, _id: scheduleDocId(scheduleId), docType: 'schedule' as const, scheduleId };
    const r = await db.put(doc);
    return { ...doc, _rev: r.rev };
  },
  update: (current, next) =>
    putDoc(
      db,
      {
        ...next,
        _id: current._id,
        docType: 'schedule' as const,
        scheduleId: current.scheduleId,
        _rev: current._rev,
      },
      'CONFLICT',
    ),
});
