/**
 * A set of ids that holds a UUID in 16 bytes: the roster's context names every active student (issue
 * #41), and a `Set` of their ids as read from the store held 18.4 MB at 250,000 students (a string of
 * 56 bytes each and the set's table), in every instance on CouchDB, where nothing else holds the
 * roll. Here the canonical ones (lowercase, hyphenated: what the service makes) are packed into four
 * 32-bit words, sorted, and found by binary search: 4 MB at 250,000. Any other id is held as given,
 * in a plain set beside them, so the set's answers are exactly a `Set<string>`'s.
 */

export interface IdSet extends Iterable<string> {
  readonly size: number;
  has(id: string): boolean;
}

const CANONICAL = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const WORDS = 4;

const packInto = (id: string, into: Uint32Array, at: number): void => {
  into[at] = Number.parseInt(id.slice(0, 8), 16);
  into[at + 1] = Number.parseInt(id.slice(9, 13) + id.slice(14, 18), 16);
  into[at + 2] = Number.parseInt(id.slice(19, 23) + id.slice(24, 28), 16);
  into[at + 3] = Number.parseInt(id.slice(28, 36), 16);
};

const hex = (word: number | undefined): string => (word ?? 0).toString(16).padStart(8, '0');

const unpack = (from: Uint32Array, at: number): string => {
  const b = hex(from[at + 1]);
  const c = hex(from[at + 2]);
  return `${hex(from[at])}-${b.slice(0, 4)}-${b.slice(4)}-${c.slice(0, 4)}-${c.slice(4)}${hex(from[at + 3])}`;
};

/** Negative, zero or positive as the id at `i` of `a` sorts before, with or after the one at `j` of `b`. */
const compare = (a: Uint32Array, i: number, b: Uint32Array, j: number): number => {
  for (let w = 0; w < WORDS; w += 1) {
    const d = (a[i + w] ?? 0) - (b[j + w] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
};

class PackedIdSet implements IdSet {
  readonly size: number;
  private readonly probe = new Uint32Array(WORDS);

  constructor(
    /** `count` ids, four words each, sorted, no two equal. */
    readonly words: Uint32Array,
    readonly count: number,
    readonly others: ReadonlySet<string>,
  ) {
    this.size = count + others.size;
  }

  has(id: string): boolean {
    if (!CANONICAL.test(id)) return this.others.has(id);
    packInto(id, this.probe, 0);
    let low = 0;
    let high = this.count - 1;
    while (low <= high) {
      const middle = (low + high) >>> 1;
      const d = compare(this.words, middle * WORDS, this.probe, 0);
      if (d === 0) return true;
      if (d < 0) low = middle + 1;
      else high = middle - 1;
    }
    return false;
  }

  *[Symbol.iterator](): Iterator<string> {
    for (let i = 0; i < this.count; i += 1) yield unpack(this.words, i * WORDS);
    yield* this.others;
  }
}

/** Ids added one at a time (a pass adds a page's at a time), then `build` once. */
export interface IdSetBuilder {
  add(id: string): void;
  build(): IdSet;
}

interface Builder extends IdSetBuilder {
  /** The id packed at `at` of `from`, as it is. */
  addPacked(from: Uint32Array, at: number): void;
}

const builder = (): Builder => {
  let words = new Uint32Array(WORDS * 1024);
  let count = 0;
  const others = new Set<string>();
  const room = (more: number) => {
    if ((count + more) * WORDS <= words.length) return;
    const grown = new Uint32Array(Math.max(words.length * 2, (count + more) * WORDS));
    grown.set(words.subarray(0, count * WORDS));
    words = grown;
  };
  return {
    add(id) {
      if (!CANONICAL.test(id)) {
        others.add(id);
        return;
      }
      room(1);
      packInto(id, words, count * WORDS);
      count += 1;
    },
    addPacked(from, at) {
      room(1);
      words.set(from.subarray(at, at + WORDS), count * WORDS);
      count += 1;
    },
    build() {
      const order = new Uint32Array(count);
      for (let i = 0; i < count; i += 1) order[i] = i;
      order.sort((x, y) => compare(words, x * WORDS, words, y * WORDS));
      // Held at its size: a builder's spare room is not kept for the set's life.
      const sorted = new Uint32Array(count * WORDS);
      let kept = 0;
      for (let i = 0; i < count; i += 1) {
        const from = (order[i] ?? 0) * WORDS;
        if (kept > 0 && compare(sorted, (kept - 1) * WORDS, words, from) === 0) continue;
        sorted.set(words.subarray(from, from + WORDS), kept * WORDS);
        kept += 1;
      }
      return new PackedIdSet(kept === count ? sorted : sorted.slice(0, kept * WORDS), kept, others);
    },
  };
};

export const idSetBuilder = (): IdSetBuilder => builder();

export const idSetOf = (ids: Iterable<string>): IdSet => {
  const made = builder();
  for (const id of ids) made.add(id);
  return made.build();
};

/**
 * `base` with `more` in it too: a new set (`base` is left as it is). A packed base is copied word by
 * word, not unpacked into strings.
 */
export const idSetWith = (base: IdSet, more: Iterable<string>): IdSet => {
  const made = builder();
  if (base instanceof PackedIdSet) {
    for (let i = 0; i < base.count; i += 1) made.addPacked(base.words, i * WORDS);
    for (const id of base.others) made.add(id);
  } else for (const id of base) made.add(id);
  for (const id of more) made.add(id);
  return made.build();
};
