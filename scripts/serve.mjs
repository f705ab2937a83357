#!/usr/bin/env node
// A small static server for the demo, the widget pages and the browser tests.
//
//   node scripts/serve.mjs [--root DIR] [--port N] [--host H]
//
// Serves `.wasm` as application/wasm, `.gz` as application/gzip (not as an encoding) and sends
// Cross-Origin-Opener-Policy / Cross-Origin-Embedder-Policy so the page is cross-origin isolated
// and a threaded build can use SharedArrayBuffer. No dependencies: Node's http module only.
import { createServer } from 'node:http';
import { createReadStream, statSync } from 'node:fs';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const MIME_TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.cjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.gz': 'application/gzip', // the .wasm.gz modules: loader.js inflates them itself
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
  '.md': 'text/markdown; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.d.ts': 'text/plain; charset=utf-8',
};

const ISOLATION_HEADERS_ALL = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'X-Content-Type-Options': 'nosniff',
};

// Without COOP/COEP: how plain static hosting serves pages (tests of the single-threaded fallback).
const PLAIN_HEADERS = {
  'Cross-Origin-Resource-Policy': 'same-origin',
  'X-Content-Type-Options': 'nosniff',
};

/** `isolated: false` leaves out COOP/COEP, so pages are not cross-origin isolated. */
export function startServer({
  root,
  port = 8080,
  host = '127.0.0.1',
  index = '/demo/',
  isolated = true,
} = {}) {
  const ISOLATION_HEADERS = isolated ? ISOLATION_HEADERS_ALL : PLAIN_HEADERS;
  const base = resolve(root);
  const server = createServer((req, res) => {
    const url = new URL(req.url, 'http://localhost');
    let path = decodeURIComponent(url.pathname);
    if (path === '/') {
      res.writeHead(302, { Location: index, ...ISOLATION_HEADERS });
      res.end();
      return;
    }
    const file = normalize(join(base, path));
    if (file !== base && !file.startsWith(base + sep)) {
      res.writeHead(403, ISOLATION_HEADERS).end('forbidden');
      return;
    }
    let target = file;
    try {
      let stats = statSync(target);
      if (stats.isDirectory()) {
        if (!path.endsWith('/')) {
          res.writeHead(301, { Location: path + '/' + url.search, ...ISOLATION_HEADERS });
          res.end();
          return;
        }
        target = join(target, 'index.html');
        stats = statSync(target);
      }
      const type =
        MIME_TYPES[target.endsWith('.d.ts') ? '.d.ts' : extname(target)] ??
        'application/octet-stream';
      res.writeHead(200, {
        'Content-Type': type,
        'Content-Length': stats.size,
        'Cache-Control': 'no-cache',
        ...ISOLATION_HEADERS,
      });
      if (req.method === 'HEAD') {
        res.end();
        return;
      }
      createReadStream(target).pipe(res);
    } catch {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8', ...ISOLATION_HEADERS });
      res.end(`not found: ${path}`);
    }
  });
  return new Promise((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolveListen(server));
  });
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const here = fileURLToPath(new URL('.', import.meta.url));
  const { values } = parseArgs({
    options: {
      root: { type: 'string', default: join(here, '..', 'web') },
      port: { type: 'string', default: process.env.PORT ?? '8080' },
      host: { type: 'string', default: '127.0.0.1' },
    },
  });
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(`--port: expected an integer 0..65535, got ${values.port}`);
    process.exit(2);
  }
  const server = await startServer({ root: values.root, port, host: values.host });
  const { port: actual } = server.address();
  console.log(`attnlens demo: http://localhost:${actual}/demo/  (serving ${resolve(values.root)})`);
}
