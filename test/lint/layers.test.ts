/**
 * The layer rules themselves (`biome.layers.json`, per-folder `noRestrictedImports` made from the
 * "may import" column of design-docs/architecture.md by `scripts/layerRules.ts`): `npm run lint`
 * passing on the tree says nothing if the rules would let anything through. So fixtures with
 * deliberately wrong imports, and some allowed ones, are laid out as source files of a scratch tree
 * next to a copy of the project's Biome configuration, and Biome must refuse exactly the wrong ones.
 */
import { execFile } from 'node:child_process';
import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect } from 'chai';
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import { makeTempDir, removeDir } from '../support/tempDir.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIOME = join(ROOT, 'node_modules', '.bin', 'biome');

interface Fixture {
  /** Where the file stands in the tree, which decides the layer whose rule applies. */
  readonly path: string;
  readonly imports: ReadonlyArray<{ readonly from: string; readonly refused: boolean }>;
}

const FIXTURES: ReadonlyArray<Fixture> = [
  {
    path: 'src/rules/wrongImports.ts',
    imports: [
      { from: '../domain/codec.js', refused: false },
      { from: 'fp-ts/lib/Either.js', refused: false },
      { from: '../store/pouch.js', refused: true },
      { from: 'node:crypto', refused: true },
      { from: 'rxjs', refused: true },
      { from: '../lib/keyedLock.js', refused: true },
    ],
  },
  {
    path: 'src/domain/wrongImports.ts',
    imports: [
      { from: 'io-ts', refused: false },
      { from: '../rules/conflicts.js', refused: true },
      { from: 'express', refused: true },
    ],
  },
  {
    path: 'src/lib/wrongImports.ts',
    imports: [
      { from: 'node:timers/promises', refused: false },
      { from: 'lru-cache', refused: false },
      { from: '../domain/codec.js', refused: true },
      { from: '../store/pouch.js', refused: true },
    ],
  },
  {
    path: 'src/store/wrongImports.ts',
    imports: [
      { from: '../lib/batchWriter.js', refused: false },
      { from: 'pouchdb-node', refused: false },
      { from: '../rules/projections.js', refused: false },
      // The cycle the batch writer's move to src/lib ended: store -> sync -> store.
      { from: '../sync/changeFeed.js', refused: true },
      { from: '../http/app.js', refused: true },
      { from: '../service.js', refused: true },
    ],
  },
  {
    path: 'src/http/routes/wrongImports.ts',
    imports: [
      { from: '../../registration/studentService.js', refused: false },
      { from: '../route.js', refused: false },
      { from: 'express', refused: false },
      { from: '../../store/students.js', refused: true },
      { from: 'pouchdb-node', refused: true },
      { from: 'lru-cache', refused: true },
    ],
  },
  {
    path: 'src/http/middleware/fineImports.ts',
    imports: [{ from: '../../store/storeErrors.js', refused: false }],
  },
  {
    path: 'src/sync/wrongImports.ts',
    imports: [
      { from: 'rxjs', refused: false },
      { from: '../store/events.js', refused: false },
      { from: '../registration/studentService.js', refused: true },
      { from: 'express', refused: true },
    ],
  },
  {
    path: 'src/kiosk/app/screens/wrongImports.ts',
    imports: [
      { from: '../../../rules/checkin.js', refused: false },
      { from: '../../../lib/csvFormulas.js', refused: false },
      { from: 'pouchdb-browser', refused: false },
      { from: '../../../store/pouch.js', refused: true },
      { from: 'node:fs', refused: true },
      // The two browser apps share src/client, never each other's folder (0050).
      { from: '../../../client/dom.js', refused: false },
      { from: '../../../office/app/calls.js', refused: true },
    ],
  },
  {
    path: 'src/office/app/pages/wrongImports.ts',
    imports: [
      { from: '../../../client/endpoints.js', refused: false },
      { from: '../../../domain/student.js', refused: false },
      { from: '../../../rules/authorization.js', refused: false },
      { from: '../../../kiosk/app/dom.js', refused: true },
      { from: '../../../kiosk/app/i18n.js', refused: true },
      { from: '../../../store/students.js', refused: true },
      { from: 'pouchdb-browser', refused: true },
    ],
  },
  {
    path: 'src/client/wrongImports.ts',
    imports: [
      { from: '../domain/codec.js', refused: false },
      { from: 'io-ts', refused: false },
      { from: '../kiosk/app/session.js', refused: true },
      { from: '../office/app/client.js', refused: true },
      { from: '../rules/authorization.js', refused: true },
      { from: 'pouchdb-browser', refused: true },
    ],
  },
];

const sourceOf = (f: Fixture): string => {
  const lines = f.imports.map((imp, i) => `import { x${i} } from '${imp.from}';`);
  return `${lines.join('\n')}\n\nexport const used = [${f.imports.map((_, i) => `x${i}`).join(', ')}];\n`;
};

/** What the test reads of Biome's JSON report (`--reporter=json`). */
const BiomeReport = t.type({
  diagnostics: t.array(
    t.partial({
      category: t.string,
      message: t.string,
      location: t.union([t.null, t.partial({ path: t.string, start: t.type({ line: t.number }) })]),
    }),
  ),
});

/** Biome's layer refusals in the scratch tree, as `path:line` and message. */
const refusedImports = async (dir: string): Promise<ReadonlyArray<{ at: string; message: string }>> => {
  // Biome exits 1 when it reports errors; its JSON report is on stdout either way.
  const run = await promisify(execFile)(BIOME, ['lint', '--vcs-enabled=false', '--reporter=json', 'src'], {
    cwd: dir,
  }).catch((e: unknown) => {
    if (typeof e === 'object' && e !== null && 'stdout' in e && typeof e.stdout === 'string')
      return { stdout: e.stdout };
    throw e;
  });
  const report = BiomeReport.decode(JSON.parse(run.stdout));
  if (E.isLeft(report)) throw new Error(`not a Biome report: ${run.stdout.slice(0, 200)}`);
  return report.right.diagnostics
    .filter((d) => d.category === 'lint/style/noRestrictedImports')
    .map((d) => ({
      at: `${d.location?.path ?? '?'}:${d.location?.start?.line ?? '?'}`,
      message: d.message ?? '',
    }));
};

describe('lint: the layers of design-docs/architecture.md', () => {
  let dir: string;
  before(async () => {
    dir = await makeTempDir('layers');
    for (const config of ['biome.json', 'biome.layers.json'])
      await copyFile(join(ROOT, config), join(dir, config));
    for (const f of FIXTURES) {
      await mkdir(dirname(join(dir, f.path)), { recursive: true });
      await writeFile(join(dir, f.path), sourceOf(f));
    }
  });
  after(() => removeDir(dir));

  it('refuses every import across a layer it may not cross, and only those', async () => {
    const expected = FIXTURES.flatMap((f) =>
      f.imports.flatMap((imp, i) => (imp.refused ? [`${f.path}:${i + 1}`] : [])),
    ).sort();
    expect((await refusedImports(dir)).map((r) => r.at).sort()).to.deep.equal(expected);
  });

  it('says what the layer may import, and where that is written', async () => {
    const rules = (await refusedImports(dir)).filter((r) => r.at.startsWith('src/rules/'));
    expect(rules).to.have.length(4);
    for (const r of rules)
      expect(r.message).to.equal(
        'src/rules/ may import only src/domain, fp-ts, io-ts (design-docs/architecture.md, "Layers": ' +
          'change the table first, then run npm run lint:layers).',
      );
  });
});
