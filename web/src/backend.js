// Which backend runs the attention: the one place where that is decided.
//
// openBackends() loads wasm always (every other backend's fallback, and what serves maskMatrix,
// workingSetBytes and allocate) and, for 'webgpu' and 'auto', tries to open a WebGPU device.
// Backends.run() then picks per call:
//   'webgpu'  the GPU for every call it can take;
//   'auto'    the GPU when one is held and the problem is large enough to pay for the transfers
//             (WEBGPU_MIN_FLOPS), else wasm; software adapters (SwiftShader, WARP) are skipped;
//   'wasm*'   wasm.
// A call the GPU declines (sizes beyond its limits, logits that could overflow, a kernel that does
// not compile, an operation it lacks: attentionBackward) runs on wasm and says why in
// stats.fallbackReason. A lost device is re-created on the next call (a device attnlens created,
// at most MAX_DEVICE_RECREATIONS times) or replaced by wasm; either way the change is reported
// through onChange (the instance's 'backendchange' event).

import { inputError, requireFiniteInputs } from './checks.js';
import { disposedError } from './errors.js';
import {
  bestFlavour,
  relaxedSimdSupported,
  simdSupported,
  threadsUnavailableReason,
} from './loader.js';
import { resolveThreads, warnThreadsFailed } from './threads.js';
import { openWasmBackend } from './wasm-backend.js';
import { findGpu } from './webgpu/detect.js';
import { GpuDeclined, GpuDeviceLost, WebGpuUnavailable } from './webgpu/errors.js';

/** The names createAttention({ backend }) accepts. */
export const BACKEND_NAMES = Object.freeze([
  'auto',
  'wasm',
  'wasm-relaxed',
  'wasm-simd',
  'wasm-scalar',
  'webgpu',
]);

/**
 * 'auto' sends a call to the GPU from this many floating-point operations of attention,
 * 2 * heads * Nq * Nk * (headDim + valueDim): about 1 ms of wasm SIMD, which is what a GPU round
 * trip (upload, dispatch, readback) costs. An estimate: it has not been measured on a real GPU
 * (SwiftShader, the only adapter tested, is slower than wasm at every size). Override it with
 * createAttention({ webgpu: { minFlops } }).
 */
export const WEBGPU_MIN_FLOPS = 2 ** 24;

const MAX_DEVICE_RECREATIONS = 2;

// The WebGPU backend (its kernels are most of the package's JavaScript) is imported only once a
// GPU object exists, so pages without WebGPU never load it.
async function openWebGpuBackend(options) {
  if (!options.device) findGpu(options.gpu); // throws WebGpuUnavailable when there is none
  const { WebGpuBackend } = await import('./webgpu/webgpu-backend.js');
  return WebGpuBackend.open(options);
}

/** Floating-point operations of the attention part of a checked problem. */
export function attentionFlops({ shape }) {
  return 2 * shape.heads * shape.queryLength * shape.keyLength * (shape.headDim + shape.valueDim);
}

async function openWasm(requested, where, threadsOption) {
  switch (requested) {
    case 'wasm-relaxed':
      if (!relaxedSimdSupported()) {
        throw new Error(
          "backend: 'wasm-relaxed' needs WebAssembly relaxed SIMD (f32x4.relaxed_madd), " +
            "which this engine lacks; use 'wasm' or 'auto' to fall back to 'wasm-simd'",
        );
      }
      return openFlavour('relaxed', where, threadsOption);
    case 'wasm-simd':
      if (!simdSupported()) {
        throw new Error(
          "backend: 'wasm-simd' needs WebAssembly SIMD128, which this engine lacks; " +
            "use 'wasm' or 'auto' to fall back to 'wasm-scalar'",
        );
      }
      return openFlavour('simd', where, threadsOption);
    case 'wasm-scalar':
      return openFlavour('scalar', where, threadsOption);
    default:
      return openFlavour(bestFlavour(), where, threadsOption);
  }
}

// A flavour's module, or its threaded twin ('relaxed-threads', 'simd-threads') when the threads
// option and the host allow it (threads.js). Both compute the same bits.
async function openFlavour(flavour, where, threadsOption) {
  let unavailable = '';
  if (flavour === 'scalar') {
    unavailable = simdSupported()
      ? "backend 'wasm-scalar' has no threaded module"
      : threadsUnavailableReason();
  } else if (where.wasmUrl !== undefined) {
    unavailable =
      'wasmUrl names one single-threaded .wasm file (give locateFile instead to place them all)';
  } else {
    unavailable = threadsUnavailableReason();
  }
  const { threads } = resolveThreads(threadsOption, unavailable);
  if (threads > 1) {
    try {
      return await openWasmBackend(`${flavour}-threads`, where, threads);
    } catch (error) {
      warnThreadsFailed(threadsOption, error);
    }
  }
  return openWasmBackend(flavour, where);
}

/**
 * @param {string} requested one of BACKEND_NAMES (createAttention() checked it)
 * @param {{ wasmUrl?: string | URL, locateFile?: Function }} where overrides for the .wasm file
 * @param {object} [webgpu] checked createAttention({ webgpu }) options
 * @param {'auto' | number} [threads] checked createAttention({ threads }) option
 * @returns {Promise<Backends>}
 */
export async function openBackends(requested, where, webgpu = {}, threads = 'auto') {
  const wantsGpu = requested === 'webgpu' || requested === 'auto';
  // 'auto' skips software adapters unless told otherwise; 'webgpu' takes what there is.
  const gpuOptions = {
    ...webgpu,
    allowSoftwareAdapter: requested === 'webgpu' || webgpu.allowSoftwareAdapter === true,
  };
  const [wasm, gpu] = await Promise.allSettled([
    openWasm(requested, where, threads),
    wantsGpu ? openGpu(requested, gpuOptions) : {},
  ]);
  // Neither half may outlive a failure of the other.
  if (wasm.status === 'rejected') {
    if (gpu.status === 'fulfilled') gpu.value.backend?.dispose();
    throw wasm.reason;
  }
  if (gpu.status === 'rejected') {
    wasm.value.dispose();
    throw gpu.reason;
  }
  return new Backends(
    requested,
    wasm.value,
    gpu.value.backend ?? null,
    gpuOptions,
    gpu.value.reason,
  );
}

// { backend } or, for 'auto', { reason } when there is no usable GPU.
async function openGpu(requested, options) {
  try {
    return { backend: await openWebGpuBackend(options) };
  } catch (error) {
    if (!(error instanceof WebGpuUnavailable)) throw error;
    if (requested === 'webgpu') {
      throw new Error(`backend: 'webgpu' is not available: ${error.message}`, { cause: error });
    }
    return { reason: error.message };
  }
}

export class Backends {
  #requested;
  #options;
  #recreations = 0;
  #recovering = null; // Promise while a lost device is being replaced
  #disposed = false;

  constructor(requested, wasm, gpu, options, unavailableReason) {
    this.#requested = requested;
    this.wasm = wasm;
    /** The WebGPU backend while a device is held, else null. */
    this.gpu = gpu;
    this.#options = options;
    /** Why 'auto' holds no GPU (no WebGPU, software adapter, ...), or undefined. */
    this.webgpuUnavailable = unavailableReason;
  }

  /** What the instance offloads to: 'webgpu' while a device is held, else the wasm flavour. */
  get name() {
    return this.gpu ? this.gpu.name : this.wasm.name;
  }

  /**
   * Runs attention, attentionBackward or multiHead on the backend this call goes to.
   * @param {'attention' | 'attentionBackward' | 'multiHead'} kind
   * @param {object} problem from checks.js
   * @param {(change: { from: string, to: string, reason: string }) => void} onChange
   */
  async run(kind, problem, onChange) {
    await this.#recovering; // a lost device being replaced: wait, then use what replaced it
    // A call is checked and started in the caller's turn, but runs after an await: dispose() may
    // have come in between (or during a GPU call), and then the call rejects as disposed.
    if (this.#disposed) throw disposedError(kind);
    const gpu = this.gpu;
    if (gpu && typeof gpu[kind] !== 'function') {
      return this.#onWasm(kind, problem, `webgpu: the WebGPU backend has no ${kind}`);
    }
    if (gpu?.lost) {
      await this.#recover(gpu, new GpuDeviceLost(gpu.lost), onChange);
      return this.run(kind, problem, onChange);
    }
    const reason = this.#reasonForWasm(problem);
    if (reason === null) {
      requireFiniteInputs(problem); // the wasm core checks its own copies; a GPU does not
      try {
        return await this.#timed(gpu, () => gpu[kind](problem));
      } catch (error) {
        if (this.#disposed) throw disposedError(kind);
        if (error instanceof GpuDeviceLost) {
          await this.#recover(gpu, error, onChange);
          return this.run(kind, problem, onChange);
        }
        if (!(error instanceof GpuDeclined)) throw error;
        return this.#onWasm(kind, problem, error.message);
      }
    }
    return this.#onWasm(kind, problem, reason);
  }

  dispose() {
    this.#disposed = true;
    this.gpu?.dispose();
    this.gpu = null;
    this.wasm.dispose();
  }

  // null: run on the GPU; a string: why this call runs on wasm; undefined: no GPU at all.
  #reasonForWasm(problem) {
    if (!this.gpu) return undefined;
    if (this.#requested !== 'auto') return null;
    const min = this.#options.minFlops ?? WEBGPU_MIN_FLOPS;
    const flops = attentionFlops(problem);
    return flops >= min ? null : `auto: ${flops} flops is below webgpu.minFlops (${min})`;
  }

  async #onWasm(kind, problem, reason) {
    let result;
    try {
      result = await this.#timed(this.wasm, () => this.wasm[kind](problem));
    } catch (error) {
      throw inputError(problem, error);
    }
    if (reason) result.stats.fallbackReason = reason;
    return result;
  }

  async #timed(backend, run) {
    const started = performance.now();
    const result = await run();
    result.stats = { ...result.stats, backend: backend.name, ms: performance.now() - started };
    return result;
  }

  // The device of `failed` is gone: re-create it when attnlens owns it, else (or when that
  // fails) use wasm. Calls that fail together on one loss recover once: the first replaces the
  // backend, the others find it replaced and wait for the replacement.
  async #recover(failed, loss, onChange) {
    if (this.gpu !== failed) return;
    const recovery = this.#replace(failed, loss, onChange);
    this.#recovering = recovery;
    try {
      await recovery;
    } finally {
      if (this.#recovering === recovery) this.#recovering = null;
    }
  }

  async #replace(failed, loss, onChange) {
    const owned = failed.info.owned;
    failed.dispose();
    this.gpu = null;
    let detail = loss.message;
    if (owned && this.#recreations < MAX_DEVICE_RECREATIONS) {
      this.#recreations++;
      try {
        const replacement = await openWebGpuBackend(this.#options);
        // Disposed while the new device was being opened: it must not outlive the instance.
        if (this.#disposed) replacement.dispose();
        else this.gpu = replacement;
      } catch (error) {
        detail += `; a new device could not be opened: ${error.message}`;
      }
    } else {
      detail += owned
        ? `; not re-created after ${MAX_DEVICE_RECREATIONS} losses`
        : '; the device was passed in by the caller';
    }
    onChange({ from: 'webgpu', to: this.name, reason: detail });
  }
}
