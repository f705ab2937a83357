// Loading and disposing: backend choice, the SIMD probe, .wasm location overrides, Node without
// process.getBuiltinModule, a no-eval load, and use after dispose().

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  analyze,
  BACKEND_NAMES,
  createAttention,
  relaxedSimdSupported,
  simdSupported,
} from '../src/index.js';
import { assertFails, tensor } from './support/helpers.js';

const wasmDir = new URL('../src/wasm/', import.meta.url);
const x = tensor(2 * 3 * 4, 5);
const run = (attn) => attn.attention(x, x, x, { heads: 2, headDim: 4 });
// The package's entry point, for the scripts that run in a child Node process.
const INDEX = JSON.stringify(new URL('../src/index.js', import.meta.url).href);

describe('createAttention', () => {
  it("'auto' and 'wasm' pick SIMD where the probe finds it (Node 20: not relaxed)", async () => {
    assert.equal(simdSupported(), true);
    assert.equal(
      relaxedSimdSupported(),
      false,
      'Node 20 validates relaxed SIMD only behind a flag',
    );
    for (const backend of [undefined, 'auto', 'wasm', 'wasm-simd']) {
      const attn = await createAttention(backend ? { backend } : undefined);
      assert.equal(attn.backend, 'wasm-simd');
      assert.match(attn.version, /^\d+\.\d+\.\d+$/);
      attn.dispose();
    }
    assert.deepEqual(BACKEND_NAMES, [
      'auto',
      'wasm',
      'wasm-relaxed',
      'wasm-simd',
      'wasm-scalar',
      'webgpu',
    ]);
  });

  it("'wasm-relaxed' without relaxed SIMD is an Error naming it and the fallback", async () => {
    await assert.rejects(
      createAttention({ backend: 'wasm-relaxed' }),
      /'wasm-relaxed' needs WebAssembly relaxed SIMD \(f32x4\.relaxed_madd\).*'wasm'/,
    );
    (await createAttention({ backend: 'wasm' })).dispose();
  });

  it('with relaxed SIMD (a Node flag), auto picks wasm-relaxed and agrees with wasm-simd', () => {
    const script = `
      import(${INDEX}).then(async ({ createAttention }) => {
        const x = new Float32Array(3 * 37 * 24).map((_, i) => Math.sin(i * 0.37) * 2);
        const runOn = async (backend) => {
          const attn = await createAttention({ backend });
          const options = { heads: 3, headDim: 24, causal: true, returnWeights: true };
          const r = await attn.attention(x, x, x, options);
          return { backend: attn.backend, output: [...r.output], weights: [...r.weights] };
        };
        const runs = [await runOn('auto'), await runOn('wasm-relaxed'), await runOn('wasm-simd')];
        console.log(JSON.stringify(runs));
      }).catch((e) => console.log(JSON.stringify({ error: e.message })));`;
    const out = JSON.parse(
      execFileSync(
        process.execPath,
        ['--experimental-wasm-relaxed-simd', '--input-type=module', '-e', script],
        { encoding: 'utf8' },
      ),
    );
    assert.ok(Array.isArray(out), JSON.stringify(out));
    const [auto, relaxed, simd] = out;
    assert.equal(auto.backend, 'wasm-relaxed');
    assert.equal(relaxed.backend, 'wasm-relaxed');
    assert.equal(simd.backend, 'wasm-simd');
    // One rounding per multiply-add instead of two: equal up to float32 rounding, not bit for bit.
    for (const field of ['output', 'weights']) {
      let worst = 0;
      for (let i = 0; i < simd[field].length; i++)
        worst = Math.max(worst, Math.abs(relaxed[field][i] - simd[field][i]));
      assert.ok(worst < 1e-5, `${field}: relaxed and simd differ by ${worst}`);
    }
  });

  it("'wasm-scalar' loads the build without SIMD", async () => {
    const attn = await createAttention({ backend: 'wasm-scalar' });
    assert.equal(attn.backend, 'wasm-scalar');
    assert.equal((await run(attn)).stats.backend, 'wasm-scalar');
    attn.dispose();
  });

  it('rejects unknown backends and options', async () => {
    await assertFails(createAttention({ backend: 'cuda' }), RangeError, 'out_of_range', 'backend');
    await assertFails(createAttention({ backend: 1 }), TypeError, 'invalid_argument', 'backend');
    await assertFails(createAttention({ wasmURL: 'x' }), TypeError, 'invalid_argument', 'options');
    await assertFails(
      createAttention({ locateFile: 'x' }),
      TypeError,
      'invalid_argument',
      'locateFile',
    );
    await assertFails(createAttention({ wasmUrl: 3 }), TypeError, 'invalid_argument', 'wasmUrl');
  });

  it('wasmUrl accepts a file URL, a path and a data: URL', async () => {
    const fileUrl = new URL('attnlens-scalar.wasm', wasmDir);
    const base64 = readFileSync(fileUrl).toString('base64');
    for (const wasmUrl of [
      fileUrl,
      fileUrl.href,
      fileURLToPath(fileUrl),
      `data:application/wasm;base64,${base64}`,
    ]) {
      const attn = await createAttention({ backend: 'wasm-scalar', wasmUrl });
      assert.equal((await run(attn)).output.length, 24);
      attn.dispose();
    }
  });

  it('locateFile is asked for the packaged file name, next to the default directory', async () => {
    const asked = [];
    const attn = await createAttention({
      backend: 'wasm-simd',
      locateFile(fileName, directory) {
        asked.push([fileName, directory]);
        return new URL(fileName, directory).href;
      },
    });
    assert.deepEqual(asked, [['attnlens-simd.wasm', wasmDir.href]]);
    attn.dispose();
  });

  it('a missing .wasm is an Error naming where it looked; a later load still works', async () => {
    await assert.rejects(createAttention({ wasmUrl: new URL('missing.wasm', wasmDir) }), (e) => {
      assert.match(e.message, /cannot load the wasm module from file:.*missing\.wasm/);
      return true;
    });
    (await createAttention()).dispose();
  });

  it('loads without process.getBuiltinModule (Node 18 has none)', async () => {
    const original = process.getBuiltinModule;
    process.getBuiltinModule = undefined;
    try {
      // A URL never loaded before, so the file is really read again.
      const attn = await createAttention({
        wasmUrl: `${new URL('attnlens-simd.wasm', wasmDir).href}?node18`,
      });
      assert.equal((await run(attn)).output.length, 24);
      attn.dispose();
    } finally {
      process.getBuiltinModule = original;
    }
  });

  it('runs where eval and new Function are forbidden (as under a strict CSP)', () => {
    const script = (glue) => `
      import(${INDEX}).then(async ({ createAttention }) => {
        const attn = await createAttention(${glue});
        const x = new Float32Array(8).fill(0.5);
        const r = await attn.attention(x, x, x, { heads: 1, headDim: 4 });
        console.log(r.output.length);
      }).catch((e) => console.log(e.constructor.name + ': ' + e.message));`;
    const node = (code) =>
      execFileSync(
        process.execPath,
        ['--disallow-code-generation-from-strings', '--input-type=module', '-e', code],
        { encoding: 'utf8' },
      ).trim();
    assert.equal(node(script('')), '8');
    // The eval-based link (built for the overhead benchmark) loads normally but fails under the
    // flag, which shows the flag really forbids what embind's default invokers do.
    const evalGlue = new URL(
      '../../build/wasm-simd/bindings/attnlens-simd-eval.js',
      import.meta.url,
    );
    if (existsSync(evalGlue)) {
      const loadEvalGlue = `
        const { readFileSync } = await import('node:fs');
        const { default: factory } = await import(${JSON.stringify(evalGlue.href)});
        const wasm = new URL('attnlens-simd-eval.wasm', ${JSON.stringify(evalGlue.href)});
        const compiled = await WebAssembly.compile(readFileSync(wasm));
        try {
          await factory({ instantiateWasm(imports, receive) {
            WebAssembly.instantiate(compiled, imports)
              .then((instance) => receive(instance, compiled));
            return {};
          } });
          console.log('loaded');
        } catch (e) { console.log(e.constructor.name); }`;
      assert.equal(
        execFileSync(process.execPath, ['--input-type=module', '-e', loadEvalGlue], {
          encoding: 'utf8',
        }).trim(),
        'loaded',
      );
      assert.equal(node(loadEvalGlue), 'EvalError');
    }
  });
});

describe('dispose', () => {
  it('makes every later call throw, and may be called twice', async () => {
    const attn = await createAttention();
    const buffers = attn.allocate({ queryLength: 2, keyLength: 2, headDim: 2 });
    attn.dispose();
    attn.dispose();
    assert.equal(attn.backend, 'wasm-simd', 'the name stays readable');
    await assert.rejects(run(attn), /attention: this attnlens instance was disposed/);
    await assert.rejects(attn.multiHead(x, {}, {}), /disposed/);
    assert.throws(() => attn.maskMatrix({ queryLength: 2, keyLength: 2 }), /disposed/);
    assert.throws(
      () => attn.workingSetBytes({ queryLength: 2, keyLength: 2, headDim: 2 }),
      /disposed/,
    );
    assert.throws(() => attn.allocate({ queryLength: 2, keyLength: 2, headDim: 2 }), /disposed/);
    assert.equal(buffers.disposed, true, "the instance's buffers go with it");
  });

  it("rejects calls still pending at dispose() with the 'disposed' error", async () => {
    const attn = await createAttention({ backend: 'wasm' });
    const heads = 2;
    const headDim = 4;
    const modelDim = heads * headDim;
    const w = tensor(modelDim * modelDim, 6);
    // Each call is checked and started now, and reaches the engine after an await: dispose()
    // comes in between.
    const pending = {
      attention: run(attn),
      multiHead: attn.multiHead(
        tensor(3 * modelDim, 7),
        { wQuery: w, wKey: w, wValue: w, wOut: w },
        { heads, headDim },
      ),
      analyze: analyze('the cat sat', { attention: attn, heads, headDim }),
    };
    attn.dispose();
    for (const [call, promise] of Object.entries(pending)) {
      const error = await promise.then(
        () => assert.fail(`${call} resolved after dispose()`),
        (e) => e,
      );
      assert.equal(error.constructor, Error, `${call}: ${error.stack}`);
      assert.equal(error.code, 'disposed', `${call}: ${error.message}`);
      assert.match(error.message, /^\w+: this attnlens instance was disposed$/, call);
    }
    const late = await run(attn).catch((e) => e);
    assert.equal(late.code, 'disposed');
    assert.equal(late.parameter, 'attention');
  });

  it('leaves other instances working', async () => {
    const a = await createAttention();
    const b = await createAttention();
    a.dispose();
    assert.equal((await run(b)).output.length, 24);
    b.dispose();
  });
});

describe('wasmMemoryBytes', () => {
  it("is the instance's own wasm memory: pages, grown by a large call, never shrunk", async () => {
    const attn = await createAttention({ backend: 'wasm-simd' });
    const other = await createAttention({ backend: 'wasm-simd' });
    const start = attn.wasmMemoryBytes;
    const otherStart = other.wasmMemoryBytes;
    assert.ok(Number.isInteger(start) && start > 0 && start % 65536 === 0, `${start} bytes`);
    // Weights and scores of 2 x 1024 x 1024 floats: 16 MiB that wasm memory must hold at once.
    const n = 1024;
    const big = tensor(2 * n * 8, 9);
    await attn.attention(big, big, big, {
      heads: 2,
      headDim: 8,
      returnWeights: true,
      returnScores: true,
    });
    const grown = attn.wasmMemoryBytes;
    assert.ok(grown > start && grown >= 2 * 2 * n * n * 4, `${start} -> ${grown} bytes`);
    await run(attn);
    assert.equal(attn.wasmMemoryBytes, grown, 'wasm memory never shrinks');
    assert.equal(other.wasmMemoryBytes, otherStart, 'another instance has its own memory');
    attn.dispose();
    other.dispose();
    assert.throws(
      () => attn.wasmMemoryBytes,
      /wasmMemoryBytes: this attnlens instance was disposed/,
    );
  });
});
