/**
 * The kiosk's service worker: the app shell from a versioned cache, so the kiosk opens with no network
 * after its first visit. Cache first, because every precached file either has a content hash in its
 * name or is replaced together with the whole cache when the build changes (the version below). Never
 * touches the API: /api responses carry personal data and are `no-store`.
 */
// A module, so this declaration narrows the worker's global `self` to a service worker's.
export {};

declare const self: ServiceWorkerGlobalScope;
/** Filled in after the build (src/kiosk/build/precache.ts): files relative to the worker's scope. */
declare const __KIOSK_PRECACHE__: ReadonlyArray<string>;
declare const __KIOSK_VERSION__: string;

const CACHE_PREFIX = 'chamada-kiosk-';
const CACHE = `${CACHE_PREFIX}${__KIOSK_VERSION__}`;
const scope = (): URL => new URL(self.registration.scope);
const inScope = (file: string): string => new URL(file, scope()).href;

self.addEventListener('install', (event) => {
  event.waitUntil(
    (async () => {
      const cache = await caches.open(CACHE);
      // `reload` skips the HTTP cache, so a no-cache index.html is fetched fresh.
      await cache.addAll(__KIOSK_PRECACHE__.map((f) => new Request(inScope(f), { cache: 'reload' })));
      // The shell loads everything at start, so a running page never asks for a file of the old build.
      await self.skipWaiting();
    })(),
  );
});

self.addEventListener('activate', (event) => {
  event.waitUntil(
    (async () => {
      for (const name of await caches.keys()) {
        if (name.startsWith(CACHE_PREFIX) && name !== CACHE) await caches.delete(name);
      }
      await self.clients.claim();
    })(),
  );
});

self.addEventListener('fetch', (event) => {
  const request = event.request;
  if (request.method !== 'GET') return;
  const url = new URL(request.url);
  const base = scope();
  if (url.origin !== base.origin || !url.pathname.startsWith(base.pathname)) return;
  // The kiosk is one page: every navigation inside the scope opens it.
  const key = request.mode === 'navigate' ? inScope('index.html') : request;
  event.respondWith(
    (async () => {
      // `ignoreVary`: the service sends `Vary: Origin` on everything (0006), and module scripts are
      // requested in CORS mode with an Origin the install-time requests did not carry.
      const cached = await caches.match(key, {
        cacheName: CACHE,
        ignoreVary: true,
        ignoreSearch: request.mode === 'navigate',
      });
      return cached ?? fetch(request);
    })(),
  );
});
