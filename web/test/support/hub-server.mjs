// A local server with the Hugging Face Hub's URL layout and headers, for tests of the Hub code
// path (no real checkpoint can be downloaded here). It serves model folders from `root`:
//
//   root/<owner>/<name>/<revision, URL-encoded>/<files>    (or root/<name>/<revision>/... for
//                                                            ids without an owner)
//
//   GET|HEAD /{id}/resolve/{revision}/{file}   small files directly; large ones (.safetensors,
//            .bin) answer 302 with X-Linked-Size / X-Linked-Etag to /cdn/..., as the Hub's LFS
//            files redirect to its CDN
//   GET /api/models/{id}/tree/{revision}       [{ type, oid, size, path, lfs? }], paged by
//            `pageSize` with Link: <...>; rel="next"
//   errors: 401 + X-Error-Code: RepoNotFound, 404 + RevisionNotFound / EntryNotFound
//
// Options: `chunkDelayMs` streams bodies in 16 KiB chunks with a pause between them (so a test
// can cancel mid-download); `listing: false` answers the API with 404 (a plain mirror);
// `truncate: { [file]: bytes }` ends that file's body early. `requests` logs every request,
// `aborted` the downloads a client stopped.

import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';

const LARGE = /\.(safetensors|bin)$/;
const CORS = {
  'access-control-allow-origin': '*',
  'access-control-allow-headers': 'range, accept, content-type',
  'access-control-expose-headers':
    'X-Repo-Commit, X-Linked-Size, X-Linked-Etag, X-Error-Code, ETag, Content-Length, Link',
};
const sha = (data) => createHash('sha256').update(data).digest('hex');

export async function startHubServer({
  root,
  chunkDelayMs = 0,
  pageSize = 100,
  listing = true,
  truncate = {},
} = {}) {
  const requests = [];
  const aborted = [];
  const sockets = new Set();

  const folderOf = (id, revision) => {
    const repo = join(root, ...id.split('/'));
    if (
      !id.split('/').every((part) => /^[\w.-]+$/.test(part) && part !== '..') ||
      !existsSync(repo)
    ) {
      return { error: [401, 'RepoNotFound'] };
    }
    const folder = join(repo, encodeURIComponent(revision));
    return existsSync(folder) ? { folder } : { error: [404, 'RevisionNotFound'] };
  };
  const fail = (res, [status, code]) => {
    res.writeHead(status, { ...CORS, 'x-error-code': code, 'content-type': 'text/plain' });
    res.end(code);
  };

  function send(req, res, name, data, headers) {
    const limit = truncate[name] ?? data.byteLength;
    res.writeHead(200, {
      ...CORS,
      'content-length': data.byteLength,
      'accept-ranges': 'bytes',
      etag: `"${sha(data)}"`,
      ...headers,
    });
    if (req.method === 'HEAD') return res.end();
    let at = 0;
    const pump = () => {
      if (res.destroyed) return;
      if (at >= limit) {
        if (limit < data.byteLength) res.destroy();
        else res.end();
        return;
      }
      const chunk = data.subarray(at, Math.min(limit, at + (1 << 14)));
      at += chunk.byteLength;
      res.write(chunk);
      if (chunkDelayMs) setTimeout(pump, chunkDelayMs);
      else setImmediate(pump);
    };
    res.on('close', () => {
      if (at < data.byteLength && !truncate[name]) aborted.push(name);
    });
    pump();
  }

  const server = createServer((req, res) => {
    const url = new URL(req.url, 'http://hub');
    requests.push(`${req.method} ${url.pathname}${url.search}`);
    if (req.method === 'OPTIONS') return res.writeHead(204, CORS).end();
    const parts = url.pathname.split('/').slice(1);

    if (parts[0] === 'cdn') {
      const [, id, revision, file] = parts.map(decodeURIComponent);
      const { folder } = folderOf(id, revision);
      const path = folder && join(folder, file);
      if (!path || !existsSync(path)) return fail(res, [404, 'EntryNotFound']);
      return send(req, res, file, readFileSync(path), {
        'content-type': 'application/octet-stream',
      });
    }

    if (parts[0] === 'api' && parts[1] === 'models') {
      const treeAt = parts.indexOf('tree');
      const id = parts.slice(2, treeAt).join('/');
      const revision = decodeURIComponent(parts[treeAt + 1] ?? '');
      if (!listing) return fail(res, [404, 'NotFound']);
      const { folder, error } = folderOf(id, revision);
      if (error) return fail(res, error);
      const entries = readdirSync(folder)
        .sort()
        .map((path) => {
          const data = readFileSync(join(folder, path));
          const entry = { type: 'file', oid: sha(data).slice(0, 40), size: data.byteLength, path };
          if (LARGE.test(path))
            entry.lfs = { oid: sha(data), size: data.byteLength, pointerSize: 134 };
          return entry;
        });
      const cursor = Number(url.searchParams.get('cursor') ?? 0);
      const page = entries.slice(cursor, cursor + pageSize);
      const headers = { ...CORS, 'content-type': 'application/json' };
      if (cursor + pageSize < entries.length) {
        const next = `http://${req.headers.host}${url.pathname}?cursor=${cursor + pageSize}`;
        headers.link = `<${next}>; rel="next"`;
      }
      res.writeHead(200, headers);
      return res.end(JSON.stringify(page));
    }

    const resolveAt = parts.indexOf('resolve');
    if (resolveAt < 1) return fail(res, [404, 'NotFound']);
    const id = parts.slice(0, resolveAt).join('/');
    const revision = decodeURIComponent(parts[resolveAt + 1] ?? '');
    const file = decodeURIComponent(parts.slice(resolveAt + 2).join('/'));
    const { folder, error } = folderOf(id, revision);
    if (error) return fail(res, error);
    const path = join(folder, file);
    if (file.includes('..') || !existsSync(path) || !statSync(path).isFile()) {
      return fail(res, [404, 'EntryNotFound']);
    }
    const data = readFileSync(path);
    const commit = { 'x-repo-commit': sha(revision).slice(0, 40) };
    if (LARGE.test(file)) {
      const cdn = `/cdn/${[id, revision, file].map(encodeURIComponent).join('/')}`;
      res.writeHead(302, {
        ...CORS,
        ...commit,
        location: cdn,
        'x-linked-size': data.byteLength,
        'x-linked-etag': `"${sha(data)}"`,
        'content-length': 0,
      });
      return res.end();
    }
    send(req, res, file, data, { ...commit, 'content-type': 'application/json' });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    requests,
    aborted,
    /** Stops the server and drops open connections. */
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
