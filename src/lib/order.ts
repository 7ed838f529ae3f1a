/**
 * An ordering by string keys, compared as code units (never by locale): ISO instants and ids sort the
 * same on every machine, so equal sets of records come out in the same order everywhere.
 */
export const byKeys =
  <A>(...keys: ReadonlyArray<(a: A) => string>) =>
  (a: A, b: A): number => {
    for (const key of keys) {
      const x = key(a);
      const y = key(b);
      if (x !== y) return x < y ? -1 : 1;
    }
    return 0;
  };
