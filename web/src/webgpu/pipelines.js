// Compute pipelines, compiled once per kernel variant and reused by every later call: shapes in
// the same depth bucket (tiling.js) share a variant, so a stream of calls of one shape compiles
// nothing after the first.

/** A WGSL kernel that the device refused; the call that needed it runs on wasm instead. */
export class KernelCompileError extends Error {
  constructor(label, detail, options) {
    super(`the WebGPU kernel '${label}' failed to compile: ${detail}`, options);
    this.name = 'KernelCompileError';
  }
}

export class PipelineCache {
  #device;
  #pipelines = new Map(); // key -> Promise<GPUComputePipeline>

  constructor(device) {
    this.#device = device;
  }

  /** Number of distinct variants compiled (or being compiled). */
  get size() {
    return this.#pipelines.size;
  }

  /**
   * @param {string} key identifies the variant (kernel name and every parameter of its source)
   * @param {() => string} source builds the WGSL, only on the first request of `key`
   * @returns {Promise<GPUComputePipeline>}
   */
  get(key, source) {
    let pipeline = this.#pipelines.get(key);
    if (!pipeline) {
      pipeline = this.#compile(key, source());
      this.#pipelines.set(key, pipeline);
    }
    return pipeline;
  }

  async #compile(label, code) {
    const device = this.#device;
    device.pushErrorScope('validation');
    const module = device.createShaderModule({ code, label });
    let pipeline;
    let failure;
    try {
      pipeline = await device.createComputePipelineAsync({
        label,
        layout: 'auto',
        compute: { module, entryPoint: 'main' },
      });
    } catch (error) {
      failure = error;
    }
    const scopeError = await device.popErrorScope();
    if (failure || scopeError) {
      const info = await module.getCompilationInfo?.();
      const messages = (info?.messages ?? [])
        .filter((m) => m.type === 'error')
        .map((m) => `line ${m.lineNum}: ${m.message}`);
      const detail =
        messages.join('; ') || scopeError?.message || failure?.message || 'unknown error';
      throw new KernelCompileError(label, detail, { cause: failure ?? scopeError });
    }
    return pipeline;
  }
}
