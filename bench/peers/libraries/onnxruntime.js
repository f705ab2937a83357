// onnxruntime-web on its wasm execution provider, running the graphs of models/build_models.py:
//   mha        com.microsoft.MultiHeadAttention (fused; inputs token-major [1, N, H*D])
//   attention  ai.onnx Attention, opset 23 (fused; head-major [1, H, N, D])
//   matmul     MatMul -> Mul -> (Add mask) -> Softmax -> MatMul on [H, N, D]
// Causal uses the fused op's own attribute (unidirectional / is_causal) unless `causalAsMask`
// asks for the additive mask input; window128 always goes through the additive mask, since no
// op has a window. Feeds are built once per case; session.run() copies them into wasm memory and
// the output out of it on every call, as attnlens does.

import { DEPTH, HEADS, additiveMask, toHeadMajor, toTokenMajor } from '../core/workload.js';

const GRAPHS = {
  mha: {
    dims: (n) => [1, n, HEADS * DEPTH],
    maskDims: (n) => [1, 1, n, n],
    tokenMajor: true,
    nativeCausal: true,
  },
  attention: {
    dims: (n) => [1, HEADS, n, DEPTH],
    maskDims: (n) => [n, n],
    tokenMajor: false,
    nativeCausal: true,
  },
  matmul: {
    dims: (n) => [HEADS, n, DEPTH],
    maskDims: (n) => [n, n],
    tokenMajor: false,
    nativeCausal: false,
  },
};

/** Which graph file runs a mask: `<graph>-none`, `<graph>-causal` (attribute) or `<graph>-mask`. */
function graphFile(graph, mask, causalAsMask) {
  if (mask === 'none') return `${graph}-none`;
  if (mask === 'causal' && GRAPHS[graph].nativeCausal && !causalAsMask) return `${graph}-causal`;
  return `${graph}-mask`;
}

export async function open({ graph, causalAsMask = false, threads, platform }) {
  const ort = await import('onnxruntime-web');
  if (threads > 1 && !platform.sharedMemory) {
    return {
      unavailable: 'onnxruntime-web threads need SharedArrayBuffer (a cross-origin isolated page)',
    };
  }
  ort.env.wasm.numThreads = threads;
  ort.env.logLevel = 'error';
  if (platform.ortWasmPaths) ort.env.wasm.wasmPaths = platform.ortWasmPaths;
  const layout = GRAPHS[graph];
  return {
    version: ort.env.versions.web,
    detail: `wasm EP, ${graph} graph${causalAsMask ? ', causal as an additive mask' : ''}`,
    async prepare(inputs, mask) {
      const file = graphFile(graph, mask, causalAsMask);
      const session = await ort.InferenceSession.create(await platform.loadModel(file), {
        executionProviders: ['wasm'],
        graphOptimizationLevel: 'all',
      });
      const dims = layout.dims(inputs.n);
      const tensor = (data) =>
        new ort.Tensor('float32', layout.tokenMajor ? toTokenMajor(data, inputs.n) : data, dims);
      const feeds = { q: tensor(inputs.q), k: tensor(inputs.k), v: tensor(inputs.v) };
      if (file.endsWith('-mask')) {
        feeds.mask = new ort.Tensor(
          'float32',
          additiveMask(mask, inputs.n),
          layout.maskDims(inputs.n),
        );
      }
      return {
        detail: `${file}.onnx`,
        call: async () => (await session.run(feeds)).out.data,
        headMajor: (output) => (layout.tokenMajor ? toHeadMajor(output, inputs.n) : output),
      };
    },
  };
}
