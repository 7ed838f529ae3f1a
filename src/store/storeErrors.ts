/** PouchDB reports failures as objects with an HTTP-like `status`; these read them without casts. */
const statusOf = (e: unknown): number | undefined =>
  typeof e === 'object' && e !== null && 'status' in e && typeof e.status === 'number' ? e.status : undefined;

export const isConflict = (e: unknown): boolean => statusOf(e) === 409;
export const isNotFound = (e: unknown): boolean => statusOf(e) === 404;
