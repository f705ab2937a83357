// The TensorSet: every tensor of a checkpoint by name, over the bytes of its files, whatever the
// format (safetensors, a PyTorch zip, shards of either). Formats hand it validated entries:
//   { name, dtype, shape, file, bytes, offset?, strides?, q8_0?, q4? }
// where `bytes` is a view of the file holding the elements (for a PyTorch storage, the whole
// storage) or a function returning it (a storage inflated and checked when first read);
// `offset` and `strides` in elements (absent: contiguous from the start of `bytes`). `q8_0`
// (GGUF): the tensor's own Q8_0 blocks, rows of the [out, in] matrix (q8.js), or a function
// returning them, which readQ8_0 copies as they are. `q4` (GGUF): { type: 'Q4_0' | 'Q4_K', blocks }
// with blocks as q8_0's, which readQ4 rewrites as the core's 4-bit rows without rounding (q4.js).

import { attnlensError, describe } from '../../errors.js';
import { convertToFloat16, convertToFloat32, DTYPE_BYTES, FLOAT_DTYPES } from './dtypes.js';
import { GGML_TYPES, tensorBytes } from './gguf-types.js';
import { q4Bytes, q4FromGguf, quantizeQ4_0 } from './q4.js';
import { q8Bytes, quantizeQ8_0 } from './q8.js';

/** Number of elements of `shape` (1 for a scalar). */
export function elementCount(shape) {
  return shape.reduce((product, size) => product * size, 1);
}

/** Row-major strides of `shape`, in elements. */
export function contiguousStrides(shape) {
  const strides = new Array(shape.length);
  let stride = 1;
  for (let d = shape.length - 1; d >= 0; d--) {
    strides[d] = stride;
    stride *= shape[d];
  }
  return strides;
}

class TensorSet {
  #entries;
  #released = false;

  /** @param {Map<string, object>} entries validated entries by name */
  constructor(entries) {
    this.#entries = entries;
    this.names = [...entries.keys()];
  }

  has(name) {
    return this.#entries.has(name);
  }

  info(name) {
    const { dtype, shape } = this.#entry(name);
    return { name, dtype, shape: [...shape], byteLength: elementCount(shape) * DTYPE_BYTES[dtype] };
  }

  readFloat32(name, target) {
    return this.#read(name, target, Float32Array, 'a Float32Array', convertToFloat32);
  }

  readFloat16(name, target) {
    return this.#read(name, target, Uint16Array, 'a Uint16Array', convertToFloat16);
  }

  /**
   * The matrix as Q8_0 rows of [out, in] into `target` (a Uint8Array of q8Bytes(elements)): a
   * GGUF Q8_0 tensor's own blocks, bit for bit, or any float tensor quantised (q8.js). `layout`:
   * { inFeatures, outFeatures, transposed } as the core states the weight.
   */
  readQ8_0(name, target, layout) {
    const entry = this.#entry(name);
    if (this.#released) {
      throw attnlensError('invalid_argument', name, 'the checkpoint files were released');
    }
    const bytes = q8Bytes(layout.inFeatures * layout.outFeatures);
    if (!(target instanceof Uint8Array) || target.length !== bytes) {
      throw attnlensError(
        'invalid_argument',
        'target',
        `expected a Uint8Array of length ${bytes} for '${name}', got ${describe(target)}`,
      );
    }
    if (entry.q8_0) {
      const blocks = typeof entry.q8_0 === 'function' ? entry.q8_0() : entry.q8_0;
      if (blocks.byteLength !== bytes) {
        throw attnlensError(
          'shape_mismatch',
          name,
          `holds ${blocks.byteLength} bytes of Q8_0 blocks, not the ${bytes} of its shape`,
          { tensor: name },
        );
      }
      target.set(blocks);
      return target;
    }
    quantizeQ8_0(this.readFloat32(name), layout, target, name);
    return target;
  }

  /**
   * The matrix as 4-bit rows of [out, in] into `target` (a Uint8Array of q4Bytes(elements),
   * q4.js): a GGUF Q4_0 or Q4_K tensor's blocks, values unchanged, or any other tensor quantised
   * to Q4_0. `layout` as readQ8_0's.
   */
  readQ4(name, target, layout) {
    const entry = this.#entry(name);
    if (this.#released) {
      throw attnlensError('invalid_argument', name, 'the checkpoint files were released');
    }
    const bytes = q4Bytes(layout.inFeatures * layout.outFeatures);
    if (!(target instanceof Uint8Array) || target.length !== bytes) {
      throw attnlensError(
        'invalid_argument',
        'target',
        `expected a Uint8Array of length ${bytes} for '${name}', got ${describe(target)}`,
      );
    }
    if (entry.q4) {
      const { type, blocks: own } = entry.q4;
      const blocks = typeof own === 'function' ? own() : own;
      const ggml = Object.values(GGML_TYPES).find((t) => t.name === type);
      const expected = tensorBytes(ggml, layout.inFeatures * layout.outFeatures);
      if (blocks.byteLength !== expected) {
        throw attnlensError(
          'shape_mismatch',
          name,
          `holds ${blocks.byteLength} bytes of ${type} blocks, not the ${expected} of its shape`,
          { tensor: name },
        );
      }
      return q4FromGguf(blocks, type, target);
    }
    quantizeQ4_0(this.readFloat32(name), layout, target, name);
    return target;
  }

  /** Drops every file buffer; reading afterwards is an error. */
  release() {
    this.#released = true;
    this.#entries = new Map(
      [...this.#entries].map(([name, e]) => [name, { ...e, bytes: null, q8_0: null, q4: null }]),
    );
  }

  #entry(name) {
    const entry = typeof name === 'string' ? this.#entries.get(name) : undefined;
    if (!entry) {
      const shown = typeof name === 'string' ? `'${name}'` : describe(name);
      throw attnlensError('invalid_argument', 'name', `no tensor ${shown} in this checkpoint`, {
        tensor: name,
      });
    }
    return entry;
  }

  #read(name, target, Type, typeName, convert) {
    const entry = this.#entry(name);
    if (this.#released) {
      throw attnlensError('invalid_argument', name, 'the checkpoint files were released');
    }
    if (!FLOAT_DTYPES.has(entry.dtype)) {
      throw attnlensError(
        'invalid_argument',
        name,
        `dtype ${entry.dtype} is not a float type (F32, F16, BF16, F64)`,
        { tensor: name },
      );
    }
    const count = elementCount(entry.shape);
    if (target === undefined) target = new Type(count);
    else if (!(target instanceof Type) || target.length !== count) {
      throw attnlensError(
        'invalid_argument',
        'target',
        `expected ${typeName} of length ${count} for '${name}', got ${describe(target)}` +
          (ArrayBuffer.isView(target) ? ` of length ${target.length}` : ''),
      );
    }
    gather(entry, target, convert);
    return target;
  }
}

// Copies the elements of a (possibly strided) entry into `out` in row-major order, one
// contiguous run of the innermost dimensions at a time.
function gather(entry, out, convert) {
  const { dtype, shape, name } = entry;
  const size = DTYPE_BYTES[dtype];
  const count = elementCount(shape);
  const strides = entry.strides ?? contiguousStrides(shape);
  const offset = entry.offset ?? 0;
  if (count === 0) return;
  const bytes = typeof entry.bytes === 'function' ? entry.bytes() : entry.bytes;
  // The innermost dimensions that are laid out contiguously form one run.
  let run = 1;
  let inner = shape.length;
  while (inner > 0 && (shape[inner - 1] === 1 || strides[inner - 1] === run)) {
    run *= shape[inner - 1];
    inner--;
  }
  const index = new Array(inner).fill(0);
  for (let at = 0; at < count; at += run) {
    let element = offset;
    for (let d = 0; d < inner; d++) element += index[d] * strides[d];
    convert(bytes.subarray(element * size, (element + run) * size), dtype, out, at, name);
    for (let d = inner - 1; d >= 0; d--) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
}

/** A TensorSet over validated entries (a Map by name, or an array of entries). */
export function createTensorSet(entries) {
  const map = entries instanceof Map ? entries : new Map(entries.map((e) => [e.name, e]));
  return new TensorSet(map);
}
