// WebGPU's flag values, fixed by the specification. The backend uses these rather than the
// GPUBufferUsage / GPUMapMode globals, which Node's `webgpu` package leaves the caller to install.

export const BufferUsage = Object.freeze({
  MAP_READ: 0x1,
  COPY_SRC: 0x4,
  COPY_DST: 0x8,
  UNIFORM: 0x40,
  STORAGE: 0x80,
});
export const MapMode = Object.freeze({ READ: 0x1 });
