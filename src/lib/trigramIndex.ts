/**
 * Which values' texts may contain a query's words, without reading every text: each text's trigrams
 * (three-character substrings) point at its value. A word of three characters or more is in a text
 * only if all its trigrams are, so the values of the word's rarest trigram hold every match; the
 * caller checks each candidate against the query (the index may also hold values whose text changed
 * since: a text set again adds its new trigrams and leaves the old ones, which cost a check each; a
 * trigram that leaves a text and comes back is listed twice for it, and answered once).
 *
 * Postings are arrays of small integers (slots), not sets of keys: about 4 bytes a trigram of a text
 * instead of tens, which matters at 100,000 names.
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
  const postings = new Map<string, number[]>();
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
        if (list === undefined) postings.set(trigram, [slot]);
        else list.push(slot);
      }
    },

    candidates(query, atMost) {
      let rarest: number[] | undefined;
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
      for (const slot of new Set(rarest)) {
        const value = values[slot];
        if (value !== undefined) out.push(value);
      }
      return out;
    },
  };
};
