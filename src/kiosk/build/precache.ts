/**
 * Gives the hand-written service worker its precache list once the bundle is on disk: every file the
 * build wrote (hashed assets, index.html, the manifest and icon) except the worker itself, and a
 * version derived from their bytes. A changed file changes the version, so `sw.js` changes byte for
 * byte, the browser installs the new worker, and it replaces the old cache whole.
 */
import { createHash } from 'node:crypto';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Plugin } from 'vite';

export const SW_FILE = 'sw.js';
const PRECACHE_TOKEN = '__KIOSK_PRECACHE__';
const VERSION_TOKEN = '__KIOSK_VERSION__';

const filesUnder = async (dir: string): Promise<string[]> => {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)).split(path.sep).join('/'))
    .sort();
};

export const precacheManifest = (): Plugin => {
  let outDir = '';
  return {
    name: 'chamada-kiosk-precache',
    apply: 'build',
    configResolved(config) {
      outDir = path.resolve(config.root, config.build.outDir);
    },
    writeBundle: {
      order: 'post',
      sequential: true,
      async handler() {
        const files = (await filesUnder(outDir)).filter((f) => f !== SW_FILE);
        const hash = createHash('sha256');
        for (const f of files)
          hash
            .update(f)
            .update('\0')
            .update(await readFile(path.join(outDir, f)));
        const swPath = path.join(outDir, SW_FILE);
        const sw = await readFile(swPath, 'utf8');
        if (!sw.includes(PRECACHE_TOKEN) || !sw.includes(VERSION_TOKEN)) {
          throw new Error(`${SW_FILE} lost its ${PRECACHE_TOKEN} or ${VERSION_TOKEN} placeholder`);
        }
        await writeFile(
          swPath,
          sw
            .replaceAll(PRECACHE_TOKEN, JSON.stringify(files))
            .replaceAll(VERSION_TOKEN, JSON.stringify(hash.digest('hex').slice(0, 16))),
        );
      },
    },
  };
};
