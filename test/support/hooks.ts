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
