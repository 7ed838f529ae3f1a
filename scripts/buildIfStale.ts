/**
 * `npm run build`, part by part, for the parts whose output is older than the sources
 * (`scripts/buildFreshness.ts`): what the benchmark and the end-to-end tests run first, so that CI,
 * which builds once, does not build again before each of them (decision 0048).
 *
 *   tsx scripts/buildIfStale.ts [server] [kiosk] [office]      (no part named: all three)
 */
import { spawnSync } from 'node:child_process';
import { upToDate } from './buildFreshness.js';
import {
  BACKUP_BUNDLE,
  bundleBackupCommand,
  bundleHeapLimit,
  bundleServer,
  HEAP_LIMIT_BUNDLE,
  SERVER_BUNDLE,
} from './buildServer.js';

const npmRun = (script: string): void => {
  const run = spawnSync('npm', ['run', '-s', script], { stdio: 'inherit' });
  if (run.status !== 0) throw new Error(`npm run ${script} failed (${run.status ?? run.signal})`);
};

const PARTS = {
  // As `npm run build`: the sources type-check before they are bundled.
  server: {
    // The heap limit's bundle too: the bench starts the service through the image's command (0077).
    outputs: [SERVER_BUNDLE, BACKUP_BUNDLE, HEAP_LIMIT_BUNDLE],
    build: async () => {
      const tsc = spawnSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
      if (tsc.status !== 0) throw new Error('tsc -p tsconfig.build.json failed');
      await bundleServer();
      await bundleBackupCommand();
      await bundleHeapLimit();
    },
  },
  // Vite writes each app's index.html at every build, after emptying its folder.
  kiosk: { outputs: ['dist/kiosk/index.html'], build: async () => npmRun('build:kiosk') },
  office: { outputs: ['dist/office/index.html'], build: async () => npmRun('build:office') },
} as const;

type Part = keyof typeof PARTS;
const isPart = (s: string): s is Part => s in PARTS;

const named = process.argv.slice(2);
const unknown = named.filter((s) => !isPart(s));
if (unknown.length > 0)
  throw new Error(`unknown part(s) ${unknown.join(', ')}; known: server, kiosk, office`);
const parts = named.filter(isPart);
for (const part of parts.length === 0 ? (['server', 'kiosk', 'office'] as const) : parts) {
  const { outputs, build } = PARTS[part];
  if (await upToDate(outputs)) process.stderr.write(`build: ${part} is up to date (${outputs.join(', ')})\n`);
  else await build();
}
