export interface ScenarioResult {
  readonly scenario: string;
  readonly unit: string;
  readonly median: number;
  readonly spread: { readonly min: number; readonly max: number };
  readonly p99Ms: number | undefined;
  readonly baseline:
    | {
        readonly name: string;
        readonly median: number;
        readonly spread: { readonly min: number; readonly max: number };
      }
    | undefined;
  /** Measured over baseline, run by run, then the median of those ratios. */
  readonly ratio: number | undefined;
  /** A human statement of the target, when the project sets one. */
  readonly target: string | undefined;
  readonly runs: number;
}
