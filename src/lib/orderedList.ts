/**
 * Values kept in the order of a string key (compared as code units), in chunks of a few hundred: an
 * insertion or a removal moves part of one chunk, not half of the list. A sorted array of 90,000
 * students moved 45,000 slots at each one, which cost seconds of a 10,000-row import (decision 0068).
 *
 * Written here rather than taken from a package: `sorted-btree`, the well-kept B+ tree, is a CommonJS
 * module whose default export the service's loaders (Node's ESM, tsx, esbuild) each resolve
 * differently, and the red-black trees on npm cost an object of five fields a value.
 *
 * Keys are unique: `set` replaces the value of a key it holds. Iterating while the list changes is
 * not supported (the directory reads a page synchronously).
 */
export interface OrderedList<V> {
  readonly size: number;
  /** Puts `value` under `key`, replacing the value the key had. */
  set(key: string, value: V): void;
  /** Whether the key was held (and is now gone). */
  delete(key: string): boolean;
  /** The values whose key is greater than `key` (all of them without one), in key order. */
  after(key: string | undefined): Generator<V>;
  /** Every value, in key order. */
  values(): V[];
}

/** Values a chunk holds at most before it is split in two. */
const CHUNK_MAX = 512;

/** First position in `chunk` whose key is not less than `key` (`strict`: greater than). */
const boundIn = <V>(
  chunk: ReadonlyArray<V>,
  keyOf: (v: V) => string,
  key: string,
  strict: boolean,
): number => {
  let lo = 0;
  let hi = chunk.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const at = keyOf(chunk[mid] as V);
    if (at < key || (strict && at === key)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
};

/**
 * A list of `sorted` (already in key order, keys unique), whose values name their key with `keyOf`.
 * `chunkMax` is for tests, to cross chunks with few values.
 */
export const orderedList = <V>(
  keyOf: (value: V) => string,
  sorted: ReadonlyArray<V> = [],
  chunkMax: number = CHUNK_MAX,
): OrderedList<V> => {
  const half = Math.max(1, Math.floor(chunkMax / 2));
  const chunks: V[][] = [];
  for (let i = 0; i < sorted.length; i += half) chunks.push(sorted.slice(i, i + half));
  // The last key of each chunk: the chunk a key belongs to is the first whose last key is not less.
  const lasts: string[] = chunks.map((c) => keyOf(c[c.length - 1] as V));
  let size = sorted.length;

  /** First chunk whose last key is not less than `key` (`strict`: greater than); chunks.length if none. */
  const chunkOf = (key: string, strict: boolean): number => {
    let lo = 0;
    let hi = lasts.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const at = lasts[mid] as string;
      if (at < key || (strict && at === key)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };

  return {
    get size() {
      return size;
    },

    set(key, value) {
      if (chunks.length === 0) {
        chunks.push([value]);
        lasts.push(key);
        size = 1;
        return;
      }
      // Past every chunk's last key: the value ends the last chunk.
      const c = Math.min(chunkOf(key, false), chunks.length - 1);
      const chunk = chunks[c] as V[];
      const at = boundIn(chunk, keyOf, key, false);
      if (at < chunk.length && keyOf(chunk[at] as V) === key) {
        chunk[at] = value;
        return;
      }
      chunk.splice(at, 0, value);
      size += 1;
      if (at === chunk.length - 1) lasts[c] = key;
      if (chunk.length > chunkMax) {
        const tail = chunk.splice(half);
        chunks.splice(c + 1, 0, tail);
        lasts.splice(c, 1, keyOf(chunk[chunk.length - 1] as V), keyOf(tail[tail.length - 1] as V));
      }
    },

    delete(key) {
      const c = chunkOf(key, false);
      const chunk = chunks[c];
      if (chunk === undefined) return false;
      const at = boundIn(chunk, keyOf, key, false);
      if (at === chunk.length || keyOf(chunk[at] as V) !== key) return false;
      chunk.splice(at, 1);
      size -= 1;
      if (chunk.length === 0) {
        chunks.splice(c, 1);
        lasts.splice(c, 1);
      } else if (at === chunk.length) lasts[c] = keyOf(chunk[at - 1] as V);
      return true;
    },

    *after(key) {
      let c = key === undefined ? 0 : chunkOf(key, true);
      let at = key === undefined ? 0 : boundIn(chunks[c] ?? [], keyOf, key, true);
      for (; c < chunks.length; c += 1, at = 0) {
        const chunk = chunks[c] as V[];
        for (; at < chunk.length; at += 1) yield chunk[at] as V;
      }
    },

    values: () => chunks.flat(),
  };
};
