/**
 * The kiosk's build: `npm run build` writes it to dist/kiosk/, which the service serves at /kiosk/.
 * `npm run dev:kiosk` serves it with hot reload and sends /api to a service on 127.0.0.1:8080.
 */
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import { precacheManifest, SW_FILE } from './build/precache.js';

const here = (p: string): string => fileURLToPath(new URL(p, import.meta.url));

export default defineConfig({
  root: here('.'),
  base: '/kiosk/',
  publicDir: here('public'),
  clearScreen: false,
  build: {
    outDir: here('../../dist/kiosk'),
    emptyOutDir: true,
    target: 'es2022',
    // Inlined assets would need `data:` in the CSP; every asset stays a same-origin file.
    assetsInlineLimit: 0,
    // Chromium supports modulepreload; the polyfill would only add code.
    modulePreload: { polyfill: false },
    rollupOptions: {
      input: { index: here('index.html'), sw: here('sw/sw.ts') },
      output: {
        // The worker keeps a fixed name: browsers look for updates at the URL it was registered with.
        entryFileNames: (chunk) => (chunk.name === 'sw' ? SW_FILE : 'assets/[name]-[hash].js'),
      },
    },
  },
  plugins: [precacheManifest()],
  server: { proxy: { '/api': 'http://127.0.0.1:8080' } },
});
