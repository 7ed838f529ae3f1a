/**
 * Keeps CouchDB's student views current behind the writes (decision 0056). CouchDB indexes a view
 * when it is queried after writes; left to the first request after an import, that is the whole
 * import's indexing inside one request (about 25 s for 10,000 students on the shared machine, past the
 * 6 s deadline). Each poke (a student write the private feed brings) asks for one refresh; pokes
 * during a refresh ask for one more after it, and refreshes are at least `gapMs` apart, so a burst of
 * writes costs a few queries, and the index follows the writes while they come.
 */
export interface ViewRefresher {
  poke(): void;
  /** Waits for the refresh under way, if any (a stop). */
  idle(): Promise<void>;
}

export const viewRefresher = (
  refresh: () => Promise<void>,
  options: {
    readonly gapMs: number;
    readonly onError: (e: unknown) => void;
    readonly sleep?: (ms: number) => Promise<void>;
  },
): ViewRefresher => {
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref()));
  let wanted = false;
  let running: Promise<void> | undefined;
  const run = async () => {
    while (wanted) {
      wanted = false;
      try {
        await refresh();
      } catch (e) {
        // A request's own query indexes what this one did not: slower, never wrong.
        options.onError(e);
      }
      await sleep(options.gapMs);
    }
    running = undefined;
  };
  return {
    poke() {
      wanted = true;
      if (running === undefined) running = run();
    },
    idle: async () => {
      await running;
    },
  };
};
