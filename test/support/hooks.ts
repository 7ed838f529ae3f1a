/** Where a fixture lives in mocha: once for the enclosing `describe` (`'file'`), or once per test. */
export type Scope = 'file' | 'test';

/** Registers `start` and `stop` in the enclosing `describe`'s hooks for `scope`. */
export const inHooks = (scope: Scope, start: () => Promise<void>, stop: () => Promise<void>): void => {
  if (scope === 'file') {
    before(start);
    after(stop);
  } else {
    beforeEach(start);
    afterEach(stop);
  }
};

/**
 * A value `make` builds in the enclosing `describe`'s hooks for `scope`, and `release` lets go of after;
 * the returned function gives the current one inside a test (and throws outside one).
 */
export const fixture = <A>(
  scope: Scope,
  make: () => Promise<A>,
  release: (value: A) => Promise<void>,
): (() => A) => {
  let current: A | undefined;
  inHooks(
    scope,
    async () => {
      current = await make();
    },
    async () => {
      const value = current;
      current = undefined;
      if (value !== undefined) await release(value);
    },
  );
  return () => {
    if (current === undefined) throw new Error('made in a mocha hook: read it inside a test');
    return current;
  };
};

/**
 * Registers an `afterEach` that closes whatever the test passed to the returned function (a fake
 * printer, a server), whatever the test did; the function answers its argument.
 */
export const closedAfterEach = (): (<A extends { close(): Promise<void> }>(value: A) => A) => {
  const open: Array<{ close(): Promise<void> }> = [];
  afterEach(async () => {
    for (const value of open.splice(0)) await value.close();
  });
  return (value) => {
    open.push(value);
    return value;
  };
};
