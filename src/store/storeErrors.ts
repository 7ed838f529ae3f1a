import { DeadlinePassed } from '../lib/deadline.js';

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

/**
 * A database of the embedded store that refuses writes: its LevelDB met an I/O error (a full disk,
 * most often) and is not trusted with another write until it has been closed and opened again
 * (`guardedLevel.ts`). `cause` holds LevelDB's own error when this is the write that met it.
 */
export class StoreFailedError extends Error {
  override readonly name = 'StoreFailedError';
  readonly code = 'ESTOREFAILED';
  constructor(
    readonly database: string,
    cause?: unknown,
  ) {
    super(`the database ${database} refuses writes after an I/O error, until it is reopened`, { cause });
  }
}

/** The store is closing (the service is stopping): a call that comes this late is refused, 503. */
export class StoreClosingError extends Error {
  override readonly name = 'StoreClosingError';
  readonly code = 'ESTORECLOSING';
  constructor(database: string) {
    super(`the store is closing; ${database} takes no new index calls`);
  }
}

/**
 * A CouchDB request whose answer was silent for longer than the store's limit (`STORE_TIMEOUT_MS`):
 * the node is frozen, stalled or cut off without closing the connection (`boundedFetch.ts`).
 */
export class StoreTimeoutError extends Error {
  override readonly name = 'StoreTimeoutError';
  readonly code = 'ESTORETIMEOUT';
  /** `call`: the request that went silent (method and path, never its query or credentials). */
  constructor(
    readonly silentMs: number,
    readonly call?: string,
  ) {
    // The call in the message: a start that fails on it prints only the message, and which database
    // and endpoint went silent is what says whether an index build, a compaction or a node is behind.
    super(`the store did not answer${call === undefined ? '' : ` ${call}`} for ${silentMs} ms`);
  }
}

/** Whether the store's silence limit cut the call (`StoreTimeoutError`), however it was wrapped. */
export const isStoreTimeout = (e: unknown): boolean => {
  for (const c of causes(e)) if (c instanceof StoreTimeoutError) return true;
  return false;
};

/**
 * A CouchDB cluster took a write on fewer copies than its write quorum (`quorumWrites.ts`): not
 * acknowledged, withdrawn where it can be, answered 503 so that the client sends it again. Shaped as
 * a `_bulk_docs` error result (`status`, `error`, `reason`, `id`) so that it stands in for one.
 */
export class QuorumNotMetError extends Error {
  override readonly name = 'quorum_not_met';
  readonly code = 'ESTOREQUORUM';
  readonly status = 503;
  readonly error = 'quorum_not_met';
  readonly reason = 'written to fewer copies than the write quorum';
  constructor(readonly id: string) {
    super(`the store wrote ${id} to fewer copies than its write quorum`);
  }
}

/** A write a cluster took on fewer copies than its quorum, however it was wrapped (a bulk result, a put). */
export const isShortOfQuorum = (e: unknown): boolean => {
  for (const c of causes(e)) if (c instanceof QuorumNotMetError) return true;
  return false;
};

/** The errors an error wraps: levelup's `WriteError` and `ReadError` keep LevelDB's error as `cause`. */
const causes = function* (e: unknown): Generator<unknown> {
  let current = e;
  // Bounded: a cause chain is short, and a cyclic one must not hang the error handler.
  for (let depth = 0; depth < 8 && typeof current === 'object' && current !== null; depth += 1) {
    yield current;
    current = 'cause' in current ? current.cause : undefined;
  }
};

/** The error, or one it wraps, is a refusal of a failed embedded database (never a bug's error). */
export const isStoreFailure = (e: unknown): boolean => {
  for (const c of causes(e)) if (c instanceof StoreFailedError) return true;
  return false;
};

/**
 * The refusal of a write to a pouchdb-find index database (`<name>-mrview-<hash>`), or an error caused
 * by one: what pouchdb-find's index update rejects with where nothing awaits it (see `src/main.ts`).
 */
export const isIndexWriteRefusal = (e: unknown): boolean => {
  for (const c of causes(e))
    if (c instanceof StoreFailedError && c.database.includes('-mrview-')) return true;
  return false;
};

/**
 * LevelDB's status strings for a failed write: "IO error: …" (ENOSPC, EIO, …) and "Corruption: …". After
 * one of these LevelDB 1.20 may have left a torn record in its log, so the database is not written again.
 */
export const isLevelDbIoError = (e: unknown): boolean =>
  e instanceof Error && /^(IO error|Corruption)\b/.test(e.message);

const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'EPIPE',
  // Node's fetch (undici) when the server closed the connection mid-answer, or a kept-alive socket
  // it had closed was reused: the outcome of a write is then unknown, as with a reset.
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
]);

/** The system error code an error carries (`ECONNREFUSED`, `ENOSPC`, …), if any. */
export const codeOf = (e: unknown): string | undefined =>
  typeof e === 'object' && e !== null && 'code' in e && typeof e.code === 'string' ? e.code : undefined;

/**
 * The store could not be reached or could not write: CouchDB down or unreachable (a connection error
 * code, which undici's fetch wraps in a TypeError "fetch failed" as its cause), silent for longer than
 * the limit (`StoreTimeoutError`), short of its write quorum (`QuorumNotMetError`) or answering 503
 * itself; a database of the embedded store failed after an I/O error (`StoreFailedError`), or the disk
 * full (LevelDB's "IO error … No space left on device"); or the store did not answer before the
 * request's deadline (`DeadlinePassed`, decision 0046). A request that meets one is answered 503, not
 * 500: nothing is wrong with it, and it may be sent again.
 */
export const isStoreUnavailable = (e: unknown): boolean => {
  if (typeof e !== 'object' || e === null) return false;
  if (isStoreFailure(e) || e instanceof StoreClosingError) return true;
  for (const c of causes(e)) {
    if (
      c instanceof StoreTimeoutError ||
      c instanceof DeadlinePassed ||
      c instanceof QuorumNotMetError ||
      statusOf(c) === 503
    )
      return true;
    const code = codeOf(c);
    if (code !== undefined && UNREACHABLE_CODES.has(code)) return true;
  }
  if (codeOf(e) === 'ENOSPC') return true;
  if ('name' in e && e.name === 'FetchError') return true;
  const message = 'message' in e && typeof e.message === 'string' ? e.message : '';
  return /No space left on device|ENOSPC/.test(message);
};
