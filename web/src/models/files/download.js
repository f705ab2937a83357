// HTTP for model files: the size of a file before it is downloaded (HEAD), and streaming
// downloads with progress into one buffer sized up front. The Hub answers a large file's HEAD
// with a redirect carrying X-Linked-Size (the file's size; Content-Length is then the
// redirect's); other servers give Content-Length.

import { attnlensError } from '../../errors.js';
import { abortError, throwIfAborted } from './abort.js';

// Every error here carries `reason`, which a page can put in its own words without reading the
// message: 'unreachable' (fetch() failed: offline, blocked or no such server), 'not_found' (404),
// 'denied' (401/403: private, gated, or not there for an anonymous visitor), 'server' (another
// HTTP status), 'interrupted' (the body broke off or ran past its size). remote.js adds 'gated'.

/**
 * fetch() that turns network failures into errors naming the URL, and cancellation into
 * AbortError.
 */
export async function request(fetch, url, init, signal) {
  throwIfAborted(signal);
  try {
    return await fetch(url, { ...init, signal });
  } catch (error) {
    if (signal?.aborted || error?.name === 'AbortError') throw abortError(signal);
    throw attnlensError(
      'network',
      'source',
      `could not fetch ${url} (${error?.message ?? error})`,
      {
        url,
        cause: error,
        reason: 'unreachable',
      },
    );
  }
}

export function httpError(url, response) {
  return attnlensError(
    response.status === 404 ? 'not_found' : 'http_error',
    'source',
    `${url} answered HTTP ${response.status}` +
      (response.statusText ? ` ${response.statusText}` : ''),
    { url, status: response.status, reason: httpReason(response.status) },
  );
}

function httpReason(status) {
  if (status === 404) return 'not_found';
  return status === 401 || status === 403 ? 'denied' : 'server';
}

/**
 * The size of the file at `url` from a HEAD request: a number, null when the server does not
 * say, undefined when there is no such file (404).
 */
export async function headSize(fetch, url, signal) {
  const response = await request(fetch, url, { method: 'HEAD' }, signal);
  if (response.status === 404) return undefined;
  if (!response.ok) throw httpError(url, response);
  for (const header of ['x-linked-size', 'content-length']) {
    const value = response.headers.get(header);
    if (header === 'content-length' && response.headers.get('content-encoding')) continue;
    if (value !== null && /^\d+$/.test(value)) return Number(value);
  }
  return null;
}

/**
 * Downloads `url` into one Uint8Array, calling onProgress(loaded) after every chunk. Resolves to
 * null on 404. `expectedSize` (from a listing) sizes the buffer; a body that ends short of its
 * announced length, or runs past it, is an error rather than a truncated file.
 */
export async function download(fetch, url, { signal, expectedSize, onProgress }) {
  const response = await request(fetch, url, {}, signal);
  if (response.status === 404) return null;
  if (!response.ok) throw httpError(url, response);
  const announced = response.headers.get('content-encoding')
    ? null
    : Number(response.headers.get('content-length') ?? NaN);
  const total = expectedSize ?? (Number.isSafeInteger(announced) ? announced : null);
  if (!response.body) {
    const bytes = new Uint8Array(await response.arrayBuffer());
    onProgress?.(bytes.byteLength);
    return bytes;
  }
  const reader = response.body.getReader();
  let buffer = new Uint8Array(total ?? 1 << 16);
  let loaded = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (loaded + value.byteLength > buffer.byteLength) {
        if (total !== null) throw sizeError(url, 'is longer than', total);
        const grown = new Uint8Array(Math.max(buffer.byteLength * 2, loaded + value.byteLength));
        grown.set(buffer.subarray(0, loaded));
        buffer = grown;
      }
      buffer.set(value, loaded);
      loaded += value.byteLength;
      onProgress?.(loaded);
    }
  } catch (error) {
    reader.cancel().catch(() => {});
    if (signal?.aborted || error?.name === 'AbortError') throw abortError(signal);
    if (error?.code) throw error;
    throw attnlensError('network', 'source', `download of ${url} failed (${error?.message})`, {
      url,
      cause: error,
      reason: 'interrupted',
    });
  }
  if (total !== null && loaded !== total) throw sizeError(url, `ended after ${loaded} of`, total);
  return loaded === buffer.byteLength ? buffer : buffer.slice(0, loaded);
}

function sizeError(url, what, total) {
  return attnlensError('network', 'source', `the download of ${url} ${what} ${total} bytes`, {
    url,
    reason: 'interrupted',
  });
}
