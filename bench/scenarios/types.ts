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
  /**
   * Server CPU time per request (median of the runs; work left after a run included), for the
   * HTTP scenarios: steadier than throughput on a shared machine, since it counts work, not waiting.
   */
  readonly cpuMsPerRequest?: number | undefined;
  /** The part of `cpuMsPerRequest` spent once the load had stopped (work the service deferred). */
  readonly cpuMsPerRequestAfterRun?: number | undefined;
  readonly baselineCpuMsPerRequest?: number | undefined;
}
