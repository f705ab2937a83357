// One uniform struct, described once: the WGSL declaration and the JS packing come from the same
// field list, so the two layouts cannot drift apart.
//
// Every field is a 4-byte scalar (u32, or f32 when written 'name:f32'), so WGSL lays them out
// one after another; the struct's size is rounded up to 16 bytes as uniform buffers require.

/**
 * @param {string} name the WGSL struct name
 * @param {string[]} fields 'name' (u32) or 'name:f32'
 */
export function defineUniforms(name, fields) {
  const layout = fields.map((field, index) => {
    const [fieldName, type = 'u32'] = field.split(':');
    return { name: fieldName, type, offset: index * 4 };
  });
  const byteLength = Math.ceil((layout.length * 4) / 16) * 16;
  const wgsl = `struct ${name} {\n${layout.map((f) => `  ${f.name}: ${f.type},`).join('\n')}\n}\n`;

  /** An ArrayBuffer holding `values` (every field must be given). */
  function pack(values) {
    const buffer = new ArrayBuffer(byteLength);
    const view = new DataView(buffer);
    for (const { name: fieldName, type, offset } of layout) {
      const value = values[fieldName];
      if (typeof value !== 'number' || Number.isNaN(value)) {
        throw new Error(`${name}.${fieldName}: expected a number, got ${value}`);
      }
      if (type === 'f32') {
        view.setFloat32(offset, value, true);
      } else {
        if (!Number.isInteger(value) || value < 0 || value > 0xffffffff) {
          throw new Error(`${name}.${fieldName}: ${value} does not fit in a u32`);
        }
        view.setUint32(offset, value, true);
      }
    }
    return buffer;
  }

  return { name, wgsl, byteLength, pack };
}
