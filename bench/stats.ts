/** Small statistics for benchmark runs: medians and spreads of repeated measurements. */
export const median = (xs: ReadonlyArray<number>): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  const lo = s[mid - 1] ?? 0;
  const hi = s[mid] ?? 0;
  return s.length % 2 === 0 ? (lo + hi) / 2 : hi;
};

export const percentile = (xs: ReadonlyArray<number>, p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] ?? 0;
};

export const spread = (xs: ReadonlyArray<number>): { min: number; max: number } => ({
  min: Math.min(...xs),
  max: Math.max(...xs),
});
