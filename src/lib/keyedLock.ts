/**
 * One task at a time per key, in arrival order, within this process. Online requests that change the
 * same aspect run one after the other, so the second bases its event on the first one's outcome
 * instead of racing it (a race would be decided by the conflict rule, possibly overturning an answer
 * already given). Keys with nothing queued are forgotten.
 */
export interface KeyedLock {
  run<A>(key: string, task: () => Promise<A>): Promise<A>;
  /** Keys with a task running or queued. */
  size(): number;
}

export const keyedLock = (): KeyedLock => {
  const tails = new Map<string, Promise<unknown>>();
  return {
    run(key, task) {
      const before = tails.get(key) ?? Promise.resolve();
      const result = before.then(task, task);
      // The chain continues whether the task succeeds or fails; the caller sees its own outcome.
      const tail = result.then(
        () => undefined,
        () => undefined,
      );
      tails.set(key, tail);
      void tail.then(() => {
        if (tails.get(key) === tail) tails.delete(key);
      });
      return result;
    },
    size: () => tails.size,
  };
};
