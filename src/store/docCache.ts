/**
 * A read cache for documents that every authenticated request reads (its session and its user).
 *
 * Correctness rests on one fact: the embedded store is a LevelDB directory that one process holds
 * locked, so every write to it passes through this process, and the stores call `forget` before and
 * after each write of a cached id. A revocation is therefore seen by the next request, as decision
 * 0013 asks. A read that was in flight while anything was forgotten does not fill the cache (it may
 * have read the old value). In CouchDB mode other instances write too, so the service uses
 * `noDocCache` there: a cache fed by the change feed would let a revoked session act for the feed's
 * delay (see decision 0019).
 */

export interface DocCache<T> {
  /** The cached value of `id`, or what `load` reads (remembered unless a write intervened). */
  read(id: string, load: () => Promise<T | undefined>): Promise<T | undefined>;
  /** Drops `id`; stores call it around their writes, the service for each change the feed reports. */
  forget(id: string): void;
  readonly size: () => number;
}

export const docCache = <T>(maxEntries = 10_000): DocCache<T> => {
  const entries = new Map<string, T | undefined>();
  // Any forget bumps the epoch; a fill that saw the epoch move keeps its value to itself.
  let epoch = 0;
  return {
    async read(id, load) {
      if (entries.has(id)) return entries.get(id);
      const started = epoch;
      const value = await load();
      if (epoch === started) {
        // Oldest first out: Map keeps insertion order, so the first key is the least recently filled.
        if (entries.size >= maxEntries) {
          const oldest = entries.keys().next();
          if (oldest.done !== true) entries.delete(oldest.value);
        }
        entries.set(id, value);
      }
      return value;
    },
    forget(id) {
      epoch += 1;
      entries.delete(id);
    },
    size: () => entries.size,
  };
};

/** Reads go to the store every time (CouchDB mode, where other instances write too). */
export const noDocCache = <T>(): DocCache<T> => ({
  read: (_id, load) => load(),
  forget: () => undefined,
  size: () => 0,
});

/** Runs a write of `id` with the cache forgetting it before and after, whatever the write's outcome. */
export const writingThrough = async <R>(
  cache: DocCache<unknown>,
  id: string,
  write: () => Promise<R>,
): Promise<R> => {
  cache.forget(id);
  try {
    return await write();
  } finally {
    cache.forget(id);
  }
};
