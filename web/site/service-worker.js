// The site's service worker: once a page of the site has been opened, the demo, the widget pages
// and the package's modules keep working with the network gone.
//
// scripts/build-site.mjs writes it to <site>/sw.js, after two constants it generates from the
// files it copies:
//   SITE_VERSION  a hash of every precached file's path and content: any change to the site
//                 changes sw.js, so the browser installs the new worker, which fills a cache of
//                 its own and deletes the older ones;
//   PRECACHE      those files, relative to this script (directory pages as './demo/').
//
// Same-origin GET requests go to the network first and to the cache only when the network
// fails, so a reader online never gets a page older than the server's; other origins (models
// from the Hub, which the model loader caches itself in 'attnlens-models') are never touched.
/* global SITE_VERSION, PRECACHE */

const CACHE_PREFIX = 'attnlens-site-';
const CACHE = `${CACHE_PREFIX}${SITE_VERSION}`;

self.addEventListener('install', (event) => {
  event.waitUntil(
    (async () => {
      const cache = await caches.open(CACHE);
      // 'reload': from the server, not from an HTTP cache that may hold the previous version.
      await cache.addAll(PRECACHE.map((path) => new Request(path, { cache: 'reload' })));
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
  const { request } = event;
  if (request.method !== 'GET' || request.headers.has('range')) return;
  if (new URL(request.url).origin !== self.location.origin) return;
  event.respondWith(networkFirst(request));
});

// caches.open() would make the cache again: a worker that a newer one has replaced, finishing
// a request, must not bring back the cache the newer one deleted.
async function ownCache() {
  return (await caches.has(CACHE)) ? caches.open(CACHE) : null;
}

async function networkFirst(request) {
  try {
    const response = await fetch(request);
    // A file the precache list leaves out (an uncompressed .wasm fallback) is kept once fetched.
    const cache = response.ok && response.type === 'basic' ? await ownCache() : null;
    if (cache && !(await cache.match(request))) await cache.put(request, response.clone());
    return response;
  } catch (error) {
    // The demo keeps its state in the query string: any ?text=... is the same page.
    const cached = await (await ownCache())?.match(request, { ignoreSearch: true });
    if (cached) return cached;
    throw error;
  }
}
