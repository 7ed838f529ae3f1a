/**
 * The layer rules of `npm run lint`, made from the "may import" column of the Layers table in
 * design-docs/architecture.md, so the table is the one statement of what may import what and the
 * linter keeps it true. Each row becomes a Biome `noRestrictedImports` override for its folders, in
 * `biome.layers.json` (which `biome.json` extends):
 *
 * - a package is allowed only when the row names it (`node:` stands for every Node built-in), so a
 *   new dependency of a layer is a change to the table first;
 * - imports between files of the same top folder are free; another top folder of `src/` is allowed
 *   only when the row names it (`src/store`), or one module of it (`src/store/storeErrors`);
 * - the wiring (`src/service.ts`, `src/main.ts`) is imported by no layer.
 *
 * `tsx scripts/layerRules.ts` writes the file; `--check` (part of `npm run lint`) fails when the file
 * and the table disagree, or when a top folder of `src/` has no row.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';

const DOC = 'design-docs/architecture.md';
const TARGET = 'biome.layers.json';

interface Layer {
  /** Folders the row covers, as `src/x/` or `src/x/y/`. */
  readonly folders: ReadonlyArray<string>;
  /** Every backticked entry of the row's "may import" cell. */
  readonly mayImport: ReadonlyArray<string>;
}

const backticked = (cell: string): string[] => [...cell.matchAll(/`([^`]+)`/g)].flatMap((m) => m[1] ?? []);

/** The rows of the table under "## Layers" whose first cell names folders, wiring rows left out. */
const layersOf = (markdown: string): Layer[] => {
  const section = markdown.split(/^## /m).find((s) => s.startsWith('Layers'));
  if (section === undefined) throw new Error(`${DOC} has no "## Layers" section`);
  const layers: Layer[] = [];
  for (const line of section.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    // | folder | holds | may import |  (split gives an empty cell before the first bar and after the last)
    if (cells.length !== 5) continue;
    const [, first = '', , last = ''] = cells;
    const folders = backticked(first).filter((f) => f.startsWith('src/') && f.endsWith('/'));
    if (folders.length === 0) continue;
    layers.push({ folders, mayImport: backticked(last) });
  }
  if (layers.length === 0) throw new Error(`the Layers table of ${DOC} has no rows`);
  return layers;
};

const topFolder = (path: string): string => path.split('/')[1] ?? '';

const MESSAGE_TAIL = `(${DOC}, "Layers": change the table first, then run npm run lint:layers).`;

/** The override of one row: everything refused, then what the row allows let through again. */
const overrideOf = (layer: Layer, srcFolders: ReadonlyArray<string>, wiring: ReadonlyArray<string>) => {
  const own = new Set(layer.folders.map(topFolder));
  const folders = new Set<string>();
  const modules: string[] = [];
  const packages: string[] = [];
  for (const entry of layer.mayImport) {
    if (entry.startsWith('src/')) {
      const [, folder = '', ...rest] = entry.split('/');
      if (!srcFolders.includes(folder)) throw new Error(`${entry} in the Layers table is no folder of src/`);
      if (rest.length === 0) folders.add(folder);
      else modules.push(`${folder}/${rest.join('/')}`);
    } else packages.push(entry);
  }
  const group = [
    '**',
    '!./**',
    '!../**',
    ...srcFolders.filter((f) => !own.has(f) && !folders.has(f)).map((f) => `../**/${f}/**`),
    ...wiring.map((w) => `../**/${w}.js`),
    ...modules.map((m) => `!../**/${m}.js`),
    ...packages.flatMap((p) => (p === 'node:' ? ['!node:*', '!node:*/**'] : [`!${p}`, `!${p}/**`])),
  ];
  return {
    includes: layer.folders.map((f) => `${f}**`),
    linter: {
      rules: {
        style: {
          noRestrictedImports: {
            level: 'error',
            options: {
              patterns: [
                {
                  group,
                  message: `${layer.folders.join(', ')} may import only ${layer.mayImport.join(', ')} ${MESSAGE_TAIL}`,
                },
              ],
            },
          },
        },
      },
    },
  };
};

const layerRules = (markdown: string, srcEntries: ReadonlyArray<{ name: string; isDir: boolean }>) => {
  const srcFolders = srcEntries.filter((e) => e.isDir).map((e) => e.name);
  const wiring = srcEntries.filter((e) => !e.isDir && e.name.endsWith('.ts')).map((e) => e.name.slice(0, -3));
  const layers = layersOf(markdown);
  const covered = new Set(layers.flatMap((l) => l.folders.map(topFolder)));
  const missing = srcFolders.filter((f) => !covered.has(f));
  if (missing.length > 0)
    throw new Error(`no row in the Layers table of ${DOC} for src/${missing.join(', src/')}`);
  return { overrides: layers.map((l) => overrideOf(l, srcFolders, wiring)) };
};

const main = (): void => {
  const srcEntries = readdirSync('src', { withFileTypes: true }).map((e) => ({
    name: e.name,
    isDir: e.isDirectory(),
  }));
  const rules = layerRules(readFileSync(DOC, 'utf8'), srcEntries);
  if (process.argv.includes('--check')) {
    const current: unknown = JSON.parse(readFileSync(TARGET, 'utf8'));
    if (!isDeepStrictEqual(current, rules)) {
      process.stderr.write(
        `${TARGET} does not say what the Layers table of ${DOC} says: run npm run lint:layers\n`,
      );
      process.exitCode = 1;
    }
    return;
  }
  writeFileSync(TARGET, `${JSON.stringify(rules, null, 2)}\n`);
  // Laid out as `biome check` expects it, so the lint that follows finds nothing to format.
  execFileSync('node_modules/.bin/biome', ['format', '--write', TARGET], { stdio: 'ignore' });
  process.stdout.write(`wrote ${TARGET}\n`);
};

main();
