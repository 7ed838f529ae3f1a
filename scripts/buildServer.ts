/**
 * Bundles the service into one module, `dist/server/main.js` (what the image runs and the bench
 * measures), the backup command into `dist/server/backup.js` (decision 0022) and the print agent into
 * `dist/server/printAgent.js` (0054). Node resolves and compiles each of the ~1,000 modules of the dependency tree one file at
 * a time, which took 1.1–1.3 s of a 2 s cold start; one file loads in about half that (decision 0019).
 * The same esbuild transform `tsx` applies to the sources in tests. Type checking stays with `tsc`.
 *
 *   tsx scripts/buildServer.ts [outfile]     (with an outfile, the service only)
 */
import { randomUUID } from 'node:crypto';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';

/** Two folders below the repository, like `src/http/`: the kiosk is found at `../../dist/kiosk/`. */
export const SERVER_BUNDLE = 'dist/server/main.js';

export const BACKUP_BUNDLE = 'dist/server/backup.js';

/** The print agent (0054), run from the same image: `node dist/server/printAgent.js --server URL`. */
export const PRINT_AGENT_BUNDLE = 'dist/server/printAgent.js';

/** The heap limit for the container's memory limit, which the image's command reads (0077). */
export const HEAP_LIMIT_BUNDLE = 'dist/server/heapLimit.js';

/**
 * Each output file is written beside its final name and renamed over it: tests start the bundle while
 * another test process (a parallel worker, `test/support/serviceBundle.ts`) may be building it again,
 * and must never load half a file.
 */
/**
 * V8 keeps a module's source text while the module lives (it compiles functions lazily from it), in
 * one byte a character only when every character is Latin-1. esbuild escapes other characters in
 * strings and names (its default ASCII charset) but leaves comments as written, and a few comments of
 * the bundled font libraries (’ “ ”) made the 7 MB bundle a 14.5 MB two-byte string in the service's
 * heap (decision 0062). In a line that is a comment, each such character becomes `?`, one UTF-16 unit
 * for one, so the source map's columns still hold; any other line is left as it is.
 */
export const latin1Comments = (source: string): string =>
  source.replace(/^[ \t]*(?:\/\/|\/\*|\*).*$/gm, (line) => line.replace(/[\u0100-\uffff]/g, '?'));

const bundle = async (entry: string, outfile: string): Promise<void> => {
  const result = await build({
    entryPoints: [entry],
    outfile,
    write: false,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    // LevelDB's native addon is found by node-gyp-build relative to its own package: it stays a
    // package in node_modules, required at run time from the bundle's folder upwards.
    // sharp loads libvips, a native library shipped as a package for the platform, the same way, and
    // so does resvg (the label renderer, 0051), whose fonts are read from dejavu-fonts-ttf's folder.
    external: ['leveldown', 'sharp', '@resvg/resvg-js'],
    // CommonJS dependencies call `require` for Node's built-ins; an ES module has none of its own.
    banner: {
      js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
    },
    sourcemap: 'linked',
    legalComments: 'linked',
    logLevel: 'warning',
  });
  await mkdir(dirname(outfile), { recursive: true });
  for (const file of result.outputFiles) {
    const partial = `${file.path}.${randomUUID()}.partial`;
    await writeFile(partial, file.path.endsWith('.js') ? latin1Comments(file.text) : file.contents);
    await rename(partial, file.path);
  }
};

export const bundleServer = (outfile: string = SERVER_BUNDLE): Promise<void> =>
  bundle('src/main.ts', outfile);

export const bundleBackupCommand = (outfile: string = BACKUP_BUNDLE): Promise<void> =>
  bundle('src/backup/cli.ts', outfile);

export const bundlePrintAgent = (outfile: string = PRINT_AGENT_BUNDLE): Promise<void> =>
  bundle('src/printAgent/main.ts', outfile);

export const bundleHeapLimit = (outfile: string = HEAP_LIMIT_BUNDLE): Promise<void> =>
  bundle('src/config/heapLimitMain.ts', outfile);

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await bundleServer(process.argv[2]);
  if (process.argv[2] === undefined) {
    await bundleBackupCommand();
    await bundlePrintAgent();
    await bundleHeapLimit();
  }
}
