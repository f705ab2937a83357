// The widget's snapshot fetch reads a body without Content-Length (or with a false one) only up
// to the snapshot cap: a server that streams for ever costs the page the cap, not its memory.
// A picture (image=) is fetched the same way, and one that stops arriving is cut off in time.

import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { after, before, it } from 'node:test';
import { SNAPSHOT_LIMITS } from '../src/snapshot/format.js';
import { fetchCapped, fetchSnapshot } from '../widget/widget-models.js';

const CHUNK = Buffer.alloc(1 << 20, 0x20); // 1 MiB of spaces: valid JSON whitespace
let server;
let sent = 0;

before(async () => {
  server = createServer((req, res) => {
    if (req.url === '/stalls.png') {
      // Headers and a few bytes, then nothing more, ever.
      res.writeHead(200, { 'content-length': '1000' });
      res.write(Buffer.alloc(10));
      return;
    }
    // Chunked (no Content-Length); three times the cap, then the connection stays open.
    res.writeHead(200);
    const more = () => {
      while (!res.destroyed && sent < 3 * SNAPSHOT_LIMITS.bytes && res.write(CHUNK)) {
        sent += CHUNK.length;
      }
      if (!res.destroyed && sent < 3 * SNAPSHOT_LIMITS.bytes) res.once('drain', more);
    };
    more();
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  globalThis.document = { baseURI: `http://127.0.0.1:${server.address().port}/` };
});

after(() => {
  delete globalThis.document;
  server.closeAllConnections();
  server.close();
});

it('a snapshot streamed without Content-Length is cut at the cap', { timeout: 15000 }, async () => {
  sent = 0;
  await assert.rejects(fetchSnapshot('endless.json'), {
    name: 'RangeError',
    code: 'out_of_range',
    parameter: 'snapshot',
    message: `snapshot: endless.json is larger than the cap of ${SNAPSHOT_LIMITS.bytes} bytes`,
  });
  // The server only ran ahead of the reader by what the connection buffers.
  assert.ok(sent < 2 * SNAPSHOT_LIMITS.bytes, `${sent} bytes were sent`);
});

it('a picture that stops arriving is cut off after the timeout', { timeout: 15000 }, async () => {
  const started = Date.now();
  await assert.rejects(fetchCapped('stalls.png', { cap: 1 << 20, what: 'image', timeoutMs: 300 }), {
    code: 'network',
    parameter: 'image',
    message: 'image: stalls.png did not arrive within 0.3 s',
  });
  assert.ok(Date.now() - started < 5000);
});

it('a picture over its cap is refused by its Content-Length', { timeout: 15000 }, async () => {
  await assert.rejects(fetchCapped('stalls.png', { cap: 100, what: 'image' }), {
    name: 'RangeError',
    code: 'out_of_range',
    parameter: 'image',
  });
});
