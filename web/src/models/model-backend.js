// Where a model's forward pass runs: loadModel's `backend` ('wasm', the default; 'webgpu'; 'auto')
// and `webgpu` options (createAttention's webgpu options, checked by the same schema). The
// weights always live in wasm memory too: the wasm core checks them, and runs generate(),
// headScores(), headEffects() and the run() options the GPU forward lacks. This module decides,
// once at load and then per run, and says why (model.info.backendReason).
//
//   'wasm'    as before: no device is opened.
//   'webgpu'  the GPU forward for every run it can take; no WebGPU here, or an architecture it
//             does not run yet, is an Error naming 'backend' (asking for a GPU and silently
//             getting wasm would hide a 10x difference).
//   'auto'    the GPU forward for runs of at least webgpu.minFlops (MODEL_WEBGPU_MIN_FLOPS) on a
//             hardware adapter; software adapters (SwiftShader, WARP) are slower than wasm and
//             skipped unless webgpu.allowSoftwareAdapter; anything else runs on wasm.

import { oneOf, typeError } from '../argument-checks.js';
import { wasmBackendOf } from '../attention.js';
import { checkWebGpuOptions } from '../checks.js';
import { attnlensError } from '../errors.js';
import { findGpu } from '../webgpu/detect.js';
import { GpuDeclined, WebGpuUnavailable } from '../webgpu/errors.js';

/** The values of loadModel's `backend` option. */
export const MODEL_BACKENDS = Object.freeze(['wasm', 'webgpu', 'auto']);

/**
 * 'auto' runs a forward pass on the GPU from this many floating-point operations (2 x parameters
 * x N + 4 x layers x N^2 x hidden): GPT-2 small from about 4 tokens. An estimate, not measured
 * on a real GPU here; override it with webgpu.minFlops.
 */
export const MODEL_WEBGPU_MIN_FLOPS = 2 ** 30;

/** The checked { backend, webgpu } of loadModel's options. */
export function checkModelBackend(opts) {
  const backend = oneOf(opts.backend, 'backend', MODEL_BACKENDS, 'wasm');
  const webgpu = checkWebGpuOptions(opts.webgpu);
  if (opts.webgpu !== undefined && backend === 'wasm') {
    throw typeError(
      'webgpu',
      "applies to backend 'webgpu' or 'auto'; this model would load with backend 'wasm'",
    );
  }
  return { backend, webgpu };
}

/**
 * A device for `backend` ({ gpu } from device.js, or { gpu: null, reason }). Rejects with an
 * Error (code 'unavailable', parameter 'backend') when 'webgpu' has none.
 */
export async function openModelDevice({ backend, webgpu }) {
  if (backend === 'wasm') return { gpu: null, reason: "backend 'wasm' (loadModel's default)" };
  const allowSoftwareAdapter = backend === 'webgpu' || webgpu.allowSoftwareAdapter === true;
  try {
    if (!webgpu.device) findGpu(webgpu.gpu);
    const { openGpuDevice } = await import('../webgpu/device.js');
    const gpu = await openGpuDevice({ ...webgpu, storage: 'f32', allowSoftwareAdapter });
    if (gpu.adapter.software && !allowSoftwareAdapter) {
      if (gpu.owned) gpu.device.destroy();
      throw new WebGpuUnavailable('the device is a software adapter, slower than wasm');
    }
    return { gpu, reason: null };
  } catch (error) {
    if (!(error instanceof WebGpuUnavailable)) throw error;
    if (backend === 'webgpu') {
      throw attnlensError('unavailable', 'backend', `'webgpu' is not available: ${error.message}`);
    }
    return { gpu: null, reason: `auto: no WebGPU forward (${error.message}): wasm` };
  }
}

/**
 * Why the GPU forward does not take this model, as loadModel reports it: for 'webgpu' an Error
 * naming 'backend' (thrown), for 'auto' the reason it runs on wasm.
 */
export function declineModel(backend, reason) {
  if (backend === 'webgpu') {
    throw attnlensError(
      'out_of_range',
      'backend',
      `'webgpu': ${reason}; load it with backend 'wasm' or 'auto'`,
    );
  }
  return `auto: ${reason}: wasm`;
}

/**
 * The reason a model with a GPU forward gives for it (`storage`: webgpu.storage as asked;
 * `dtype`: the model's; `vision`: a VisionModel's, whose wasm-only parts differ).
 */
export function gpuReason(backend, adapter, { minFlops, storage, dtype, vision }) {
  const name = adapter.description || adapter.architecture || adapter.vendor || 'a GPU';
  const software = adapter.software ? ' (a software adapter)' : '';
  // The GPU holds the weights as wasm does (an f32 model's are not rounded to halves for it),
  // whatever webgpu.storage asks: said, not hidden.
  const held = {
    f16: ', f16 weights (halves, widened to f32 as read)',
    q8: ', Q8_0 weights (widened to f32 as read)',
    q4: ', 4-bit weights (widened to f32 as read)',
  }[dtype];
  const f32 =
    held ??
    (storage === 'f16'
      ? ", f32 weights (a model's GPU weights keep its dtype: halves with dtype 'f16')"
      : '');
  const onWasm = vision ? VISION_WASM_PARTS : WASM_PARTS;
  return backend === 'webgpu'
    ? `backend 'webgpu': run() on ${name}${software}${f32}; ${onWasm}`
    : `auto: run() on ${name}${software}${f32} from ${minFlops} flops, smaller runs on wasm; ` +
        onWasm;
}

const WASM_PARTS =
  'run() with masks, ablate, lens or projections, generate(), headScores() and headEffects() ' +
  'on wasm';
const VISION_WASM_PARTS =
  'run() with masks, returnPooled or returnHiddenStates, or of a picture whose patch grid is ' +
  'not the trained one, on wasm';

/** Floating-point operations of one forward pass of `n` tokens. */
export function forwardFlops({ parameters, layers, hidden }, n) {
  return 2 * parameters * n + 4 * layers * n * n * hidden;
}

/** Whether run()'s checked options are all ones the GPU forward computes. */
export function gpuTakesRun(opts) {
  return opts.masks === null && opts.projections < 0 && opts.ablate.length === 0 && !opts.lens;
}

/**
 * A GPU forward's result, or null where the GPU declines the run (then wasm runs it). After the
 * await, `live()` checks the model was not disposed meanwhile. A lost device ends the GPU forward
 * for good: it is disposed and `endGpu(reason)` is told, once, what the model's info says from
 * then on. `current(gpu)`: whether `gpu` is still the model's (two runs may lose it together).
 */
export async function gpuForwardOrNull(gpu, forward, { live, current, endGpu }) {
  try {
    return await forward(gpu);
  } catch (error) {
    live();
    if (!(error instanceof GpuDeclined)) throw error;
    if (gpu.lost && current(gpu)) {
      gpu.dispose();
      endGpu(`${error.message}: wasm from then on`);
    }
    return null;
  }
}

/** model.info's `gpuBytes` while the model has a GPU forward: its weights' bytes on the GPU. */
export function gpuBytesOf(gpu) {
  return gpu.model ? { gpuBytes: gpu.model.weightBytes } : {};
}

/** A model's GPU state and info once its GPU forward ended for `reason`: wasm from then on. */
export function withoutGpu(gpu, info, attention, reason) {
  const wasmInfo = Object.fromEntries(Object.entries(info).filter(([key]) => key !== 'gpuBytes'));
  return {
    gpu: { ...gpu, model: null, reason },
    info: Object.freeze({
      ...wasmInfo,
      backend: wasmBackendOf(attention, 'run').name,
      backendReason: reason,
    }),
  };
}
