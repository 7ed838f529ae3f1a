/**
 * A value of which only the latest matters, written at most once per interval: the event pipeline's
 * checkpoint. Under load the pipeline projects a batch every few milliseconds, and a checkpoint write
 * per batch was a durable write (a CouchDB request) per check-in or two for a document whose only
 * reader is the next start. A checkpoint that lags by up to the interval costs a restart after a
 * crash the replay of those batches, which change nothing (every write of the pipeline is a function
 * of the events), so at most one write per interval, of the latest value, is kept.
 *
 * Writes never overlap and never go backwards: each takes the latest value offered when it starts.
 * The first offer after a quiet interval is written at once and its caller waits for it (and meets
 * its error, so the pipeline's retry sees a store that is away); later offers inside the interval
 * return at once and a trailing write, at the interval's end, takes the latest of them. A trailing
 * write that fails is reported to `onError` and tried again an interval later (or by the next offer
 * or `flush`, whichever comes first).
 */
export interface PacedWriter<T> {
  /** Takes `value` as the latest; resolves once written when it is written at once, else at once. */
  offer(value: T): Promise<void>;
  /** Writes the latest value offered, if it is not written yet (at a stop). */
  flush(): Promise<void>;
  /** Cancels the trailing write (the latest value stays unwritten until a `flush`). */
  close(): void;
}

export interface PacedWriterOptions<T> {
  readonly write: (value: T) => Promise<void>;
  readonly everyMs: number;
  readonly onError: (error: unknown) => void;
  readonly now?: () => number;
}

export const pacedWriter = <T>(options: PacedWriterOptions<T>): PacedWriter<T> => {
  const now = options.now ?? Date.now;
  let latest: { readonly value: T } | undefined;
  let lastStartedAt = Number.NEGATIVE_INFINITY;
  let chain: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  const cancelTrailing = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
  };

  /** A trailing write after `wait`; one that fails is tried again an interval later (an idle pipeline
   * offers nothing more, and its checkpoint would stay behind until a stop). */
  const trailing = (wait: number) => {
    if (timer !== undefined || closed) return;
    timer = setTimeout(() => {
      timer = undefined;
      writeLatest().catch((error: unknown) => {
        options.onError(error);
        if (latest !== undefined) trailing(options.everyMs);
      });
    }, wait);
    timer.unref();
  };

  const writeLatest = (): Promise<void> => {
    const run = chain.then(async () => {
      const taken = latest;
      if (taken === undefined) return;
      latest = undefined;
      lastStartedAt = now();
      try {
        await options.write(taken.value);
      } catch (error) {
        // A newer value offered meanwhile is the one to write next; else this one is.
        latest ??= taken;
        throw error;
      }
    });
    chain = run.catch(() => undefined);
    return run;
  };

  return {
    offer(value) {
      latest = { value };
      const wait = lastStartedAt + options.everyMs - now();
      if (wait <= 0) {
        cancelTrailing();
        return writeLatest();
      }
      trailing(wait);
      return Promise.resolve();
    },
    flush() {
      cancelTrailing();
      return writeLatest();
    },
    close() {
      closed = true;
      cancelTrailing();
    },
  };
};
