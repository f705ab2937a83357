// Whether WebGPU can be used here, without creating a device: where the GPU object comes from and
// why there may be none (each failure becomes a WebGpuUnavailable naming the step). Loaded with
// the package; the backend itself (device.js and the kernels) is loaded only when a GPU exists.

import { WebGpuUnavailable } from './errors.js';

/** The GPU object to use: `gpu` if given, else navigator.gpu; throws WebGpuUnavailable if none. */
export function findGpu(gpu) {
  if (gpu !== undefined && gpu !== null) return gpu;
  const found = globalThis.navigator?.gpu;
  if (found) return found;
  if (globalThis.navigator === undefined || globalThis.process?.versions?.node) {
    throw new WebGpuUnavailable(
      'this JavaScript host has no navigator.gpu; in Node, pass ' +
        "webgpu: { gpu } (e.g. create([]) from the 'webgpu' package)",
    );
  }
  throw new WebGpuUnavailable(
    'navigator.gpu is missing: this browser or context has no WebGPU ' +
      '(it needs a secure context: https: or http://localhost)',
  );
}

/** Whether an adapter is a software implementation (SwiftShader, WARP): slower than wasm. */
export function isSoftware(adapter) {
  return Boolean(adapter.info?.isFallbackAdapter ?? adapter.isFallbackAdapter);
}

/** The adapter as attn.webgpu and detectWebGpu() report it. */
export function describeAdapter(info, software) {
  return {
    vendor: info?.vendor ?? '',
    architecture: info?.architecture ?? '',
    description: info?.description ?? '',
    software,
  };
}

export async function requestAdapter(gpu, powerPreference) {
  let adapter;
  try {
    adapter = await gpu.requestAdapter({ powerPreference });
  } catch (cause) {
    throw new WebGpuUnavailable(`requestAdapter() failed: ${cause?.message ?? cause}`, { cause });
  }
  if (!adapter) {
    throw new WebGpuUnavailable(
      'requestAdapter() returned null: no usable GPU adapter (WebGPU ' +
        'disabled or blocklisted, or no driver)',
    );
  }
  return adapter;
}

/**
 * What detectWebGpu() reports: whether an adapter exists, without creating a device.
 * @param {{ gpu?: object, powerPreference?: string }} [options]
 */
export async function detectWebGpu({ gpu, powerPreference = 'high-performance' } = {}) {
  try {
    const adapter = await requestAdapter(findGpu(gpu), powerPreference);
    const software = isSoftware(adapter);
    return {
      available: true,
      adapter: describeAdapter(adapter.info, software),
      features: [...adapter.features].filter((f) => f === 'shader-f16' || f === 'subgroups').sort(),
    };
  } catch (error) {
    if (!(error instanceof WebGpuUnavailable)) throw error;
    return { available: false, reason: error.message };
  }
}
