/**
 * A read cache for documents on the hot paths: the session and user every authenticated request
 * reads; the class session, child, check-in record and configuration every check-in and
 * check-out reads; and the aspects the pipeline and the check-in desk read (`src/store/projections.ts`).
 *
 * Correctness rests on one fact: the embedded store is a LevelDB directory that one process holds
 * locked, so every write to it passes through this process, and the stores call `forget` (or
 * `remember`, with what they just stored) around each write of a cached id. A revocation is therefore
 * seen by the next request, as decision 0013 asks. A read of an id that was in flight while that id
 * was forgotten or remembered does not fill the cache (it may have read the old value). In CouchDB
 * mode other instances write too: sessions and users are not cached there (`noDocCache`: a cache fed
 * by the change feed would let a revoked session act for the feed's delay), and the documents whose
 * readers tolerate that delay are, forgotten by the change feeds as well (`forgetChanged`; decision
 * 0019, eighth round).
 */
import { boundedCache } from '../lib/boundedCache.js';

export interface DocCache<T> {
  /** The cached value of `id`, or what `load` reads (remembered unless a write intervened). */
  read(id: string, load: () => Promise<T | undefined>): Promise<T | undefined>;
  /** Like `read` for many ids: the cached ones from memory, the others in one `load` of the missing. */
  readMany(
    ids: ReadonlyArray<string>,
    load: (missing: ReadonlyArray<string>) => Promise<Map<string, T>>,
  ): Promise<Map<string, T>>;
  /**
   * Records what a write this process just made stored (its value is then the current one), or, with
   * `undefined`, that no document `id` exists (an id this process just minted).
   */
  remember(id: string, value: T | undefined): void;
  /** Drops `id`; stores call it around their writes, the service for each change the feed reports. */
  forget(id: string): void;
  /** Drops everything (a reset of the documents behind it). */
  clear(): void;
  readonly size: () => number;
  /** Whether `id` is held (a value, or the knowledge that no such document exists). */
  readonly has: (id: string) => boolean;
  /** The value held for `id`, without loading anything; undefined when none is held. */
  readonly peek: (id: string) => T | undefined;
}

export const docCache = <T>(maxEntries = 10_000): DocCache<T> => {
  // Boxed: the cache holds the knowledge that a document is absent too, and lru-cache holds no
  // `undefined`. Oldest fill first out (`src/lib/boundedCache.ts`).
  const entries = boundedCache<{ readonly value: T | undefined }>({ maxEntries });
  // A load in flight holds a token for its id; a forget or remember of that id takes the token away,
  // and a load whose token is gone keeps its value to itself (it may have read the old document).
  // Per id, so a stream of writes to other documents does not starve the cache of fills.
  const loading = new Map<string, symbol>();
  const fill = (id: string, value: T | undefined) => {
    entries.set(id, { value });
  };
  const begin = (id: string): symbol => {
    const token = Symbol(id);
    loading.set(id, token);
    return token;
  };
  /** True when no write of `id` happened since `token` was taken (and releases the token). */
  const stillCurrent = (id: string, token: symbol): boolean => {
    if (loading.get(id) !== token) return false;
    loading.delete(id);
    return true;
  };
  return {
    async read(id, load) {
      const held = entries.get(id);
      if (held !== undefined) return held.value;
      const token = begin(id);
      let value: T | undefined;
      try {
        value = await load();
      } catch (e) {
        stillCurrent(id, token);
        throw e;
      }
      if (stillCurrent(id, token)) fill(id, value);
      return value;
    },
    async readMany(ids, load) {
      const out = new Map<string, T>();
      const missing: string[] = [];
      for (const id of ids) {
        const held = entries.get(id);
        if (held === undefined) missing.push(id);
        else if (held.value !== undefined) out.set(id, held.value);
      }
      if (missing.length === 0) return out;
      const tokens = missing.map((id) => [id, begin(id)] as const);
      let loaded: Map<string, T>;
      try {
        loaded = await load(missing);
      } catch (e) {
        for (const [id, token] of tokens) stillCurrent(id, token);
        throw e;
      }
      for (const [id, token] of tokens) {
        const v = loaded.get(id);
        if (v !== undefined) out.set(id, v);
        // Absent ones are remembered as absent too: the next write of them forgets that.
        if (stillCurrent(id, token)) fill(id, v);
      }
      return out;
    },
    remember(id, value) {
      loading.delete(id);
      fill(id, value);
    },
    forget(id) {
      loading.delete(id);
      entries.delete(id);
    },
    clear() {
      loading.clear();
      entries.clear();
    },
    size: () => entries.size(),
    has: (id) => entries.has(id),
    peek: (id) => entries.get(id)?.value,
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
  has: () => false,
  peek: () => undefined,
});

/**
 * `inner` holding at most `maxWeight` in all, by `weigh` of each value held: the oldest fills and
 * writes are dropped first, and a value heavier than the whole budget is not kept. For caches whose
 * entries vary by orders of magnitude (an aspect holds one event or hundreds), where a bound on the
 * number of entries bounds nothing. The weights are counted here, beside `inner`, from what `inner`
 * holds after each fill or write (a fill that raced a write holds the write's value, or nothing).
 * `inner` may still drop entries on its own bound; such an entry is counted until it is the oldest
 * here, so the budget is only ever kept more strictly than asked.
 */
export const weighedCache = <T>(
  inner: DocCache<T>,
  weigh: (value: T) => number,
  maxWeight: number,
): DocCache<T> => {
  // The weight of each value counted, youngest last; the bounded cache keeps the budget and names
  // each id it drops to keep it, which `inner` then forgets.
  const weights = boundedCache<number>({ maxWeight, weigh: (w) => w }, (id) => inner.forget(id));
  const count = (id: string) => {
    weights.delete(id);
    // Absent documents (held as such) weigh nothing, and so do values of no weight.
    const value = inner.peek(id);
    if (value === undefined) return;
    const w = weigh(value);
    if (w > 0 && !weights.set(id, w)) inner.forget(id);
  };
  return {
    async read(id, load) {
      let loaded = false;
      const value = await inner.read(id, () => {
        loaded = true;
        return load();
      });
      if (loaded) count(id);
      return value;
    },
    async readMany(ids, load) {
      let loaded: ReadonlyArray<string> = [];
      const out = await inner.readMany(ids, (missing) => {
        loaded = missing;
        return load(missing);
      });
      for (const id of loaded) count(id);
      return out;
    },
    remember(id, value) {
      inner.remember(id, value);
      count(id);
    },
    forget(id) {
      inner.forget(id);
      weights.delete(id);
    },
    clear() {
      inner.clear();
      weights.clear();
    },
    size: inner.size,
    has: inner.has,
    peek: inner.peek,
  };
};

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

/**
 * What a change feed tells a cache: `id` changed to `rev`. Forgotten unless the cache holds that very
 * revision (this process's own write, which it remembered, coming back through the feed): the next
 * read of a document another writer changed goes to the store.
 */
export const forgetChanged = <T>(
  cache: DocCache<T>,
  id: string,
  rev: string | undefined,
  revOf: (value: T) => string | undefined,
): void => {
  const held = cache.peek(id);
  if (rev !== undefined && held !== undefined && revOf(held) === rev) return;
  cache.forget(id);
};

/** The `_rev` of a stored document read back as `unknown`. */
export const storedRev = (doc: unknown): string | undefined =>
  typeof doc === 'object' && doc !== null && '_rev' in doc && typeof doc._rev === 'string'
    ? doc._rev
    : undefined;

/**
 * A listing (every document of some kinds) held until a change of one of its documents is told: for a
 * reader that follows the same change feed and is triggered by it, the roster's passes (issue #23:
 * each pass listed classes, sessions and the pickup lists again, four `_all_docs` per creation of a
 * student on CouchDB). A load that a change raced keeps its result to itself.
 */
export interface ListingCache<T> {
  read(): Promise<T>;
  /** A document `id` changed: the listing is read again if it is one of its kinds. */
  changed(id: string): void;
  clear(): void;
}

export const listingCache = <T>(prefixes: ReadonlyArray<string>, load: () => Promise<T>): ListingCache<T> => {
  let held: { readonly value: T } | undefined;
  let generation = 0;
  const clear = () => {
    generation += 1;
    held = undefined;
  };
  return {
    async read() {
      if (held !== undefined) return held.value;
      const started = generation;
      const value = await load();
      if (generation === started) held = { value };
      return value;
    },
    changed(id) {
      if (prefixes.some((p) => id.startsWith(p))) clear();
    },
    clear,
  };
};
