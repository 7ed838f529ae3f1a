/** An attendance mark on one child's day, as the pipeline holds it: for the projection stores' tests. */
import type { AspectEventRecord } from '../../src/rules/projections.js';
import { fromStoredEvent } from '../../src/store/projections.js';

/** `MARK_PRESENT` or `MARK_ABSENT` by an ADMIN or a CHAMADOR on 2026-11-29, `minute` past 08:00. */
export const attendanceMark = (
  studentId: string,
  eventId: string,
  type: 'MARK_PRESENT' | 'MARK_ABSENT',
  role: 'ADMIN' | 'CHAMADOR',
  base: string | null,
  minute: number,
): AspectEventRecord => {
  const record = fromStoredEvent({
    eventId,
    type,
    baseVersion: base,
    subjectId: studentId,
    userId: role === 'ADMIN' ? 'admin-1' : 'caller-1',
    role,
    deviceId: null,
    clientTimestamp: `2026-11-29T08:${String(minute).padStart(2, '0')}:00.000Z`,
    serverTimestamp: `2026-11-29T09:${String(minute).padStart(2, '0')}:00.000Z`,
    payload: { actionType: type },
  });
  if (record === undefined) throw new Error('undecodable mark');
  return record;
};
