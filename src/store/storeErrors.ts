/** PouchDB reports failures as objects with an HTTP-like `status`; these read them without casts. */
const statusOf = (e: unknown): number | undefined =>
  typeof e === 'object' && e !== null && 'status' in e && typeof e.status === 'number' ? e.status : undefined;

/**
 * The embedded adapter reports a refused document of `bulkDocs` as `{ status: 409, error: true }`;
 * CouchDB, through the http adapter, as `{ error: 'conflict', reason }` with no status.
 */
export const isConflict = (e: unknown): boolean =>
  statusOf(e) === 409 || (typeof e === 'object' && e !== null && 'error' in e && e.error === 'conflict');

/** A `bulkDocs` result that stored its document; anything else (whatever its `error` holds) did not. */
export const isStored = (r: PouchDB.Core.Response | PouchDB.Core.Error): r is PouchDB.Core.Response =>
  'ok' in r && r.ok === true;
export const isNotFound = (e: unknown): boolean => statusOf(e) === 404;

const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'EPIPE',
]);

/**
 * The store could not be reached or could not write: CouchDB down or unreachable (the http adapter's
 * fetch fails with a connection error code), or the disk full under the embedded store (LevelDB's
 * "IO error … No space left on device"). A request that meets one is answered 503, not 500: nothing
 * is wrong with it, and it may be sent again.
 */
export const isStoreUnavailable = (e: unknown): boolean => {
  if (typeof e !== 'object' || e === null) return false;
  if ('code' in e && typeof e.code === 'string' && (UNREACHABLE_CODES.has(e.code) || e.code === 'ENOSPC'))
    return true;
  if ('name' in e && e.name === 'FetchError') return true;
  const message = 'message' in e && typeof e.message === 'string' ? e.message : '';
  return /No space left on device|ENOSPC/.test(message);
};
