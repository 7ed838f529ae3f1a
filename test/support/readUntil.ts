/**
 * Reads again (every 100 ms, for up to `withinMs`, 10 s by default) until `done`, then returns the
 * last read. For range reads on a CouchDB cluster, which ask one copy of each shard and may lag an
 * acknowledged write by a moment (decision 0023); on one node or the embedded store the first read
 * is the answer.
 */
export const readUntil = async <A>(
  read: () => Promise<A>,
  done: (a: A) => boolean,
  withinMs = 10_000,
): Promise<A> => {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const a = await read();
    if (done(a) || Date.now() > deadline) return a;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
};
