// A small static server for the demo, the widget pages, the browser tests and the browser
// benchmarks; scripts/serve.mjs is its command line. Dev tooling: not part of the package.
//
// Serves `.wasm` as application/wasm, `.gz` as application/gzip (not as an encoding) and sends
// Cross-Origin-Opener-Policy / Cross-Origin-Embedder-Policy so the page is cross-origin isolated
// and a threaded build can use SharedArrayBuffer. The demo and widget pages (and the demo's
// worker) get CONTENT_SECURITY_POLICY as a header too. A request it cannot read is a 400, never
// a crash. No dependencies: Node's http module only.
import { createServer } from 'node:http';
import { createReadStream, statSync } from 'node:fs';
import { extname, join, normalize, resolve, sep } from 'node:path';

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

/**
 * The policy of the demo and widget pages: scripts only from the site itself, WebAssembly
 * compilation allowed (nothing else eval-like), no plugins, no <base> elsewhere. The pages carry
 * it in a <meta> tag (so the production build has it on any static host; build-site.mjs checks
 * that they do) and this server sends it as a header, which also covers the demo's worker.
 */
export const CONTENT_SECURITY_POLICY =
  "script-src 'self' 'wasm-unsafe-eval'; object-src 'none'; base-uri 'self'";

// Paths (below the served root) whose responses carry the policy.
const POLICY_FOLDERS = ['/demo/', '/widget/'];

// Long share links from before the settings moved to the fragment carry the text in the query
// string; Node's default header limit (16 KiB) answered them with 431.
const MAX_HEADER_BYTES = 1 << 20;

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
  const baseHeaders = isolated ? ISOLATION_HEADERS_ALL : PLAIN_HEADERS;
  const base = resolve(root);
  const handle = (req, res) => {
    let url;
    let path;
    try {
      url = new URL(req.url, 'http://localhost');
      path = decodeURIComponent(url.pathname);
    } catch {
      path = null; // malformed percent-encoding (/%zz) or an unreadable request target
    }
    if (path === null || path.includes('\0')) {
      res.writeHead(400, { 'Content-Type': 'text/plain; charset=utf-8', ...baseHeaders });
      res.end('bad request: the path is not a well-formed URL path');
      return;
    }
    const headers = POLICY_FOLDERS.some((folder) => path.startsWith(folder))
      ? { ...baseHeaders, 'Content-Security-Policy': CONTENT_SECURITY_POLICY }
      : baseHeaders;
    if (path === '/') {
      res.writeHead(302, { Location: index, ...headers });
      res.end();
      return;
    }
    const file = normalize(join(base, path));
    if (file !== base && !file.startsWith(base + sep)) {
      res.writeHead(403, headers).end('forbidden');
      return;
    }
    let target = file;
    try {
      let stats = statSync(target);
      if (stats.isDirectory()) {
        if (!path.endsWith('/')) {
          // The path as it came (still percent-encoded): a decoded one may hold CR or LF.
          res.writeHead(301, { Location: url.pathname + '/' + url.search, ...headers });
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
        ...headers,
      });
      if (req.method === 'HEAD') {
        res.end();
        return;
      }
      createReadStream(target)
        .on('error', () => res.destroy()) // a file gone or unreadable after stat()
        .pipe(res);
    } catch {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8', ...headers });
      res.end(`not found: ${path}`);
    }
  };
  const server = createServer({ maxHeaderSize: MAX_HEADER_BYTES }, (req, res) => {
    try {
      handle(req, res);
    } catch (error) {
      // Whatever else goes wrong stays this request's problem.
      if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' });
      res.end(`server error: ${error.message}`);
    }
  });
  return new Promise((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolveListen(server));
  });
}
