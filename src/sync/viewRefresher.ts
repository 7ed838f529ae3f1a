/**
 * Keeps CouchDB's student views current behind the writes (decision 0056). CouchDB indexes a view
 * when it is queried after writes; left to the first request after an import, that would be the whole
 * import's indexing inside one request (about 25 s for 10,000 students on the shared machine, past the
 * 6 s deadline). A refresh sets CouchDB indexing without waiting for it (`StudentViews.refresh`).
 *
 * Each poke is a student write the private feed brought. The refresh comes once writes have paused
 * for `quietMs`, or `maxWaitMs` after the first write not yet refreshed for, whichever is first: the
 * views' indexing (JavaScript, on CouchDB's CPU) then runs mostly after an import's writes, not beside
 * them (in a bench run that refreshed once a second during the import, a 2,000-row file answered 503;
 * the import is near the store's silence limit on the loaded machine anyway, decision 0055), and a
 * long stream of writes is still indexed in steps.
 */
export interface ViewRefresher {
  poke(): void;
  /** Drops a refresh not yet due and waits for the one under way, if any (a stop). */
  idle(): Promise<void>;
}

export interface RefresherTimers {
  readonly now: () => number;
  /** Runs `fn` after `ms`; the answer cancels it. */
  readonly after: (ms: number, fn: () => void) => () => void;
}

const realTimers: RefresherTimers = {
  now: () => Date.now(),
  after: (ms, fn) => {
    const t = setTimeout(fn, ms);
    t.unref();
    return () => clearTimeout(t);
  },
};

export const viewRefresher = (
  refresh: () => Promise<void>,
  options: {
    readonly quietMs: number;
    readonly maxWaitMs: number;
    readonly onError: (e: unknown) => void;
    readonly timers?: RefresherTimers;
  },
): ViewRefresher => {
  const timers = options.timers ?? realTimers;
  let firstPending: number | undefined;
  let cancel: (() => void) | undefined;
  let running: Promise<void> | undefined;
  const fire = () => {
    firstPending = undefined;
    cancel = undefined;
    const run = refresh().catch((e: unknown) => {
      // A request's own query indexes what this one did not: slower, never wrong.
      options.onError(e);
    });
    running = run;
    void run.finally(() => {
      if (running === run) running = undefined;
    });
  };
  return {
    poke() {
      const at = timers.now();
      firstPending ??= at;
      cancel?.();
      cancel = timers.after(
        Math.max(0, Math.min(options.quietMs, firstPending + options.maxWaitMs - at)),
        fire,
      );
    },
    async idle() {
      cancel?.();
      cancel = undefined;
      firstPending = undefined;
      await running;
    },
  };
};
