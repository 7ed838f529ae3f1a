/**
 * The one bounded in-memory cache of the service, on `lru-cache`: the document read caches
 * (`src/store/docCache.ts`), the weight budget of the aspect cache, and the verified access tokens
 * (`src/auth/verifiedTokens.ts`) all keep their bound through it.
 *
 * Oldest fill first out: reads here `peek`, so reading an entry does not keep it longer. The caches
 * above decide freshness on writes (a write forgets or remembers its id), not on use; an entry read
 * often is as likely to be stale as one never read, and a fill order is easier to reason about in
 * their tests than a use order.
 */
import { LRUCache } from 'lru-cache';

/** A bound on the number of entries, or on their total weight (each value weighs a positive integer). */
export type CacheBound<V> =
  | { readonly maxEntries: number }
  | { readonly maxWeight: number; readonly weigh: (value: V) => number };

export interface BoundedCache<V> {
  /** The value held for `key`, without making it any younger. */
  get(key: string): V | undefined;
  has(key: string): boolean;
  /**
   * Holds `value` as the youngest entry, dropping the oldest ones the bound asks for; false when the
   * value alone is heavier than the whole budget (then nothing is held for `key`).
   */
  set(key: string, value: V): boolean;
  delete(key: string): void;
  clear(): void;
  size(): number;
}

// `{}`: lru-cache holds no `undefined` values; a cache that must remember an absence boxes it.
export const boundedCache = <V extends {}>(
  bound: CacheBound<V>,
  /** Told each key dropped to keep the bound (not the ones deleted, replaced or cleared). */
  onEvict?: (key: string) => void,
): BoundedCache<V> => {
  const dispose =
    onEvict === undefined
      ? undefined
      : (_value: V, key: string, reason: LRUCache.DisposeReason) => {
          if (reason === 'evict') onEvict(key);
        };
  const entries =
    'maxEntries' in bound
      ? new LRUCache<string, V>({ max: bound.maxEntries, dispose })
      : new LRUCache<string, V>({ maxSize: bound.maxWeight, sizeCalculation: bound.weigh, dispose });
  return {
    get: (key) => entries.peek(key),
    has: (key) => entries.has(key),
    set(key, value) {
      entries.set(key, value);
      return entries.has(key);
    },
    delete(key) {
      entries.delete(key);
    },
    clear() {
      entries.clear();
    },
    size: () => entries.size,
  };
};
