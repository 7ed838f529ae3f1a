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
export interface OrderedList<V extends object> {
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

/** First of `length` positions whose key (`keyAt`) is not less than `key` (`strict`: greater than). */
const bound = (length: number, keyAt: (i: number) => string, key: string, strict: boolean): number => {
  let lo = 0;
  let hi = length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const at = keyAt(mid);
    if (at < key || (strict && at === key)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
};

/**
 * A list of `sorted` (already in key order, keys unique), whose values name their key with `keyOf`.
 * `chunkMax` is for tests, to cross chunks with few values.
 */
export const orderedList = <V extends object>(
  keyOf: (value: V) => string,
  sorted: ReadonlyArray<V> = [],
  chunkMax: number = CHUNK_MAX,
): OrderedList<V> => {
  const half = Math.max(1, Math.floor(chunkMax / 2));
  const chunks: V[][] = [];
  for (let i = 0; i < sorted.length; i += half) chunks.push(sorted.slice(i, i + half));
  const keyIn = (chunk: ReadonlyArray<V>, i: number): string => {
    const value = chunk[i];
    return value === undefined ? '' : keyOf(value);
  };
  const lastKeyOf = (chunk: ReadonlyArray<V>): string => keyIn(chunk, chunk.length - 1);
  // The last key of each chunk: the chunk a key belongs to is the first whose last key is not less.
  const lasts: string[] = chunks.map(lastKeyOf);
  let size = sorted.length;

  /** First chunk whose last key is not less than `key` (`strict`: greater than); chunks.length if none. */
  const chunkOf = (key: string, strict: boolean): number =>
    bound(lasts.length, (i) => lasts[i] ?? '', key, strict);
  /** First position in `chunk` whose key is not less than `key` (`strict`: greater than). */
  const boundIn = (chunk: ReadonlyArray<V>, key: string, strict: boolean): number =>
    bound(chunk.length, (i) => keyIn(chunk, i), key, strict);

  return {
    get size() {
      return size;
    },

    set(key, value) {
      // Past every chunk's last key: the value ends the last chunk.
      const c = Math.min(chunkOf(key, false), chunks.length - 1);
      const chunk = chunks[c];
      if (chunk === undefined) {
        chunks.push([value]);
        lasts.push(key);
        size = 1;
        return;
      }
      const at = boundIn(chunk, key, false);
      if (at < chunk.length && keyIn(chunk, at) === key) {
        chunk[at] = value;
        return;
      }
      chunk.splice(at, 0, value);
      size += 1;
      if (at === chunk.length - 1) lasts[c] = key;
      if (chunk.length > chunkMax) {
        const tail = chunk.splice(half);
        chunks.splice(c + 1, 0, tail);
        lasts.splice(c, 1, lastKeyOf(chunk), lastKeyOf(tail));
      }
    },

    delete(key) {
      const c = chunkOf(key, false);
      const chunk = chunks[c];
      if (chunk === undefined) return false;
      const at = boundIn(chunk, key, false);
      if (at === chunk.length || keyIn(chunk, at) !== key) return false;
      chunk.splice(at, 1);
      size -= 1;
      if (chunk.length === 0) {
        chunks.splice(c, 1);
        lasts.splice(c, 1);
      } else if (at === chunk.length) lasts[c] = lastKeyOf(chunk);
      return true;
    },

    *after(key) {
      let c = key === undefined ? 0 : chunkOf(key, true);
      let at = key === undefined ? 0 : boundIn(chunks[c] ?? [], key, true);
      for (let chunk = chunks[c]; chunk !== undefined; c += 1, at = 0, chunk = chunks[c])
        for (let value = chunk[at]; value !== undefined; at += 1, value = chunk[at]) yield value;
    },

    values: () => chunks.flat(),
  };
};
