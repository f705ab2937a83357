// attnlens as users call it: attn.attention(q, k, v, options) on head-major Float32Arrays, which
// checks the arguments, copies into wasm memory, runs the streaming kernel and copies out.
//
// A variant is one way of building or loading the engine. Adding one (the threaded build, a
// relaxed-SIMD build) is one entry here; run.mjs then accepts `attnlens-<name>` as a runner.

// The package's entry point, what `import ... from 'attnlens'` resolves to: only its public API.
import { createAttention, threadsUnavailableReason } from '../../../web/src/index.js';
import { DEPTH, HEADS, WINDOW_HALF_WIDTH } from '../core/workload.js';

/**
 * name -> { backend: what createAttention() is asked for, threads: thread counts it can run,
 * nodeFlags: what a Node process needs to run it }
 */
export const ATTNLENS_VARIANTS = {
  // What 'auto' loads in Chromium; Node 20 validates relaxed SIMD only behind its flag.
  relaxed: {
    backend: 'wasm-relaxed',
    threads: [1],
    describe: 'wasm relaxed SIMD (FMA)',
    nodeFlags: ['--experimental-wasm-relaxed-simd'],
  },
  simd: { backend: 'wasm-simd', threads: [1], describe: 'wasm SIMD128' },
  scalar: { backend: 'wasm-scalar', threads: [1], describe: 'wasm without SIMD' },
  // The -pthread modules: only where threadsUnavailableReason() is '' (cross-origin isolated
  // pages; not Node, whose glue has no worker_threads support).
  threads: { backend: 'wasm-simd', threads: [2], describe: 'wasm SIMD128, threaded' },
  'relaxed-threads': {
    backend: 'wasm-relaxed',
    threads: [2],
    describe: 'wasm relaxed SIMD (FMA), threaded',
  },
};

function maskOptions(mask) {
  if (mask === 'causal') return { causal: true };
  if (mask === 'window128') return { window: WINDOW_HALF_WIDTH };
  return {};
}

export async function open({ variant, threads }) {
  const config = ATTNLENS_VARIANTS[variant];
  if (!config) throw new Error(`unknown attnlens variant '${variant}'`);
  if (!config.threads.includes(threads)) {
    return {
      unavailable:
        `attnlens ${variant} runs ${config.threads.join('/')} thread(s)` +
        (config.threads.includes(2) ? '' : '; attnlens-threads and attnlens-relaxed-threads run 2'),
    };
  }
  if (threads > 1 && threadsUnavailableReason()) return { unavailable: threadsUnavailableReason() };
  const attn = await createAttention({ backend: config.backend, threads });
  if (attn.threads !== threads) {
    attn.dispose();
    return {
      unavailable: `the threaded module loaded ${attn.threads} thread(s), not ${threads}`,
    };
  }
  return {
    version: attn.version,
    detail: `${config.describe} (${attn.backend})`,
    wasmBytes: () => attn.wasmMemoryBytes,
    prepare({ q, k, v }, mask) {
      const options = { heads: HEADS, headDim: DEPTH, ...maskOptions(mask) };
      return {
        call: async () => (await attn.attention(q, k, v, options)).output,
        headMajor: (output) => output,
      };
    },
  };
}
