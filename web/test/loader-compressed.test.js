// The packaged modules are gzip-compressed (.wasm.gz): the loader inflates them, takes an
// uncompressed .wasm as it is, falls back to the .wasm beside a .wasm.gz where the engine has no
// DecompressionStream, and names the file when it is neither. The inline entry embeds them.
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createAttention } from '../src/index.js';

const wasmDir = new URL('../src/wasm/', import.meta.url);
const work = mkdtempSync(join(tmpdir(), 'attnlens-loader-'));
after(() => rmSync(work, { recursive: true, force: true }));

async function weightOf(attn) {
  const x = new Float32Array([1, 0, 0, 1]);
  const { weights } = await attn.attention(x, x, x, { heads: 1, headDim: 2, returnWeights: true });
  attn.dispose();
  return weights[0];
}
const e = Math.exp(1 / Math.SQRT2);
const EXPECTED = e / (e + 1);

describe('compressed wasm modules', () => {
  it('loads the packaged .wasm.gz by default, a .wasm.gz or a .wasm by wasmUrl', async () => {
    assert.ok(
      Math.abs((await weightOf(await createAttention({ backend: 'wasm-simd' }))) - EXPECTED) < 1e-6,
    );
    for (const file of ['attnlens-scalar.wasm.gz', 'attnlens-scalar.wasm']) {
      const attn = await createAttention({
        backend: 'wasm-scalar',
        wasmUrl: new URL(file, wasmDir),
      });
      assert.ok(Math.abs((await weightOf(attn)) - EXPECTED) < 1e-6, file);
    }
  });

  it('without DecompressionStream: the .wasm beside the .wasm.gz, or why not', async () => {
    const original = globalThis.DecompressionStream;
    delete globalThis.DecompressionStream;
    try {
      // Served over http, as a browser would fetch it (file: URLs are Node's own path).
      const { startServer } = await import('../scripts/static-server.mjs');
      copyFileSync(new URL('attnlens-scalar.wasm.gz', wasmDir), join(work, 'alone.wasm.gz'));
      const server = await startServer({ root: fileURLToPath(wasmDir), port: 0 });
      const served = await startServer({ root: work, port: 0 });
      try {
        const base = `http://127.0.0.1:${server.address().port}/`;
        const beside = await createAttention({
          backend: 'wasm-scalar',
          wasmUrl: `${base}attnlens-scalar.wasm.gz?beside`,
        });
        assert.ok(Math.abs((await weightOf(beside)) - EXPECTED) < 1e-6);
        const alone = `http://127.0.0.1:${served.address().port}/alone.wasm.gz`;
        await assert.rejects(
          createAttention({ backend: 'wasm-scalar', wasmUrl: alone }),
          (error) => {
            assert.match(error.message, /alone\.wasm\.gz: this engine has no DecompressionStream/);
            return true;
          },
        );
      } finally {
        server.close();
        served.close();
      }
    } finally {
      globalThis.DecompressionStream = original;
    }
  });

  it('names a file that is neither wasm nor gzip', async () => {
    const bogus = join(work, 'bogus.wasm');
    writeFileSync(bogus, 'not a module');
    await assert.rejects(
      createAttention({ backend: 'wasm-scalar', wasmUrl: pathToFileURL(bogus) }),
      (error) => {
        assert.match(
          error.message,
          /bogus\.wasm: neither a WebAssembly module nor a gzip-compressed one/,
        );
        return true;
      },
    );
  });

  // Last: importing the inline entry switches this process's loader to the embedded modules.
  it('attnlens/inline runs the embedded flavours, on one thread', async () => {
    const inline = await import('../src/inline.js');
    for (const backend of ['wasm-simd', 'wasm-scalar']) {
      const attn = await inline.createAttention({ backend, threads: 'auto' });
      assert.equal(attn.backend, backend);
      assert.equal(attn.threads, 1);
      assert.ok(Math.abs((await weightOf(attn)) - EXPECTED) < 1e-6, backend);
    }
  });
});
