/**
 * The ADMIN's retention periods (decision 0045), one document in the private database beside the
 * check-in configuration. Absent until the first PUT: the defaults apply. Read once per run, preview
 * or GET, so it is not cached.
 */
import { RetentionConfigDoc, type RetentionPeriods } from '../domain/retention.js';
import { getDoc } from './docs.js';
import { retryOnConflict } from './docWrites.js';
import type { Database } from './pouch.js';

const CONFIG_ID = 'retention-config';

export interface RetentionConfigStore {
  /** The stored periods and when they were set; undefined while none were. */
  get(): Promise<{ readonly periods: RetentionPeriods; readonly updatedAt: string } | undefined>;
  /** Replaces the periods (last writer wins); `CONFLICT` when other writers kept winning. */
  save(periods: RetentionPeriods, at: string): Promise<'SAVED' | 'CONFLICT'>;
}

export const retentionConfigStore = (db: Database): RetentionConfigStore => ({
  async get() {
    const doc = await getDoc(db, RetentionConfigDoc, CONFIG_ID);
    return doc === undefined
      ? undefined
      : {
          periods: {
            deletedStudentDays: doc.deletedStudentDays,
            attendanceDays: doc.attendanceDays,
            pageDays: doc.pageDays,
            auditDays: doc.auditDays,
          },
          updatedAt: doc.updatedAt,
        };
  },
  save: (periods, at) =>
    retryOnConflict(
      5,
      async () => {
        const current = await getDoc(db, RetentionConfigDoc, CONFIG_ID);
        await db.put({
          _id: CONFIG_ID,
          ...(current === undefined ? {} : { _rev: current._rev }),
          docType: 'retentionConfig',
          deletedStudentDays: periods.deletedStudentDays,
          attendanceDays: periods.attendanceDays,
          pageDays: periods.pageDays,
          auditDays: periods.auditDays,
          updatedAt: at,
        });
        return 'SAVED' as const;
      },
      () => 'CONFLICT' as const,
    ),
});
