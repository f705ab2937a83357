// The threaded wasm module in headless Chromium: on a cross-origin isolated page (COOP/COEP)
// createAttention({ threads: 2 }) runs calls on 2 threads with results identical, bit for bit,
// to one thread; on a page without isolation it warns once and runs on one thread.
// Serves web/ (the package sources and web/src/wasm/ from scripts/build-wasm.sh).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { newPage, openBrowser, WEB_ROOT } from './harness.mjs';

// In the page: runs the same problems with a 1-thread and an n-thread instance and returns
// what the test compares. Problems are above THREADS_MIN_FLOPS, so threads are really used.
async function compareThreads({ threads, backend = 'auto' }) {
  const { createAttention, THREADS_MIN_FLOPS } = await import('/src/index.js');
  const { tensor: seeded } = await import('/scripts/random.js');
  const one = await createAttention({ backend, threads: 1 });
  const many = await createAttention({ backend, threads });
  const heads = 3,
    length = 150,
    headDim = 32;
  const q = seeded(heads * length * headDim, 1),
    k = seeded(heads * length * headDim, 2);
  const v = seeded(heads * length * headDim, 3);
  const cases = [
    {},
    { causal: true },
    { window: { before: 16, after: 0 } },
    { causal: true, returnWeights: true },
  ];
  const results = [];
  for (const options of cases) {
    const a = await one.attention(q, k, v, { heads, headDim, ...options });
    const b = await many.attention(q, k, v, { heads, headDim, ...options });
    const same = (x, y) =>
      x.length === y.length &&
      new Uint32Array(x.buffer).every((bits, i) => bits === new Uint32Array(y.buffer)[i]);
    results.push({
      options: JSON.stringify(options),
      sameOutput: same(a.output, b.output),
      sameWeights: options.returnWeights ? same(a.weights, b.weights) : true,
      threadsOne: a.stats.threads,
      threadsMany: b.stats.threads,
    });
  }
  // The copy-free buffers run on the instance's threads too.
  const buffers = many.allocate({ heads, queryLength: length, keyLength: length, headDim });
  buffers.q.set(q);
  buffers.k.set(k);
  buffers.v.set(v);
  const { stats: bufferStats } = await buffers.run({ causal: true });
  const reference = await one.attention(q, k, v, { heads, headDim, causal: true });
  const buffersSame = buffers.output.every((value, i) => Object.is(value, reference.output[i]));
  buffers.dispose();
  const x = seeded(length * 64, 4);
  const w = () => seeded(64 * 64, 5);
  const weights = { wQuery: w(), wKey: w(), wValue: w(), wOut: w() };
  const mhOne = await one.multiHead(x, weights, { heads: 2, headDim: 32, causal: true });
  const mhMany = await many.multiHead(x, weights, { heads: 2, headDim: 32, causal: true });
  const small = await many.attention(seeded(32, 6), seeded(32, 6), seeded(32, 6), {
    heads: 1,
    headDim: 8,
  });
  const report = {
    isolated: globalThis.crossOriginIsolated,
    threadsProperty: many.threads,
    backend: many.backend,
    oneBackend: one.backend,
    minFlops: THREADS_MIN_FLOPS,
    results,
    multiHeadSame: mhOne.output.every((value, i) => Object.is(value, mhMany.output[i])),
    multiHeadThreads: mhMany.stats.threads,
    smallCallThreads: small.stats.threads,
    buffersSame,
    buffersThreads: bufferStats.threads,
  };
  one.dispose();
  many.dispose();
  return report;
}

describe('threads in Chromium, cross-origin isolated page', () => {
  let browser, page;
  const warnings = [];
  before(async () => {
    browser = await openBrowser({ root: WEB_ROOT });
    page = await newPage(browser.context);
    page.on('console', (m) => {
      if (m.type() === 'warning') warnings.push(m.text());
    });
    await page.goto(`${browser.base}/test/browser/threads.html`);
  });
  after(async () => browser?.close());

  it('2 threads give the results of 1 thread, bit for bit', async () => {
    const report = await page.evaluate(compareThreads, { threads: 2 });
    assert.equal(report.isolated, true);
    assert.equal(report.threadsProperty, 2);
    // The threaded twin of the flavour one thread loads (relaxed SIMD in Chromium).
    assert.equal(report.backend, report.oneBackend);
    assert.match(report.backend, /^wasm-(relaxed|simd)$/);
    for (const r of report.results) {
      assert.ok(r.sameOutput, `output differs for ${r.options}`);
      assert.ok(r.sameWeights, `weights differ for ${r.options}`);
      assert.equal(r.threadsOne, 1, r.options);
      assert.equal(r.threadsMany, 2, r.options);
    }
    assert.ok(report.multiHeadSame);
    assert.equal(report.multiHeadThreads, 2);
    assert.ok(report.buffersSame, 'buffers.run() output differs from attention() on one thread');
    assert.equal(report.buffersThreads, 2, "buffers.run() uses the instance's threads");
    assert.equal(report.smallCallThreads, 1, 'calls below THREADS_MIN_FLOPS stay on one thread');
    // Neither attnlens nor the glue warns (Chromium's own 'No available adapters.' from the
    // WebGPU probe is not ours).
    assert.deepEqual(
      warnings.filter((w) => !/^No available adapters/.test(w)),
      [],
    );
    assert.deepEqual(page.problems, []);
  });

  it("the SIMD128 module's threaded twin too ('wasm-simd')", async () => {
    const report = await page.evaluate(compareThreads, { threads: 2, backend: 'wasm-simd' });
    assert.equal(report.backend, 'wasm-simd');
    assert.equal(report.threadsProperty, 2);
    for (const r of report.results) {
      assert.ok(r.sameOutput && r.sameWeights, r.options);
      assert.equal(r.threadsMany, 2, r.options);
    }
    assert.ok(report.multiHeadSame);
  });

  it("runs threaded under a strict CSP (script-src 'self' 'wasm-unsafe-eval')", async () => {
    const csp = await newPage(browser.context);
    await csp.goto(`${browser.base}/widget/csp.html`);
    const report = await csp.evaluate(async () => {
      const { createAttention } = await import('/src/index.js');
      const attn = await createAttention({ threads: 2 });
      const x = new Float32Array(4 * 128 * 32).map((_, i) => Math.sin(i));
      const { stats } = await attn.attention(x, x, x, { heads: 4, headDim: 32 });
      attn.dispose();
      return { isolated: crossOriginIsolated, threads: stats.threads };
    });
    assert.deepEqual(report, { isolated: true, threads: 2 });
    assert.deepEqual(csp.problems, []);
    await csp.close();
  });

  it("'auto' uses threads on an isolated page", async () => {
    const threads = await page.evaluate(async () => {
      const { createAttention } = await import('/src/index.js');
      const attn = await createAttention();
      const n = attn.threads;
      attn.dispose();
      return { n, cores: navigator.hardwareConcurrency };
    });
    assert.equal(threads.n, Math.min(4, threads.cores));
    assert.ok(threads.n >= 2, 'this test needs a machine with 2 cores or more');
  });
});

describe('threads in Chromium, page without isolation', () => {
  let browser, page;
  const warnings = [];
  before(async () => {
    browser = await openBrowser({ root: WEB_ROOT, isolated: false });
    page = await newPage(browser.context);
    page.on('console', (m) => {
      if (m.type() === 'warning') warnings.push(m.text());
    });
    await page.goto(`${browser.base}/test/browser/threads.html`);
  });
  after(async () => browser?.close());

  it('asked-for threads warn once and fall back to one thread', async () => {
    const first = await page.evaluate(compareThreads, { threads: 2 });
    const second = await page.evaluate(compareThreads, { threads: 2 });
    assert.equal(first.isolated, false);
    for (const report of [first, second]) {
      assert.equal(report.threadsProperty, 1);
      for (const r of report.results) {
        assert.ok(r.sameOutput, r.options);
        assert.equal(r.threadsMany, 1, r.options);
      }
    }
    const ours = warnings.filter((w) => !/^No available adapters/.test(w));
    assert.equal(ours.length, 1, ours.join('\n'));
    assert.match(
      ours[0],
      /^attnlens: threads: 2 threads were asked for, but the page is not cross-origin isolated/,
    );
    assert.deepEqual(page.problems, []);
  });
});
