// Browser Cache Storage for model files: every file a load downloads is kept under its URL, so
// a second visit loads the model offline. Files are served from the cache first (like the
// transformers library's browser cache); clearModelCache() drops them. Where Cache Storage is
// missing (Node, insecure pages) or `cache: false` is passed, nothing is read or written.

export const MODEL_CACHE_NAME = 'attnlens-models';

/** The model cache, or null when caching is off or unavailable. */
export async function openModelCache(enabled = true) {
  if (!enabled || typeof globalThis.caches?.open !== 'function') return null;
  try {
    return await globalThis.caches.open(MODEL_CACHE_NAME);
  } catch {
    return null; // e.g. a page whose storage is blocked: load without caching
  }
}

/** Deletes every cached model file; resolves to whether there was a cache to delete. */
export async function clearModelCache() {
  if (typeof globalThis.caches?.delete !== 'function') return false;
  return globalThis.caches.delete(MODEL_CACHE_NAME);
}

/** The cached bytes of `url`, or null. */
export async function cachedBytes(cache, url) {
  const hit = cache ? await cache.match(url) : undefined;
  return hit ? new Uint8Array(await hit.arrayBuffer()) : null;
}

/**
 * The size of the cached copy of `url` (from the Content-Length it was stored with), or
 * undefined.
 */
export async function cachedSize(cache, url) {
  const hit = cache ? await cache.match(url) : undefined;
  if (!hit) return undefined;
  const length = Number(hit.headers.get('content-length'));
  return Number.isSafeInteger(length) ? length : null;
}

/**
 * Stores `bytes` under `url`. A full quota must not fail the load that already has the bytes:
 * the file is then simply not cached.
 */
export async function storeBytes(cache, url, bytes, contentType = 'application/octet-stream') {
  if (!cache) return;
  try {
    await cache.put(
      url,
      new Response(bytes, {
        headers: { 'content-type': contentType, 'content-length': String(bytes.byteLength) },
      }),
    );
  } catch {
    // QuotaExceededError and the like: keep going uncached.
  }
}
