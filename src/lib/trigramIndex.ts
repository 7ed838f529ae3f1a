/**
 * Which values' texts may contain a query's words, without reading every text: each text's trigrams
 * (three-character substrings) point at its value. A word of three characters or more is in a text
 * only if all its trigrams are, so the values of the word's rarest trigram hold every match; the
 * caller checks each candidate against the query.
 *
 * Each trigram's values are kept in the caller's order (a value's order key, unique per value), so a
 * caller that wants the first few matches after a key walks one list from there and stops when it has
 * them: a page costs what it reads, not the whole candidate set. Filtering and sorting every
 * candidate took 40 ms a page at 100,000 names when a tenth of them shared the query's first name
 * (decision 0062). Keeping the order costs a move of the list's tail when a value is placed out of
 * order (a few microseconds per trigram), and nothing when values come in order, as a load gives them.
 *
 * Postings are slots (small integers), not sets of keys, held in typed arrays that double as they
 * fill: 4 bytes a trigram of a text. As plain arrays they took 8 bytes and their growth slack, 24 MB
 * of a 100 MB heap at 100,000 names (decision 0019, tenth round).
 */
export interface TrigramIndex<V> {
  /** Indexes `text` for `key` (replacing what was held for `key`), in the place its value's order key gives it. */
  set(key: string, text: string, value: V): void;
  /** Forgets `key` and its text. */
  delete(key: string): void;
  /**
   * The values whose text may contain every word of `query` (words split on spaces), in order, those
   * whose order key is greater than `after` (all, when undefined); `count` is how many the list holds
   * in all. Undefined when no word has three characters or more: the caller then scans.
   */
  candidates(
    query: string,
    after: string | undefined,
  ): { readonly count: number; readonly values: Iterable<V> } | undefined;
}

/** A growable list of slots, in their order keys' order. */
interface Postings {
  slots: Int32Array;
  length: number;
}

/**
 * A trigram's key: its three UTF-16 code units in one small integer when each is below 1,024 (a folded
 * name's letters, digits and spaces), else the trigram itself. Slicing each trigram out as a string
 * and hashing it made most of a load's cost and of its garbage: 2.3 million strings for 100,000 names.
 */
type TrigramKey = number | string;

const keyAt = (text: string, i: number): TrigramKey => {
  const a = text.charCodeAt(i);
  const b = text.charCodeAt(i + 1);
  const c = text.charCodeAt(i + 2);
  return (a | b | c) < 1024 ? (a << 20) | (b << 10) | c : text.slice(i, i + 3);
};

/** The distinct trigrams of `text`, in order of first appearance. */
const trigramsOf = (text: string): TrigramKey[] => {
  const out: TrigramKey[] = [];
  for (let i = 0; i + 3 <= text.length; i += 1) {
    const key = keyAt(text, i);
    // A name has a few dozen trigrams: a scan of them costs less than a set.
    if (!out.includes(key)) out.push(key);
  }
  return out;
};

export const trigramIndex = <V>(orderOf: (value: V) => string): TrigramIndex<V> => {
  const slots = new Map<string, number>();
  const values: Array<V | undefined> = [];
  // The text and the order key each slot was indexed with: a value set again with both the same
  // (another field of the record changed, the usual case) keeps its places.
  const texts: string[] = [];
  const orders: string[] = [];
  // Slots of deleted keys, given to the next new key.
  const free: number[] = [];
  const postings = new Map<TrigramKey, Postings>();

  /** First position in `list` whose order key is not less than `key` (`strict`: greater than). */
  const boundOf = (list: Postings, key: string, strict: boolean): number => {
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const at = orders[list.slots[mid] ?? 0] ?? '';
      if (at < key || (strict && at === key)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };

  const insert = (trigram: TrigramKey, slot: number): void => {
    const list = postings.get(trigram);
    if (list === undefined) {
      postings.set(trigram, { slots: Int32Array.of(slot), length: 1 });
      return;
    }
    const key = orders[slot] ?? '';
    if (list.length === list.slots.length) {
      const grown = new Int32Array(list.slots.length * 2);
      grown.set(list.slots);
      list.slots = grown;
    }
    // Values in order (a load) append; anything else moves the tail by one.
    const last = list.slots[list.length - 1] ?? 0;
    if ((orders[last] ?? '') < key) {
      list.slots[list.length] = slot;
      list.length += 1;
      return;
    }
    const at = boundOf(list, key, false);
    list.slots.copyWithin(at + 1, at, list.length);
    list.slots[at] = slot;
    list.length += 1;
  };

  const unindex = (slot: number): void => {
    const key = orders[slot] ?? '';
    for (const trigram of trigramsOf(texts[slot] ?? '')) {
      const list = postings.get(trigram);
      if (list === undefined) continue;
      let at = boundOf(list, key, false);
      while (at < list.length && list.slots[at] !== slot) at += 1;
      if (at === list.length) continue;
      if (list.length === 1) {
        postings.delete(trigram);
        continue;
      }
      list.slots.copyWithin(at, at + 1, list.length);
      list.length -= 1;
    }
  };

  function* walk(list: Postings, from: number): Generator<V> {
    for (let i = from; i < list.length; i += 1) {
      const value = values[list.slots[i] ?? 0];
      if (value !== undefined) yield value;
    }
  }

  return {
    set(key, text, value) {
      const order = orderOf(value);
      let slot = slots.get(key);
      if (slot !== undefined) {
        if (texts[slot] === text && orders[slot] === order) {
          values[slot] = value;
          return;
        }
        unindex(slot);
      } else {
        slot = free.pop() ?? values.length;
        slots.set(key, slot);
      }
      values[slot] = value;
      texts[slot] = text;
      orders[slot] = order;
      for (const trigram of trigramsOf(text)) insert(trigram, slot);
    },

    delete(key) {
      const slot = slots.get(key);
      if (slot === undefined) return;
      unindex(slot);
      slots.delete(key);
      values[slot] = undefined;
      texts[slot] = '';
      orders[slot] = '';
      free.push(slot);
    },

    candidates(query, after) {
      let rarest: Postings | undefined;
      let someWord = false;
      for (const word of query.split(' ')) {
        if (word.length < 3) continue;
        someWord = true;
        for (const trigram of trigramsOf(word)) {
          const list = postings.get(trigram);
          if (list === undefined) return { count: 0, values: [] };
          if (rarest === undefined || list.length < rarest.length) rarest = list;
        }
      }
      if (!someWord || rarest === undefined) return undefined;
      const list = rarest;
      return { count: list.length, values: walk(list, after === undefined ? 0 : boundOf(list, after, true)) };
    },
  };
};
