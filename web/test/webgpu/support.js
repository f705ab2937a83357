// Shared by the WebGPU tests in Node: the `webgpu` package (Dawn), whose only adapter on a
// machine without a GPU is Chromium's SwiftShader (run through scripts/swiftshader.mjs, which
// points Vulkan at it), plus a wasm instance as the reference the GPU must match. The package's
// globals (GPUBufferUsage, ...) are deliberately not installed: attnlens must not need them.

import assert from 'node:assert/strict';
import { create } from 'webgpu';
import { createAttention } from '../../src/index.js';
import { assertClose } from '../support/helpers.js';

/** The GPU object of this process (navigator.gpu's equivalent). */
export const gpu = create([]);

/** The agreement asked of WebGPU against wasm, f32 storage. */
export const GPU_TOLERANCE = 1e-4;

/** A WebGPU instance on SwiftShader, with extra webgpu options. */
export function openGpuAttention(webgpu = {}) {
  return createAttention({ backend: 'webgpu', webgpu: { gpu, ...webgpu } });
}

/** The wasm instance every GPU result is compared with. */
export function openWasmAttention() {
  return createAttention({ backend: 'wasm' });
}

/**
 * A device requested straight from the adapter, as a caller would create one to share with
 * attnlens (webgpu.device): the features attnlens can use and the adapter's largest limits.
 */
export async function requestDevice() {
  const adapter = await gpu.requestAdapter();
  const requiredFeatures = adapter.features.has('subgroups') ? ['subgroups'] : [];
  const requiredLimits = {};
  for (const name of [
    'maxStorageBufferBindingSize',
    'maxBufferSize',
    'maxComputeWorkgroupStorageSize',
  ]) {
    requiredLimits[name] = adapter.limits[name];
  }
  return adapter.requestDevice({ requiredFeatures, requiredLimits });
}

/** Every returned array of `actual` within GPU_TOLERANCE of `expected`. */
export function assertSameResults(actual, expected, what) {
  for (const key of ['output', 'weights', 'scores', 'q', 'k', 'v']) {
    if (expected[key] === undefined) continue;
    assert.ok(actual[key], `${what}: ${key} is missing`);
    assertClose(actual[key], expected[key], `${what}: ${key}`, GPU_TOLERANCE);
  }
}
