// attnlens: attention kernels in WebAssembly, with an idiomatic async API.
// Contract: docs/JS_API.md; types: ../index.d.ts.

export {
  createAttention,
  BACKEND_NAMES,
  THREADS_MIN_FLOPS,
  WEBGPU_MIN_FLOPS,
} from './attention.js';
export { detectWebGpu } from './webgpu/detect.js';
export { relaxedSimdSupported, simdSupported, threadsUnavailableReason } from './loader.js';
export * from './text/index.js';
export * from './analyze.js';
