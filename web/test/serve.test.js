// web/scripts/static-server.mjs, the static server of the demo, the widget pages and the browser
// tests: a request it cannot read is a 400 and the server carries on; long old-style share links
// are served; the demo and widget pages get the Content-Security-Policy header, and the
// production build's pages carry it themselves.

import assert from 'node:assert/strict';
import { request } from 'node:http';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { CONTENT_SECURITY_POLICY, startServer } from '../scripts/static-server.mjs';

const WEB = fileURLToPath(new URL('..', import.meta.url));

// A raw GET: the path goes out exactly as written (fetch() would normalise it).
function get(port, path) {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'GET' }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers }));
    });
    req.on('error', reject);
    // A server that died on the request never answers: fail instead of waiting.
    req.setTimeout(5000, () => req.destroy(new Error(`no answer to GET ${path}`)));
    req.end();
  });
}

describe('web/scripts/static-server.mjs', () => {
  let server;
  let port;
  before(async () => {
    server = await startServer({ root: WEB, port: 0 });
    port = server.address().port;
  });
  after(() => server.close());

  it('answers a malformed path with 400 and keeps serving', async () => {
    for (const path of ['/%zz', '/demo/%E0%A4%A', '/%', '/demo/%00index.html']) {
      assert.equal((await get(port, path)).status, 400, path);
    }
    assert.equal((await get(port, '/demo/')).status, 200, 'still serving');
  });

  it('serves share links whose query is far over 16 KiB', async () => {
    const text = encodeURIComponent('注意力'.repeat(2000)); // 18,000 characters
    assert.ok(text.length > 16 * 1024);
    assert.equal((await get(port, `/demo/?text=${text}`)).status, 200);
  });

  it('redirects a folder with the path as it came, never with decoded CR/LF', async () => {
    const { status, headers } = await get(port, '/demo?x=1');
    assert.equal(status, 301);
    assert.equal(headers.location, '/demo/?x=1');
    assert.equal((await get(port, '/de%0D%0Amo')).status, 404);
  });

  it('sends the policy with the demo and widget pages and the worker, not elsewhere', async () => {
    for (const path of ['/demo/', '/demo/compute-worker.js', '/widget/blog.html']) {
      const { status, headers } = await get(port, path);
      assert.equal(status, 200, path);
      assert.equal(headers['content-security-policy'], CONTENT_SECURITY_POLICY, path);
    }
    const other = await get(port, '/src/index.js');
    assert.equal(other.status, 200);
    assert.equal(other.headers['content-security-policy'], undefined);
  });

  it('the pages carry the same policy in a <meta> tag, for any static host', () => {
    const meta = `<meta http-equiv="Content-Security-Policy" content="${CONTENT_SECURITY_POLICY}">`;
    for (const page of ['demo/index.html', 'widget/blog.html', 'widget/csp.html']) {
      assert.ok(readFileSync(new URL(`../${page}`, import.meta.url), 'utf8').includes(meta), page);
    }
  });
});
