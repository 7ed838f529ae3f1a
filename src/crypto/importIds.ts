/**
 * Ids of imported students, derived from what identifies the child in the file (decision 0030): the
 * same row gets the same id on every import and on every instance, so a re-import or two instances
 * importing at once find one student instead of making two. Keyed (HMAC with a key derived from the
 * deployment's secret), so an id does not reveal the external id or name it came from, and nobody
 * outside can compute the id of a child they know.
 */
import { createHash, createHmac } from 'node:crypto';

/** A UUID of version 8 (RFC 9562, vendor-specific) made of the first 122 bits of HMAC-SHA-256. */
export const derivedStudentId = (key: Uint8Array, rowKey: string): string =>
  uuidOf(createHmac('sha256', key).update(rowKey, 'utf8').digest());

/**
 * The id of an imported student's STUDENT_CREATED event, from the student's id (which is keyed
 * already): sending a file again after a failure finds the events its first attempt stored
 * (decision 0057). A UUID of version 8 like the student's, from SHA-256 under a label of its own.
 */
export const importedCreationEventId = (studentId: string): string =>
  uuidOf(createHash('sha256').update(`chamada imported STUDENT_CREATED ${studentId}`, 'utf8').digest());

const uuidOf = (digest: Buffer): string => {
  const h = digest;
  h[6] = ((h[6] ?? 0) & 0x0f) | 0x80;
  h[8] = ((h[8] ?? 0) & 0x3f) | 0x80;
  const hex = h.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
};
