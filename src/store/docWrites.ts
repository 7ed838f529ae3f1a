/**
 * Writes that may lose a race, with the loss as a value. A create under an id already taken (most
 * often a retry under the same Idempotency-Key) and a compare-and-swap on a revision that is no
 * longer current both meet the store's conflict; the caller names what that conflict means to it
 * (`EXISTS`, `CONFLICT`, `TAKEN`, …). Any other failure is not a lost race and is thrown as it came.
 * The embedded store and CouchDB report the conflict differently; `isConflict` reads both.
 */
import type * as t from 'io-ts';
import { patiently } from './boundedFetch.js';
import { getDoc } from './docs.js';
import type { Database } from './pouch.js';
import { isConflict, isNotFound, isStoreTimeout } from './storeErrors.js';

/**
 * What writes one document: the database itself, or a wrapper around its `put` (a cache written
 * through, say) that answers as `put` does.
 */
export interface DocWriter {
  put(doc: { readonly _id: string; readonly _rev?: string }): Promise<{ readonly rev: string }>;
}

/** `write`'s result, or `onConflict` when the store refused it for a conflict. */
export const conflictAs = async <T, const A>(onConflict: A, write: () => Promise<T>): Promise<T | A> => {
  try {
    return await write();
  } catch (e) {
    if (isConflict(e)) return onConflict;
    throw e;
  }
};

/**
 * Runs `attempt` (a read, and a write on what it read) again while its write loses the race to
 * another writer, at most `attempts` times, each reading afresh; `contended` answers (or throws) when
 * every one lost. `attempt` is told which try it is (0 first).
 */
export const retryOnConflict = async <T, R>(
  attempts: number,
  attempt: (tried: number) => Promise<T>,
  contended: () => R,
): Promise<T | R> => {
  for (let tried = 0; tried < attempts; tried += 1) {
    try {
      return await attempt(tried);
    } catch (e) {
      if (!isConflict(e)) throw e;
    }
  }
  return contended();
};

/** `retryOnConflict`'s `contended` for a write that must land: the document named is fought over. */
export const stayedContended = (what: string) => (): never => {
  throw new Error(`${what} stayed contended`);
};

/**
 * Puts `doc` and answers it with its new revision: a create without `_rev`, a compare-and-swap with
 * one. `onConflict` when the id was taken or the revision was not the current one.
 */
export const putDoc = <D extends { readonly _id: string; readonly _rev?: string }, const A>(
  writer: DocWriter,
  doc: D,
  onConflict: A,
): Promise<(D & { _rev: string }) | A> =>
  conflictAs(onConflict, async () => ({ ...doc, _rev: (await writer.put(doc)).rev }));

/**
 * Deletes the revision `current` holds; `CONFLICT` when that revision is not the current one. Both
 * backends answer a revision they do not hold, a deleted one included, with a conflict, so a removal
 * retried after the first took effect answers `CONFLICT` too: the caller reads again to tell a
 * change from a removal. A not-found answer counts as removed.
 */
export const removeDoc = async (
  db: Database,
  current: { readonly _id: string; readonly _rev: string },
): Promise<'REMOVED' | 'CONFLICT'> => {
  try {
    await db.remove(current._id, current._rev);
    return 'REMOVED';
  } catch (e) {
    if (isNotFound(e)) return 'REMOVED';
    if (isConflict(e)) return 'CONFLICT';
    throw e;
  }
};

/**
 * The document under `id`, created with `body()` when there is none. Of two instances creating it at
 * once the first write stands, and both answer it: the one that lost reads the winner's.
 */
export const createOnce = async <A>(
  db: Database,
  codec: t.Type<A, unknown>,
  id: string,
  body: () => Readonly<Record<string, unknown>>,
): Promise<A> => {
  const found = await getDoc(db, codec, id);
  if (found !== undefined) return found;
  await conflictAs(undefined, () => db.put({ ...body(), _id: id }));
  const stands = await getDoc(db, codec, id);
  if (stands === undefined) throw new Error(`${id} vanished after its creation`);
  return stands;
};

/**
 * Takes a create-only claim (a name or an email kept unique across instances): `claim` is written
 * under its id unless another holds it. A claim already the caller's (`owns`) is kept; another's is
 * taken over, by compare-and-swap on its revision, only when `stale` says its holder no longer stands
 * (a creation that failed half-way). True when the claim is the caller's.
 */
export const takeClaim = async <A extends { readonly _rev: string }>(
  db: Database,
  codec: t.Type<A, unknown>,
  claim: Omit<A, '_rev'> & { readonly _id: string },
  owns: (held: A) => boolean,
  stale: (held: A) => Promise<boolean>,
): Promise<boolean> => {
  const taken = await conflictAs(false, async () => {
    await db.put(claim);
    return true;
  });
  if (taken) return true;
  const held = await getDoc(db, codec, claim._id);
  if (held === undefined) return false;
  if (owns(held)) return true;
  if (!(await stale(held))) return false;
  return conflictAs(false, async () => {
    await db.put({ ...claim, _rev: held._rev });
    return true;
  });
};

/** How often a create-once write cut by the silence limit is sent (decision 0064). */
export const SENDS_AFTER_SILENCE = 3;

/**
 * Sends a bulk write of create-once documents (ids that name their content: an event, an imported
 * student) again when the silence limit cut its answer, up to `SENDS_AFTER_SILENCE` sends in all. A
 * cut answer says nothing of the write: CouchDB may have stored all of it, part or none. Sent again,
 * what was stored answers a conflict, which the caller reads as "stored before" once it knows the
 * content is its own (`again`); the rest is stored. Beside load average 12 to 24 a 500-document write
 * sat silent past the 5 s limit behind the other writes of its database, and the whole file answered
 * 503 for it; a limit met once is not the store gone. Each send waits `patiently` (four times the
 * store's limit), which only these writes do: a longer limit for every call would hold the door's
 * requests as long when a node stops answering.
 */
export const sentAgainAfterSilence = async <T>(
  write: () => Promise<T>,
): Promise<{ readonly result: T; readonly again: boolean }> => {
  for (let send = 1; ; send += 1) {
    try {
      return { result: await patiently(write), again: send > 1 };
    } catch (e) {
      if (!isStoreTimeout(e) || send >= SENDS_AFTER_SILENCE) throw e;
    }
  }
};
