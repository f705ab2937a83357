// Which backend runs the attention: the one place where that is decided.
//
// openBackends() returns { compute, wasm }: `compute` runs attention and multiHead, `wasm` is
// always loaded because it is every other backend's fallback (options or sizes a future backend
// does not handle) and it serves maskMatrix, workingSetBytes and allocate. Today both are the
// same wasm backend; a WebGPU backend (its own issue) plugs in under 'auto' and 'webgpu' below.

import { attnlensError, describe } from './errors.js';
import { simdSupported } from './loader.js';
import { openWasmBackend } from './wasm-backend.js';

/** The names createAttention({ backend }) accepts. */
export const BACKEND_NAMES = Object.freeze(['auto', 'wasm', 'wasm-simd', 'wasm-scalar']);

/**
 * @param {string} requested one of BACKEND_NAMES
 * @param {{ wasmUrl?: string | URL, locateFile?: Function }} where overrides for the .wasm file
 */
export async function openBackends(requested, where) {
  if (typeof requested !== 'string') {
    throw attnlensError('invalid_argument', 'backend', `must be a string, got ${describe(requested)}`);
  }
  switch (requested) {
    case 'auto':  // WebGPU, when available and worth it for the problem sizes, goes first here.
    case 'wasm': {
      const wasm = await openWasmBackend(simdSupported() ? 'simd' : 'scalar', where);
      return { compute: wasm, wasm };
    }
    case 'wasm-simd': {
      if (!simdSupported()) {
        throw new Error("backend: 'wasm-simd' needs WebAssembly SIMD128, which this engine lacks; " +
          "use 'wasm' or 'auto' to fall back to 'wasm-scalar'");
      }
      const wasm = await openWasmBackend('simd', where);
      return { compute: wasm, wasm };
    }
    case 'wasm-scalar': {
      const wasm = await openWasmBackend('scalar', where);
      return { compute: wasm, wasm };
    }
    default:
      throw attnlensError('out_of_range', 'backend',
        `must be one of ${BACKEND_NAMES.map((n) => `'${n}'`).join(', ')}, got '${requested}'`);
  }
}
