#!/usr/bin/env node
// Where two threads start to pay in a browser: attn.attention() on 1 and 2 threads in headless
// Chromium on a cross-origin isolated page, H = 4, D = Dv = 32, growing N, weights returned (the
// visualisation's call). Prints median ms per call and the 2-thread speed-up; THREADS_MIN_FLOPS
// in web/src/threads.js comes from it. Numbers only; nothing is asserted.
//
//   node bench/threads-break-even.mjs [--sizes 16,32,64,128,256] [--calls 200]
//
// Needs ./scripts/build-wasm.sh (the threaded modules) and web/node_modules (playwright-core).
import { parseArgs } from 'node:util';
import { newPage, openBrowser, REPO_ROOT } from '../web/scripts/chromium.mjs';

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '16,32,48,64,96,128,192,256' },
    calls: { type: 'string', default: '200' },
  },
});
const sizes = values.sizes.split(',').map(Number);
const calls = Number(values.calls);

async function measure({ sizes, calls }) {
  const { THREADS_MIN_FLOPS } = await import('/web/src/index.js');
  const { Attention } = await import('/web/src/attention.js');
  const { openBackends } = await import('/web/src/backend.js');
  // What createAttention() does, with the 2-thread instance's threshold lowered to 0: the
  // break-even is what is being measured.
  const open = async (threads) => {
    const backends = await openBackends('auto', {}, {}, threads);
    backends.wasm.threadsMinFlops = 0;
    return new Attention(backends);
  };
  const one = await open(1);
  const two = await open(2);
  const heads = 4,
    headDim = 32;
  const rows = [];
  for (const n of sizes) {
    const x = new Float32Array(heads * n * headDim).map((_, i) => Math.sin(i));
    const options = { heads, headDim, returnWeights: true, strategy: 'materialized' };
    const median = async (attn) => {
      const times = [];
      for (let i = 0; i < calls; i++) {
        const t0 = performance.now();
        await attn.attention(x, x, x, options);
        times.push(performance.now() - t0);
      }
      times.sort((a, b) => a - b);
      return times[times.length >> 1];
    };
    const flops = 2 * heads * n * n * (headDim + headDim);
    rows.push({ n, flops, one: await median(one), two: await median(two) });
  }
  one.dispose();
  two.dispose();
  return { rows, min: THREADS_MIN_FLOPS, isolated: crossOriginIsolated };
}

const browser = await openBrowser({ root: REPO_ROOT });
try {
  const page = await newPage(browser.context);
  await page.goto(`${browser.base}/bench/threads-break-even.html`);
  const { rows, min, isolated } = await page.evaluate(measure, { sizes, calls });
  console.log(
    `headless Chromium, isolated ${isolated}, H=4 D=32, weights; THREADS_MIN_FLOPS now ${min}`,
  );
  console.log('N      flops        1 thread ms  2 threads ms  speed-up');
  for (const r of rows) {
    console.log(
      `${String(r.n).padEnd(6)} ${String(r.flops).padEnd(12)} ${r.one.toFixed(3).padStart(11)}  ` +
        `${r.two.toFixed(3).padStart(12)}  ${(r.one / r.two).toFixed(2).padStart(8)}`,
    );
  }
} finally {
  await browser.close();
}
