/**
 * The office's build (decision 0032): `npm run build` writes it to dist/office/, which the service
 * serves at /office/. `npm run dev:office` serves it with hot reload and sends /api to 127.0.0.1:8080.
 */
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = (p: string): string => fileURLToPath(new URL(p, import.meta.url));

export default defineConfig({
  root: here('.'),
  base: '/office/',
  clearScreen: false,
  build: {
    outDir: here('../../dist/office'),
    emptyOutDir: true,
    target: 'es2022',
    // Inlined assets would need `data:` in the CSP; every asset stays a same-origin file.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
  },
  server: { proxy: { '/api': 'http://127.0.0.1:8080' } },
});
