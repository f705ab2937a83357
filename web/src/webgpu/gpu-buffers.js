// GPU buffers by role ('q', 'scores', 'uniform:gemm-q', ...), kept between calls: a role's buffer
// is reused while it is large enough and replaced only when a call needs more, so repeated calls
// of one shape allocate nothing. Calls on one device run one at a time (webgpu-backend.js), so a
// role is never used by two calls at once.

import { BufferUsage } from './flags.js';

const STORAGE = BufferUsage.STORAGE | BufferUsage.COPY_DST | BufferUsage.COPY_SRC;
const UNIFORM = BufferUsage.UNIFORM | BufferUsage.COPY_DST;
const READBACK = BufferUsage.MAP_READ | BufferUsage.COPY_DST;

// Writes and copies move multiples of 4 bytes, uniform structs are multiples of 16.
const roundUp = (bytes) => Math.max(16, Math.ceil(bytes / 16) * 16);

export class GpuBuffers {
  #device;
  #byRole = new Map(); // role -> GPUBuffer

  constructor(device) {
    this.#device = device;
  }

  /** Bytes held by every role. */
  get bytes() {
    let total = 0;
    for (const buffer of this.#byRole.values()) total += buffer.size;
    return total;
  }

  /** A storage buffer (also copy source and destination) of at least `bytes`. */
  storage(role, bytes) {
    return this.#get(role, bytes, STORAGE);
  }

  /** A uniform buffer holding `data` (an ArrayBuffer from uniforms.js pack()). */
  uniform(role, data) {
    const buffer = this.#get(`uniform:${role}`, data.byteLength, UNIFORM);
    this.#device.queue.writeBuffer(buffer, 0, data);
    return buffer;
  }

  /** A storage buffer holding a copy of `array` (its byte length padded to 4). */
  upload(role, array) {
    const buffer = this.storage(role, array.byteLength);
    const bytes = new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
    if (bytes.byteLength % 4 === 0) {
      this.#device.queue.writeBuffer(buffer, 0, bytes);
    } else {
      const padded = new Uint8Array(Math.ceil(bytes.byteLength / 4) * 4);
      padded.set(bytes);
      this.#device.queue.writeBuffer(buffer, 0, padded);
    }
    return buffer;
  }

  /** A mappable buffer for copying results back. */
  readback(role, bytes) {
    return this.#get(`readback:${role}`, bytes, READBACK);
  }

  #get(role, bytes, usage) {
    const held = this.#byRole.get(role);
    if (held && held.size >= bytes) return held;
    held?.destroy();
    const buffer = this.#device.createBuffer({
      label: `attnlens ${role}`,
      size: roundUp(bytes),
      usage,
    });
    this.#byRole.set(role, buffer);
    return buffer;
  }

  /** Destroys every buffer. */
  dispose() {
    for (const buffer of this.#byRole.values()) buffer.destroy();
    this.#byRole.clear();
  }
}
