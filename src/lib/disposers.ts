/**
 * One stack of what a start-up opened, closed in reverse order: the same list serves a start that
 * fails half-way (closing what was opened so far, so a failed start leaves no store locked) and the
 * graceful stop. Written once, where the service wrote its teardown twice and a start that failed
 * before listening closed nothing.
 */
export interface Disposers {
  /** Registers a step of the teardown; the last added runs first. */
  add(name: string, dispose: () => void | Promise<void>): void;
  /**
   * Runs every step once, last added first, each awaited: a step that fails does not stop the ones
   * after it. Resolves with the failures by step name (empty when all went well); a second call
   * waits for the first and runs nothing again.
   */
  disposeAll(): Promise<ReadonlyArray<{ readonly name: string; readonly error: unknown }>>;
}

export const disposers = (): Disposers => {
  const steps: Array<{ name: string; dispose: () => void | Promise<void> }> = [];
  let running: Promise<ReadonlyArray<{ name: string; error: unknown }>> | undefined;
  return {
    add(name, dispose) {
      if (running !== undefined) throw new Error(`disposers: "${name}" added after disposal began`);
      steps.push({ name, dispose });
    },
    disposeAll() {
      running ??= (async () => {
        const failures: Array<{ name: string; error: unknown }> = [];
        for (const step of [...steps].reverse()) {
          try {
            await step.dispose();
          } catch (error) {
            failures.push({ name: step.name, error });
          }
        }
        return failures;
      })();
      return running;
    },
  };
};
