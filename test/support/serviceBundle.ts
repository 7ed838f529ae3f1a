/**
 * The service as tests start it in a child process: the bundle the image runs (`dist/server/main.js`,
 * `scripts/buildServer.ts`), built again first when any source is newer than it. Through tsx each
 * start compiled and resolved the ~1,000 modules one by one: 4–5 s a start on the loaded CI machine
 * against 1.5–2 s for the bundle, and the crash rows alone start the service 22 times (decision 0048).
 * `TEST_SERVICE_ENTRY=source` runs `src/main.ts` through tsx instead (stack traces in the sources).
 */
import { upToDate } from '../../scripts/buildFreshness.js';
import { bundleServer, SERVER_BUNDLE } from '../../scripts/buildServer.js';
import type { NodeEntry } from './mainProcess.js';

let fresh: Promise<NodeEntry> | undefined;

const ensureFresh = async (): Promise<NodeEntry> => {
  if (!(await upToDate([SERVER_BUNDLE]))) await bundleServer();
  return { kind: 'built', path: SERVER_BUNDLE };
};

/** The entry a test's child service runs: the up-to-date bundle, built at most once per test process. */
export const serviceEntry = (): Promise<NodeEntry> => {
  if (process.env.TEST_SERVICE_ENTRY === 'source') return Promise.resolve({ kind: 'source' });
  fresh ??= ensureFresh().catch((e: unknown) => {
    // A failed build is not remembered: the next start tries again (and says why, if it fails again).
    fresh = undefined;
    throw e;
  });
  return fresh;
};
