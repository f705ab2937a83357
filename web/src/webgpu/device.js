// Getting a WebGPU device: where the GPU object comes from, why there may be none (each failure
// becomes an Error naming the step), the limits and features attnlens asks for, and the check
// that decides whether subgroup shuffles may be used.

import { chooseFeatures, shuffleLanes } from './features.js';
import { PROBE_WORKGROUP, SUBGROUP_PROBE } from './wgsl/probe.wgsl.js';

// Raised to the adapter's maxima: large problems need big bindings, and tiles grow with
// workgroup memory. Everything else stays at the defaults every device has.
const RAISED_LIMITS = ['maxStorageBufferBindingSize', 'maxBufferSize', 'maxComputeWorkgroupStorageSize',
  'maxComputeInvocationsPerWorkgroup', 'maxComputeWorkgroupSizeX'];

/** An Error whose message says why WebGPU cannot be used, for createAttention() to report. */
export class WebGpuUnavailable extends Error {
  constructor(reason, options) {
    super(reason, options);
    this.name = 'WebGpuUnavailable';
  }
}

function findGpu(gpu) {
  if (gpu !== undefined && gpu !== null) return gpu;
  const found = globalThis.navigator?.gpu;
  if (found) return found;
  if (globalThis.navigator === undefined || globalThis.process?.versions?.node) {
    throw new WebGpuUnavailable('this JavaScript host has no navigator.gpu; in Node, pass ' +
      "webgpu: { gpu } (e.g. create([]) from the 'webgpu' package)");
  }
  throw new WebGpuUnavailable('navigator.gpu is missing: this browser or context has no WebGPU ' +
    '(it needs a secure context: https: or http://localhost)');
}

/** Whether an adapter is a software implementation (SwiftShader, WARP): slower than wasm. */
function isSoftware(adapter) {
  return Boolean(adapter.info?.isFallbackAdapter ?? adapter.isFallbackAdapter);
}

function describeAdapter(info, software) {
  return {
    vendor: info?.vendor ?? '',
    architecture: info?.architecture ?? '',
    description: info?.description ?? '',
    software,
  };
}

async function requestAdapter(gpu, powerPreference) {
  let adapter;
  try {
    adapter = await gpu.requestAdapter({ powerPreference });
  } catch (cause) {
    throw new WebGpuUnavailable(`requestAdapter() failed: ${cause?.message ?? cause}`, { cause });
  }
  if (!adapter) {
    throw new WebGpuUnavailable('requestAdapter() returned null: no usable GPU adapter (WebGPU ' +
      'disabled or blocklisted, or no driver)');
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

/**
 * Runs the probe kernel: true when invocations fill subgroups in index order.
 * @param {GPUDevice} device
 */
async function subgroupsFillInOrder(device) {
  const bytes = PROBE_WORKGROUP * 2 * 4;
  const result = device.createBuffer({ size: bytes, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC });
  const readback = device.createBuffer({ size: bytes, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  try {
    const module = device.createShaderModule({ code: SUBGROUP_PROBE, label: 'attnlens subgroup probe' });
    const pipeline = await device.createComputePipelineAsync({ layout: 'auto', compute: { module, entryPoint: 'main' } });
    const bindGroup = device.createBindGroup({
      layout: pipeline.getBindGroupLayout(0),
      entries: [{ binding: 0, resource: { buffer: result } }],
    });
    const encoder = device.createCommandEncoder();
    const pass = encoder.beginComputePass();
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, bindGroup);
    pass.dispatchWorkgroups(1);
    pass.end();
    encoder.copyBufferToBuffer(result, 0, readback, 0, bytes);
    device.queue.submit([encoder.finish()]);
    await readback.mapAsync(GPUMapMode.READ);
    const words = new Uint32Array(readback.getMappedRange().slice(0));
    readback.unmap();
    for (let i = 0; i < PROBE_WORKGROUP; i++) {
      const size = words[2 * i + 1];
      if (size < 4 || (size & (size - 1)) !== 0 || words[2 * i] !== i % size) return false;
    }
    return true;
  } catch {
    return false;
  } finally {
    result.destroy();
    readback.destroy();
  }
}

/**
 * Opens (or adopts) a device. Throws WebGpuUnavailable naming the failing step.
 * @param {{ gpu?: object, device?: GPUDevice, powerPreference?: string, storage?: 'f32' | 'f16',
 *   subgroups?: boolean, allowSoftwareAdapter?: boolean, maxBufferBytes?: number }} options
 * @returns {Promise<object>} { device, owned, adapter, storage, subgroups, shuffleLanes, limits,
 *   maxBufferBytes, notes }
 */
export async function openGpuDevice(options) {
  const { device: given, powerPreference = 'high-performance', allowSoftwareAdapter = true } = options;
  let device = given;
  let adapterInfo;
  let software;
  let choice;
  if (device) {
    adapterInfo = device.adapterInfo;
    software = Boolean(adapterInfo?.isFallbackAdapter);
    choice = chooseFeatures(device.features, options);
  } else {
    const adapter = await requestAdapter(findGpu(options.gpu), powerPreference);
    adapterInfo = adapter.info;
    software = isSoftware(adapter);
    if (software && !allowSoftwareAdapter) {
      throw new WebGpuUnavailable(`the only adapter is a software implementation ` +
        `(${adapterInfo?.description || adapterInfo?.architecture || 'fallback adapter'}), slower than wasm`);
    }
    choice = chooseFeatures(adapter.features, options);
    const requiredLimits = {};
    for (const name of RAISED_LIMITS) {
      if (adapter.limits[name] !== undefined) requiredLimits[name] = adapter.limits[name];
    }
    try {
      device = await adapter.requestDevice({ label: 'attnlens', requiredFeatures: choice.requiredFeatures, requiredLimits });
    } catch (cause) {
      throw new WebGpuUnavailable(`requestDevice() failed: ${cause?.message ?? cause}`, { cause });
    }
  }
  const notes = [...choice.notes];
  let subgroups = choice.subgroups;
  if (subgroups && !(await subgroupsFillInOrder(device))) {
    subgroups = false;
    notes.push('subgroups do not fill in invocation order here: reductions go through workgroup memory');
  }
  return {
    device,
    owned: !given,
    adapter: describeAdapter(adapterInfo, software),
    storage: choice.storage,
    subgroups,
    shuffleLanes: shuffleLanes(adapterInfo),
    limits: device.limits,
    // The largest buffer one binding may cover: the device's limits, or less if asked.
    maxBufferBytes: Math.min(device.limits.maxStorageBufferBindingSize, device.limits.maxBufferSize,
      options.maxBufferBytes ?? Infinity),
    notes,
  };
}
