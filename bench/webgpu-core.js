// The WebGPU benchmark's measurements, run in Node (the `webgpu` package) or in a browser page
// (bench/webgpu.html): streaming attention, H heads of depth D, N in `sizes`, without a mask and
// causal, timed three ways:
//   with transfers  attn.attention() as users call it: upload q/k/v, compute, read the output back
//   kernel          the streaming kernel alone on data already on the GPU (submit until the queue
//                   is idle), through the backend's own modules
//   wasm            the same call on the wasm backend, for comparison
// Best of `repeats` runs after one warm-up (which compiles the kernels). GFLOP/s count the dense
// 4 * H * N^2 * D operations for both masks, so causal's skipped tiles show up as a higher rate.

import { checkAttention } from '../web/src/checks.js';
import { tensor } from '../web/scripts/random.js';
import { createAttention } from '../web/src/index.js';
import { encodeStreaming, streamingPlanFor } from '../web/src/webgpu/attention-gpu.js';
import { openGpuDevice } from '../web/src/webgpu/device.js';
import { maskData } from '../web/src/webgpu/mask-data.js';
import { logitFactor } from '../web/src/webgpu/overflow.js';
import { GpuPasses } from '../web/src/webgpu/passes.js';

/** The sizes of the issue, for real GPUs. */
export const HARDWARE_SIZES = [512, 2048, 8192];
/** What a software adapter (SwiftShader) gets by default: enough to show the kernels run. */
export const SOFTWARE_SIZES = [128, 256];

async function best(repeats, run) {
  await run(); // warm-up: compiles pipelines, allocates buffers
  let fastest = Infinity;
  for (let r = 0; r < repeats; r++) {
    const started = performance.now();
    await run();
    fastest = Math.min(fastest, performance.now() - started);
  }
  return fastest;
}

// The streaming kernel on resident buffers: what one call costs without its transfers.
async function kernelTimer(passes, problem) {
  const { shape, q, k, v, options } = problem;
  const { heads, queryLength: n, keyLength, headDim, valueDim } = shape;
  const device = passes.device;
  const mask = maskData(options, shape);
  const group = {
    heads,
    headBase: 0,
    queryLength: n,
    keyLength,
    headDim,
    valueDim,
    score: options.score,
    q: passes.buffers.upload('q', q),
    k: passes.buffers.upload('k', k),
    v: passes.buffers.upload('v', v),
    inputType: 'f32',
    factor: logitFactor(options, headDim),
    mask: { fields: mask.fields, buffer: passes.buffers.upload('mask', mask.words) },
    out: {
      buffer: passes.buffers.storage('output', heads * n * valueDim * 4),
      head: n * valueDim,
      row: valueDim,
    },
  };
  const plan = streamingPlanFor(passes, { headDim, valueDim, score: options.score });
  const visits = passes.buffers.storage('visits', 4);
  return async () => {
    const encoder = device.createCommandEncoder();
    await encodeStreaming(passes, encoder, group, plan, visits);
    device.queue.submit([encoder.finish()]);
    await device.queue.onSubmittedWorkDone();
  };
}

/**
 * @param {{ gpu?: object, sizes?: number[], heads?: number, headDim?: number, repeats?: number,
 *   wasmMaxN?: number, log?: (line: string) => void }} options
 * @returns {Promise<{ adapter: object, subgroups: boolean, rows: object[] }>}
 */
export async function runBenchmark({
  gpu,
  sizes,
  heads = 8,
  headDim = 64,
  repeats = 3,
  wasmMaxN = 2048,
  log = () => {},
}) {
  // One device for both GPU columns: the instance adopts it, the kernel timer shares it.
  const gpuInfo = await openGpuDevice({ gpu, allowSoftwareAdapter: true });
  const attn = await createAttention({ backend: 'webgpu', webgpu: { device: gpuInfo.device } });
  const wasm = await createAttention({ backend: 'wasm' });
  const passes = new GpuPasses(gpuInfo);
  const { adapter, subgroups } = attn.webgpu;
  const chosen = sizes ?? (adapter.software ? SOFTWARE_SIZES : HARDWARE_SIZES);
  const rows = [];
  try {
    for (const n of chosen) {
      const q = tensor(heads * n * headDim, 1, 0.5);
      const k = tensor(heads * n * headDim, 2, 0.5);
      const v = tensor(heads * n * headDim, 3, 0.5);
      for (const mask of ['none', 'causal']) {
        const options = { heads, headDim, causal: mask === 'causal' };
        const flops = 4 * heads * n * n * headDim;
        const withTransfers = await best(repeats, () => attn.attention(q, k, v, options));
        const kernel = await best(
          repeats,
          await kernelTimer(passes, checkAttention(q, k, v, options)),
        );
        const wasmMs =
          n <= wasmMaxN
            ? await best(Math.min(repeats, 2), () => wasm.attention(q, k, v, options))
            : null;
        const row = { n, mask, flops, withTransfers, kernel, wasm: wasmMs };
        rows.push(row);
        log(formatRow(row));
      }
    }
  } finally {
    passes.dispose();
    gpuInfo.device.destroy();
    attn.dispose();
    wasm.dispose();
  }
  return { adapter, subgroups, rows };
}

const gflops = (flops, ms) => (ms === null ? '—' : (flops / ms / 1e6).toFixed(1));
const fixed = (ms) => (ms === null ? '—' : ms.toFixed(2));

export const HEADER =
  `${'N'.padStart(6)} ${'mask'.padEnd(7)} ${'with transfers: ms'.padStart(19)} ${'GFLOP/s'.padStart(8)}` +
  ` ${'kernel: ms'.padStart(11)} ${'GFLOP/s'.padStart(8)} ${'wasm: ms'.padStart(10)} ${'GFLOP/s'.padStart(8)}`;

export function formatRow({ n, mask, flops, withTransfers, kernel, wasm }) {
  return (
    `${String(n).padStart(6)} ${mask.padEnd(7)} ${fixed(withTransfers).padStart(19)} ${gflops(flops, withTransfers).padStart(8)}` +
    ` ${fixed(kernel).padStart(11)} ${gflops(flops, kernel).padStart(8)} ${fixed(wasm).padStart(10)} ${gflops(flops, wasm).padStart(8)}`
  );
}
