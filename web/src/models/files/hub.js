// The Hugging Face Hub's layout: model ids, revisions and the URLs built from them.
//   files    {hubUrl}/{id}/resolve/{revision}/{file}
//   listing  {hubUrl}/api/models/{id}/tree/{revision}   [{ type, path, size, lfs? }, ...]
// The revision is one URL path segment, so 'refs/pr/1' travels as 'refs%2Fpr%2F1' (as the Hub's
// own clients send it). Ids and revisions are checked before any URL is made from them, so
// neither can reach another path of the server.

import { attnlensError, describe } from '../../errors.js';

export const DEFAULT_HUB_URL = 'https://huggingface.co';

// The Hub's own rule for repo ids: [namespace/]name, word characters, '-' and '.', starting and
// ending with a word character, no '--' or '..', at most 96 characters.
const HUB_NAME = '[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?';
const HUB_ID = new RegExp(`^(?:${HUB_NAME}/)?${HUB_NAME}$`);

/** Returns `id` when it is a valid Hub model id, else throws a TypeError saying why. */
export function validateHubId(id) {
  const fail = (why) =>
    attnlensError(
      'invalid_argument',
      'source',
      `${describe(id)} is not a Hugging Face model id: ${why}`,
    );
  if (typeof id !== 'string') throw fail('expected a string such as "gpt2" or "owner/name"');
  if (id.length === 0 || id.length > 96) throw fail('it must have 1 to 96 characters');
  if (id.includes('..') || id.includes('--')) throw fail("it may not contain '..' or '--'");
  if (!HUB_ID.test(id)) {
    throw fail(
      "use letters, digits, '_', '-' and '.' in 'name' or 'owner/name', starting and ending " +
        'with a letter or digit',
    );
  }
  return id;
}

/**
 * Returns `revision` when it is a valid git branch, tag, commit or 'refs/pr/N', else throws.
 * The rules are git's own ref-name rules (git check-ref-format), which also keep a revision from
 * escaping its URL segment.
 */
export function validateRevision(revision) {
  const fail = (why) =>
    attnlensError(
      'invalid_argument',
      'revision',
      `${describe(revision)} is not a revision: ${why}`,
    );
  if (typeof revision !== 'string') throw fail('expected a branch, tag, commit or "refs/pr/N"');
  if (revision.length === 0 || revision.length > 256)
    throw fail('it must have 1 to 256 characters');
  // eslint-disable-next-line no-control-regex
  if (/[\x00-\x20\x7f~^:?*[\\%]/.test(revision)) {
    throw fail('spaces, control characters and ~ ^ : ? * [ \\ % are not allowed');
  }
  if (revision.includes('..') || revision.includes('//') || revision.includes('@{')) {
    throw fail("it may not contain '..', '//' or '@{'");
  }
  if (/^\/|\/$|\.$|\.lock$|(^|\/)\./.test(revision) || revision === '@') {
    throw fail(
      "no part may start with '.', and it may not start or end with '/' or end with '.' or '.lock'",
    );
  }
  return revision;
}

/** The hub URL without a trailing slash, checked to be http(s). */
export function checkHubUrl(hubUrl = DEFAULT_HUB_URL) {
  let url;
  try {
    url = new URL(String(hubUrl));
  } catch {
    throw attnlensError('invalid_argument', 'hubUrl', `${describe(hubUrl)} is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw attnlensError('invalid_argument', 'hubUrl', `must be an http(s) URL, got ${url.href}`);
  }
  return url.href.replace(/\/+$/, '');
}

/** {hubUrl}/{id}/resolve/{revision}/{file} */
export function hubFileUrl(id, revision, file, hubUrl = DEFAULT_HUB_URL) {
  return `${checkHubUrl(hubUrl)}/${validateHubId(id)}/resolve/${encodeURIComponent(
    validateRevision(revision),
  )}/${encodeURIComponent(file)}`;
}

/** {hubUrl}/api/models/{id}/tree/{revision} */
export function hubTreeUrl(id, revision, hubUrl = DEFAULT_HUB_URL) {
  return `${checkHubUrl(hubUrl)}/api/models/${validateHubId(id)}/tree/${encodeURIComponent(
    validateRevision(revision),
  )}`;
}

/**
 * Sizes of the files at the top of a repo from one page of the tree listing. The size of a
 * large (LFS / Xet) file is the file's own size, not its pointer's: the listing's `size`, or
 * `lfs.size` where present.
 */
export function readTreeListing(entries, where) {
  if (!Array.isArray(entries)) {
    throw attnlensError('invalid_argument', 'source', `${where} did not return a file list`);
  }
  const sizes = new Map();
  for (const entry of entries) {
    if (entry?.type !== 'file' || typeof entry.path !== 'string') continue;
    const size = entry.lfs?.size ?? entry.size;
    sizes.set(entry.path, Number.isSafeInteger(size) && size >= 0 ? size : null);
  }
  return sizes;
}
