/**
 * Which values' texts may contain a query's words, without reading every text: each text's trigrams
 * (three-character substrings) point at its value. A word of three characters or more is in a text
 * only if all its trigrams are, so the values of the word's rarest trigram hold every match; the
 * caller checks each candidate against the query (the index may also hold values whose text changed
 * since: a text set again adds its new trigrams and leaves the old ones, which cost a check each; a
 * trigram that leaves a text and comes back is listed twice for it, and answered once).
 *
 * Postings are slots (small integers), not sets of keys, held in typed arrays that double as they
 * fill: 4 bytes a trigram of a text. As plain arrays they took 8 bytes and their growth slack, 24 MB
 * of a 100 MB heap at 100,000 names (decision 0019, tenth round).
 */
export interface TrigramIndex<V> {
  /** Indexes `text` for `key` (replacing the value held for `key`). */
  set(key: string, text: string, value: V): void;
  /**
   * The values whose text may contain every word of `query` (words split on spaces), each once; or
   * undefined when the index cannot narrow the search to at most `atMost` of them (no word of three
   * characters or more, or the rarest trigram is too common): the caller then scans.
   */
  candidates(query: string, atMost: number): V[] | undefined;
}

/** A growable list of slots. */
interface Postings {
  slots: Int32Array;
  length: number;
}

const append = (list: Postings, slot: number): void => {
  if (list.length === list.slots.length) {
    const grown = new Int32Array(list.slots.length * 2);
    grown.set(list.slots);
    list.slots = grown;
  }
  list.slots[list.length] = slot;
  list.length += 1;
};

const trigramsOf = (text: string): Set<string> => {
  const out = new Set<string>();
  for (let i = 0; i + 3 <= text.length; i += 1) out.add(text.slice(i, i + 3));
  return out;
};

export const trigramIndex = <V>(): TrigramIndex<V> => {
  const slots = new Map<string, number>();
  const values: V[] = [];
  // The text each slot was last indexed with: a value set again with the same text (another field of
  // the record changed, the usual case) adds nothing, and a changed text adds only its new trigrams,
  // so postings grow with renames, never with updates.
  const texts: string[] = [];
  const postings = new Map<string, Postings>();
  return {
    set(key, text, value) {
      let slot = slots.get(key);
      if (slot === undefined) {
        slot = values.length;
        slots.set(key, slot);
      }
      values[slot] = value;
      const before = texts[slot];
      if (before === text) return;
      texts[slot] = text;
      const held = before === undefined ? new Set<string>() : trigramsOf(before);
      for (const trigram of trigramsOf(text)) {
        if (held.has(trigram)) continue;
        const list = postings.get(trigram);
        if (list === undefined) postings.set(trigram, { slots: Int32Array.of(slot), length: 1 });
        else append(list, slot);
      }
    },

    candidates(query, atMost) {
      let rarest: Postings | undefined;
      for (const word of query.split(' ')) {
        if (word.length < 3) continue;
        for (const trigram of trigramsOf(word)) {
          const list = postings.get(trigram);
          if (list === undefined) return [];
          if (rarest === undefined || list.length < rarest.length) rarest = list;
        }
      }
      if (rarest === undefined || rarest.length > atMost) return undefined;
      const out: V[] = [];
      for (const slot of new Set(rarest.slots.subarray(0, rarest.length))) {
        const value = values[slot];
        if (value !== undefined) out.push(value);
      }
      return out;
    },
  };
};
