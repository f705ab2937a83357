// Getting a WebGPU device: the limits and features attnlens asks for, and the check that decides
// whether subgroup shuffles may be used. Failures are WebGpuUnavailable errors naming the step.

import { describeAdapter, findGpu, isSoftware, requestAdapter } from './detect.js';
import { WebGpuUnavailable } from './errors.js';
import { chooseFeatures, shuffleLanes } from './features.js';
import { BufferUsage, MapMode } from './flags.js';
import { PROBE_WORKGROUP, SUBGROUP_PROBE } from './wgsl/probe.wgsl.js';

// Raised to the adapter's maxima: large problems need big bindings, and tiles grow with
// workgroup memory. Everything else stays at the defaults every device has.
const RAISED_LIMITS = [
  'maxStorageBufferBindingSize',
  'maxBufferSize',
  'maxComputeWorkgroupStorageSize',
  'maxComputeInvocationsPerWorkgroup',
  'maxComputeWorkgroupSizeX',
];

/**
 * Runs the probe kernel: true when invocations fill subgroups in index order.
 * @param {GPUDevice} device
 */
async function subgroupsFillInOrder(device) {
  const bytes = PROBE_WORKGROUP * 2 * 4;
  const result = device.createBuffer({
    size: bytes,
    usage: BufferUsage.STORAGE | BufferUsage.COPY_SRC,
  });
  const readback = device.createBuffer({
    size: bytes,
    usage: BufferUsage.MAP_READ | BufferUsage.COPY_DST,
  });
  try {
    const module = device.createShaderModule({
      code: SUBGROUP_PROBE,
      label: 'attnlens subgroup probe',
    });
    const pipeline = await device.createComputePipelineAsync({
      layout: 'auto',
      compute: { module, entryPoint: 'main' },
    });
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
    await readback.mapAsync(MapMode.READ);
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
  const {
    device: given,
    powerPreference = 'high-performance',
    allowSoftwareAdapter = true,
  } = options;
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
      const name = adapterInfo?.description || adapterInfo?.architecture || 'fallback adapter';
      throw new WebGpuUnavailable(
        `the only adapter is a software implementation (${name}), slower than wasm`,
      );
    }
    choice = chooseFeatures(adapter.features, options);
    const requiredLimits = {};
    for (const name of RAISED_LIMITS) {
      if (adapter.limits[name] !== undefined) requiredLimits[name] = adapter.limits[name];
    }
    try {
      device = await adapter.requestDevice({
        label: 'attnlens',
        requiredFeatures: choice.requiredFeatures,
        requiredLimits,
      });
    } catch (cause) {
      throw new WebGpuUnavailable(`requestDevice() failed: ${cause?.message ?? cause}`, { cause });
    }
  }
  const notes = [...choice.notes];
  let subgroups = choice.subgroups;
  if (subgroups && !(await subgroupsFillInOrder(device))) {
    subgroups = false;
    notes.push(
      'subgroups do not fill in invocation order here: reductions go through workgroup memory',
    );
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
    maxBufferBytes: Math.min(
      device.limits.maxStorageBufferBindingSize,
      device.limits.maxBufferSize,
      options.maxBufferBytes ?? Infinity,
    ),
    notes,
  };
}
