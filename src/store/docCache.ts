/**
 * A read cache for documents on the hot paths: the session and user every authenticated request
 * reads, and the aspects the pipeline and the check-in desk read (`src/store/projections.ts`).
 *
 * Correctness rests on one fact: the embedded store is a LevelDB directory that one process holds
 * locked, so every write to it passes through this process, and the stores call `forget` (or
 * `remember`, with what they just stored) around each write of a cached id. A revocation is therefore
 * seen by the next request, as decision 0013 asks. A read that was in flight while anything was
 * forgotten or remembered does not fill the cache (it may have read the old value); under a stream of
 * writes that costs hits, never correctness. In CouchDB mode other instances write too, so the
 * service uses `noDocCache` there: a cache fed by the change feed would let a revoked session act for
 * the feed's delay (see decision 0019).
 */

export interface DocCache<T> {
  /** The cached value of `id`, or what `load` reads (remembered unless a write intervened). */
  read(id: string, load: () => Promise<T | undefined>): Promise<T | undefined>;
  /** Like `read` for many ids: the cached ones from memory, the others in one `load` of the missing. */
  readMany(
    ids: ReadonlyArray<string>,
    load: (missing: ReadonlyArray<string>) => Promise<Map<string, T>>,
  ): Promise<Map<string, T>>;
  /** Records what a write this process just made stored (its value is then the current one). */
  remember(id: string, value: T): void;
  /** Drops `id`; stores call it around their writes, the service for each change the feed reports. */
  forget(id: string): void;
  /** Drops everything (a reset of the documents behind it). */
  clear(): void;
  readonly size: () => number;
}

export const docCache = <T>(maxEntries = 10_000): DocCache<T> => {
  const entries = new Map<string, T | undefined>();
  // Any forget bumps the epoch; a fill that saw the epoch move keeps its value to itself.
  let epoch = 0;
  const fill = (id: string, value: T | undefined) => {
    entries.delete(id);
    // Oldest first out: Map keeps insertion order, so the first key is the least recently filled.
    if (entries.size >= maxEntries) {
      const oldest = entries.keys().next();
      if (oldest.done !== true) entries.delete(oldest.value);
    }
    entries.set(id, value);
  };
  return {
    async read(id, load) {
      if (entries.has(id)) return entries.get(id);
      const started = epoch;
      const value = await load();
      if (epoch === started) fill(id, value);
      return value;
    },
    async readMany(ids, load) {
      const out = new Map<string, T>();
      const missing: string[] = [];
      for (const id of ids) {
        if (!entries.has(id)) missing.push(id);
        else {
          const v = entries.get(id);
          if (v !== undefined) out.set(id, v);
        }
      }
      if (missing.length === 0) return out;
      const started = epoch;
      const loaded = await load(missing);
      for (const id of missing) {
        const v = loaded.get(id);
        if (v !== undefined) out.set(id, v);
        // Absent ones are remembered as absent too: the next write of them forgets that.
        if (epoch === started) fill(id, v);
      }
      return out;
    },
    remember(id, value) {
      epoch += 1;
      fill(id, value);
    },
    forget(id) {
      epoch += 1;
      entries.delete(id);
    },
    clear() {
      epoch += 1;
      entries.clear();
    },
    size: () => entries.size,
  };
};

/** Reads go to the store every time (CouchDB mode, where other instances write too). */
export const noDocCache = <T>(): DocCache<T> => ({
  read: (_id, load) => load(),
  readMany: (ids, load) => load(ids),
  remember: () => undefined,
  forget: () => undefined,
  clear: () => undefined,
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
