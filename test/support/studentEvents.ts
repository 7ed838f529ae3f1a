import { randomUUID } from 'node:crypto';
import type { NewEvent } from '../../src/domain/event.js';

/** Child `s-{i}`'s STUDENT_CREATED event, by an ADMIN, stored at `at`. */
export const studentCreated = (i: number, at: string): NewEvent => ({
  eventId: randomUUID(),
  type: 'STUDENT_CREATED',
  subjectType: 'STUDENT',
  subjectId: `s-${i}`,
  payload: { displayName: `Criança ${i}` },
  actor: { userId: 'u-1', role: 'ADMIN' },
  deviceId: null,
  clientTimestamp: at,
  serverTimestamp: at,
});
