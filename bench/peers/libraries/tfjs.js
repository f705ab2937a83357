// TensorFlow.js with its wasm backend (XNNPACK underneath), two ways:
//   batched   one batched matMul over the [H, N, D] tensors, softmax, batched matMul;
//   per-head  a 2-D matMul per head (its fast path: tfjs-backend-wasm sends 2-D matMul without
//             transpose flags to XNNPACK's GEMM; batched or transposed matMul takes a scalar loop).
// Queries are scaled before the first matMul (N x D multiplies instead of N x N). Masks are an
// additive [N, N] tensor built once per case and added to the scores on every call. Each call
// uploads q, k, v and reads the output back, like attnlens.

import { DEPTH, HEADS, additiveMask } from '../core/workload.js';

export async function open({ perHead, threads, platform }) {
  const tf = await import('@tensorflow/tfjs-core');
  const wasm = await import('@tensorflow/tfjs-backend-wasm');
  if (platform.tfjsWasmPaths) wasm.setWasmPaths(platform.tfjsWasmPaths);
  if (threads > 1) {
    if (!(await tf.env().getAsync('WASM_HAS_MULTITHREAD_SUPPORT'))) {
      return {
        unavailable: `tfjs-backend-wasm reports no multithread support here (${platform.name})`,
      };
    }
    wasm.setThreadsCount(threads);
  }
  if (!(await tf.setBackend('wasm'))) throw new Error('tf.setBackend("wasm") failed');
  await tf.ready();
  // Its pool is capped at navigator.hardwareConcurrency / 2 (one thread on a 2-core machine),
  // whatever setThreadsCount() asked for.
  if (wasm.getThreadsCount() < threads) {
    return {
      unavailable:
        `tfjs-backend-wasm runs ${wasm.getThreadsCount()} thread(s) after setThreadsCount(${threads}): ` +
        'it caps its pool at half the logical cores',
    };
  }
  const backend = tf.backend();
  return {
    version: tf.version_core,
    detail:
      `wasm backend, ${perHead ? 'one 2-D matMul per head' : 'batched matMul'}, ` +
      `simd ${await tf.env().getAsync('WASM_HAS_SIMD_SUPPORT')}, ${wasm.getThreadsCount()} thread(s)`,
    wasmBytes: () => backend.wasm?.HEAPU8?.byteLength,
    prepare({ n, q, k, v }, mask) {
      const scale = 1 / Math.sqrt(DEPTH);
      const maskData = additiveMask(mask, n);
      const maskTensor = maskData ? tf.tensor2d(maskData, [n, n]) : null;
      // tfjs-backend-wasm hands a matMul to XNNPACK only for 2-D operands without transpose
      // flags (batch_mat_mul.cc); matMul(q, k, false, true) takes its scalar loop. So per head,
      // K is transposed first (an N x D copy). Batched matMul takes the scalar loop either way,
      // and runs faster there with the flag than with a transposed copy.
      const attend = (qt, kt, vt) => {
        const scores =
          kt.rank === 2
            ? tf.matMul(tf.mul(qt, scale), tf.transpose(kt))
            : tf.matMul(tf.mul(qt, scale), kt, false, true);
        return tf.matMul(tf.softmax(maskTensor ? tf.add(scores, maskTensor) : scores), vt);
      };
      const batched = () => {
        const dims = [HEADS, n, DEPTH];
        const out = tf.tidy(() =>
          attend(tf.tensor3d(q, dims), tf.tensor3d(k, dims), tf.tensor3d(v, dims)),
        );
        const data = out.dataSync();
        out.dispose();
        return data;
      };
      const headByHead = () => {
        const output = new Float32Array(HEADS * n * DEPTH);
        const size = n * DEPTH;
        for (let h = 0; h < HEADS; h++) {
          const head = (x) => tf.tensor2d(x.subarray(h * size, (h + 1) * size), [n, DEPTH]);
          const out = tf.tidy(() => attend(head(q), head(k), head(v)));
          output.set(out.dataSync(), h * size);
          out.dispose();
        }
        return output;
      };
      return {
        call: async () => (perHead ? headByHead() : batched()),
        headMajor: (output) => output,
        dispose: () => maskTensor?.dispose(),
      };
    },
  };
}
