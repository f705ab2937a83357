// Sources whose files are already on this machine: a Node folder (path or file: URL) and the
// File objects a person picked or dropped in a page. A source answers three questions:
//   list()              Map of file name -> size in bytes (null when it cannot list)
//   read(name, opts)    the file's bytes, or null when it has no such file
//   describe            what `files.source` reports
// Both local sources list their files, so sizes are known before anything is read.

import { attnlensError, describe } from '../../errors.js';
import { nodeBuiltin } from '../../loader.js';
import { abortable, throwIfAborted } from './abort.js';

/** A source over a Node folder: `path` a folder path or a file: URL. */
export async function folderSource(location) {
  const { fileURLToPath, pathToFileURL } = await nodeBuiltin('url');
  const path = await nodeBuiltin('path');
  const fs = (await nodeBuiltin('fs')).promises;
  const folder = path.resolve(
    location instanceof URL || String(location).startsWith('file:')
      ? fileURLToPath(location)
      : String(location),
  );
  let stat;
  try {
    stat = await fs.stat(folder);
  } catch {
    throw attnlensError('not_found', 'source', `no model folder at ${folder}`);
  }
  if (!stat.isDirectory()) {
    throw attnlensError('invalid_argument', 'source', `${folder} is not a folder`);
  }
  const roots = await linkRoots(fs, path, folder);
  // A file's real path: itself, or where its link points when that stays within `roots`.
  const resolve = async (name) => {
    const file = path.join(folder, name);
    const real = await fs.realpath(file);
    if (!roots.some((root) => real.startsWith(root + path.sep))) {
      throw attnlensError(
        'invalid_argument',
        name,
        `is a link to ${real}, outside the model folder` +
          (roots.length > 1 ? ` and its cache's ${roots[1]}` : ''),
      );
    }
    return real;
  };
  return {
    describe: { kind: 'folder', url: pathToFileURL(folder).href },
    async list() {
      const sizes = new Map();
      for (const entry of await fs.readdir(folder, { withFileTypes: true })) {
        const file = path.join(folder, entry.name);
        if (entry.isFile()) {
          sizes.set(entry.name, (await fs.stat(file)).size);
        } else if (entry.isSymbolicLink()) {
          // Listed whatever it points at: reading one that leaves the tree is the error.
          const target = await fs.stat(file).catch(() => null);
          if (target?.isFile()) sizes.set(entry.name, target.size);
        }
      }
      return sizes;
    },
    async read(name, { signal } = {}) {
      return abortable(signal, async () => {
        try {
          const bytes = await fs.readFile(await resolve(name), { signal });
          return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
        } catch (error) {
          if (error.code === 'ENOENT') return null;
          throw error;
        }
      });
    },
  };
}

/**
 * Where links in `folder` may point: the folder itself, and for a snapshot of a Hugging Face
 * cache (models--ORG--NAME/snapshots/REV/, whose files link to ../../blobs/SHA) that repository's
 * blobs/ folder, nothing else. Real paths, so a link cannot step out through another link.
 */
async function linkRoots(fs, path, folder) {
  const real = await fs.realpath(folder);
  const snapshots = path.dirname(real);
  const repository = path.dirname(snapshots);
  const roots = [real];
  if (path.basename(snapshots) === 'snapshots' && /^models--/.test(path.basename(repository))) {
    const blobs = await fs.realpath(path.join(repository, 'blobs')).catch(() => null);
    if (blobs) roots.push(blobs);
  }
  return roots;
}

/** Is `value` a list of File objects (an array of them, or a FileList)? */
export function isFileList(value) {
  if (typeof Blob === 'undefined') return false;
  if (typeof FileList !== 'undefined' && value instanceof FileList) return true;
  return Array.isArray(value) && value.length > 0 && value.every((f) => f instanceof Blob);
}

/**
 * A source over picked or dropped files. Folders picked with `webkitdirectory` give names with
 * their folder ("gpt2/config.json"): only the last part counts, and two files of one name are an
 * error rather than a guess.
 */
export function fileListSource(list) {
  const byName = new Map();
  for (const file of Array.from(list)) {
    if (!(file instanceof Blob) || typeof file.name !== 'string') {
      throw attnlensError(
        'invalid_argument',
        'source',
        `expected File objects, got ${describe(file)}`,
      );
    }
    const name = file.name.split(/[\\/]/).pop();
    if (byName.has(name)) {
      throw attnlensError('invalid_argument', 'source', `two files are named ${name}`);
    }
    byName.set(name, file);
  }
  return {
    describe: { kind: 'files' },
    async list() {
      return new Map([...byName].map(([name, file]) => [name, file.size]));
    },
    async read(name, { signal } = {}) {
      throwIfAborted(signal);
      const file = byName.get(name);
      if (!file) return null;
      return abortable(signal, async () => new Uint8Array(await file.arrayBuffer()));
    },
  };
}
