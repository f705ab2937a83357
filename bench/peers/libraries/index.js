// Every runner the benchmark knows: a name (a row of the results), the library it belongs to,
// the adapter module that opens it, and the masks it runs. Adapters export
// open(options) -> { version, detail, wasmBytes?, prepare(inputs, mask) -> { call, headMajor } }
// or { unavailable: reason } when a configuration (e.g. threads) cannot run here. `nodeFlags`:
// options the Node process of a case starts with.

import { ATTNLENS_VARIANTS } from './attnlens.js';
import { MASKS } from '../core/workload.js';

const attnlensRunners = Object.fromEntries(
  Object.keys(ATTNLENS_VARIANTS).map((variant) => [
    `attnlens-${variant}`,
    {
      library: 'attnlens',
      load: () => import('./attnlens.js'),
      options: { variant },
      masks: MASKS,
      nodeFlags: ATTNLENS_VARIANTS[variant].nodeFlags ?? [],
    },
  ]),
);

export const RUNNERS = {
  ...attnlensRunners,
  'ort-mha': {
    library: 'onnxruntime-web',
    load: () => import('./onnxruntime.js'),
    options: { graph: 'mha' },
    masks: MASKS,
  },
  // The fused ops once more for causal, with the mask as an additive input instead of the
  // op's causal attribute (whichever is faster is the library's best).
  'ort-mha-maskinput': {
    library: 'onnxruntime-web',
    load: () => import('./onnxruntime.js'),
    options: { graph: 'mha', causalAsMask: true },
    masks: ['causal'],
  },
  'ort-attention': {
    library: 'onnxruntime-web',
    load: () => import('./onnxruntime.js'),
    options: { graph: 'attention' },
    masks: MASKS,
  },
  'ort-attention-maskinput': {
    library: 'onnxruntime-web',
    load: () => import('./onnxruntime.js'),
    options: { graph: 'attention', causalAsMask: true },
    masks: ['causal'],
  },
  'ort-matmul': {
    library: 'onnxruntime-web',
    load: () => import('./onnxruntime.js'),
    options: { graph: 'matmul' },
    masks: MASKS,
  },
  'tfjs-batched': {
    library: 'tensorflow.js',
    load: () => import('./tfjs.js'),
    options: { perHead: false },
    masks: MASKS,
  },
  'tfjs-per-head': {
    library: 'tensorflow.js',
    load: () => import('./tfjs.js'),
    options: { perHead: true },
    masks: MASKS,
  },
  'plain-js': {
    library: 'plain JavaScript',
    load: () => import('./plain-js.js'),
    options: {},
    masks: MASKS,
  },
};

export const LIBRARIES = [...new Set(Object.values(RUNNERS).map((r) => r.library))];
