// Sources over HTTP: a Hub model id (+ revision), or the URL of a folder holding the same
// files. One code path for both: a file's URL, its size before download (the Hub's listing, else
// HEAD), a streaming download, and the browser cache in front of all three.

import { attnlensError } from '../../errors.js';
import { cachedBytes, cachedSize, openModelCache, storeBytes } from './cache.js';
import { download, headSize, httpError, request } from './download.js';
import {
  checkHubUrl,
  hubFileUrl,
  hubTreeUrl,
  readTreeListing,
  validateHubId,
  validateRevision,
} from './hub.js';

/** The source for `text`: an http(s) folder URL, else a Hub model id. */
export async function resolveRemoteSource(text, options) {
  const fetch = options.fetch === undefined ? globalThis.fetch?.bind(globalThis) : options.fetch;
  if (typeof fetch !== 'function') {
    throw attnlensError('invalid_argument', 'fetch', 'no fetch() here: pass options.fetch');
  }
  const cache = await openModelCache(options.cache === undefined ? true : options.cache);
  if (/^https?:/i.test(text)) {
    if (options.revision !== undefined) {
      throw attnlensError(
        'invalid_argument',
        'revision',
        'applies only to Hub model ids, not URLs',
      );
    }
    const folder = new URL(text.endsWith('/') ? text : `${text}/`);
    return httpSource(
      { kind: 'url', url: folder.href },
      (name) => new URL(name, folder).href,
      null,
      {
        fetch,
        cache,
      },
    );
  }
  const id = validateHubId(text);
  const revision = validateRevision(options.revision === undefined ? 'main' : options.revision);
  const hubUrl = checkHubUrl(options.hubUrl);
  return httpSource(
    { kind: 'hub', id, revision },
    (name) => hubFileUrl(id, revision, name, hubUrl),
    hubListing(fetch, cache, hubTreeUrl(id, revision, hubUrl), id, revision),
    { fetch, cache },
  );
}

function httpSource(describe, fileUrl, listing, { fetch, cache }) {
  return {
    describe,
    async list({ signal } = {}) {
      return listing ? listing(signal) : null;
    },
    async size(name, { signal } = {}) {
      const url = fileUrl(name);
      const cached = await cachedSize(cache, url);
      return cached !== undefined ? cached : headSize(fetch, url, signal);
    },
    /** Whether the browser's model cache holds the file (a load then needs no network). */
    async cached(name) {
      return (await cachedSize(cache, fileUrl(name))) !== undefined;
    },
    async read(name, { signal, expectedSize, onProgress } = {}) {
      const url = fileUrl(name);
      const cached = await cachedBytes(cache, url);
      if (cached) return { bytes: cached, fromCache: true };
      const bytes = await download(fetch, url, { signal, expectedSize, onProgress });
      if (bytes) await storeBytes(cache, url, bytes);
      return bytes && { bytes, fromCache: false };
    },
  };
}

// The Hub's listing of the repo's top folder (every page of it), cached like the files so an
// offline visit knows the sizes too. Returns null when the server has no listing API (a plain
// mirror): sizes then come from HEAD requests.
function hubListing(fetch, cache, treeUrl, id, revision) {
  return async (signal) => {
    const cached = await cachedBytes(cache, treeUrl);
    if (cached) return readTreeListing(JSON.parse(new TextDecoder().decode(cached)), treeUrl);
    const entries = [];
    const visited = new Set();
    let url = treeUrl;
    while (url && !visited.has(url)) {
      visited.add(url);
      const response = await request(
        fetch,
        url,
        { headers: { accept: 'application/json' } },
        signal,
      );
      if (!response.ok) {
        const code = response.headers.get('x-error-code');
        if (code === 'RepoNotFound' || code === 'GatedRepo') {
          throw attnlensError(
            'not_found',
            'source',
            `model '${id}' is not on the Hub, or is private or gated (HTTP ${response.status})`,
            { status: response.status, reason: hubReason(code, response.status) },
          );
        }
        if (code === 'RevisionNotFound') {
          throw attnlensError(
            'not_found',
            'revision',
            `model '${id}' has no revision '${revision}'`,
            {
              status: response.status,
              reason: 'not_found',
            },
          );
        }
        if (response.status === 404 || response.status === 405 || response.status === 501)
          return null;
        throw httpError(url, response);
      }
      const page = await response.json().catch(() => null);
      if (!Array.isArray(page)) {
        throw attnlensError('invalid_argument', 'source', `${url} did not return a file list`);
      }
      entries.push(...page);
      url = nextPage(response.headers.get('link'), treeUrl);
    }
    const sizes = readTreeListing(entries, treeUrl);
    await storeBytes(
      cache,
      treeUrl,
      new TextEncoder().encode(JSON.stringify(entries)),
      'application/json',
    );
    return sizes;
  };
}

// The Hub pages long listings with `Link: <...>; rel="next"`; only links to the same server count.
function nextPage(link, base) {
  const match = link && /<([^>]+)>\s*;\s*rel="?next"?/.exec(link);
  if (!match) return null;
  const next = new URL(match[1], base);
  return next.origin === new URL(base).origin ? next.href : null;
}

// The Hub answers an anonymous visitor 401 RepoNotFound for a private repo and a missing one
// alike; a mirror may say 404.
function hubReason(code, status) {
  if (code === 'GatedRepo') return 'gated';
  return status === 404 ? 'not_found' : 'denied';
}
