/**
 * Whether a build output is up to date, decided as make decides: it exists and nothing it is built
 * from changed since it was written (modification times). Directories count by their own time too,
 * so a removed or renamed source makes the output stale. Conservative on purpose: every part of the
 * build reads all of `src/` (the kiosk and the office import `src/domain/`), and the dependencies
 * count through the lockfile npm writes into `node_modules/` at each install.
 *
 * What reads it: `scripts/buildIfStale.ts` (the benchmark and the end-to-end tests build only what is
 * stale) and `test/support/serviceBundle.ts` (tests start the bundled service).
 */
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';

/** What every part of the build is built from. */
export const BUILD_INPUTS: ReadonlyArray<string> = [
  'src',
  'package.json',
  'package-lock.json',
  'node_modules/.package-lock.json',
  'tsconfig.json',
  'tsconfig.build.json',
  'scripts/buildServer.ts',
];

const mtimeOf = (path: string): Promise<number | undefined> =>
  stat(path).then(
    (s) => s.mtimeMs,
    () => undefined,
  );

/** The newest modification time of the paths and everything below them (0 when none exists). */
export const newestModification = async (paths: ReadonlyArray<string>): Promise<number> => {
  let newest = 0;
  const visit = async (path: string): Promise<void> => {
    const s = await stat(path).catch(() => undefined);
    if (s === undefined) return;
    newest = Math.max(newest, s.mtimeMs);
    if (!s.isDirectory()) return;
    const entries = await readdir(path);
    await Promise.all(entries.map((entry) => visit(join(path, entry))));
  };
  await Promise.all(paths.map(visit));
  return newest;
};

/** True when every output exists and is at least as new as the newest input. */
export const upToDate = async (
  outputs: ReadonlyArray<string>,
  inputs: ReadonlyArray<string> = BUILD_INPUTS,
): Promise<boolean> => {
  const built = await Promise.all(outputs.map(mtimeOf));
  const oldest = Math.min(...built.map((m) => m ?? Number.NEGATIVE_INFINITY));
  return oldest >= (await newestModification(inputs));
};
