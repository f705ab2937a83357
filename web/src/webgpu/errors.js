// The errors of the WebGPU path. None reaches the caller of attention() or multiHead():
// backend.js turns each into a fallback (wasm, or a new device), or into createAttention()'s
// rejection for backend 'webgpu'.

/** WebGPU cannot be used here; the message says why (no navigator.gpu, no adapter, ...). */
export class WebGpuUnavailable extends Error {
  constructor(reason, options) {
    super(reason, options);
    this.name = 'WebGpuUnavailable';
  }
}

/** This call cannot run on the GPU; the message says why. */
export class GpuDeclined extends Error {
  constructor(reason, options) {
    super(reason, options);
    this.name = 'GpuDeclined';
  }
}

/** The device was lost (driver reset, device.destroy(), ...). */
export class GpuDeviceLost extends Error {
  constructor(info, options) {
    super(`the WebGPU device was lost (${info.reason}: ${info.message})`, options);
    this.name = 'GpuDeviceLost';
    this.info = info;
  }
}
