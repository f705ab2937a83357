// ggml's tensor types as GGUF stores them, and the dequantisation of the block types attnlens
// reads, each exactly as ggml's reference dequantize_row_* (ggml-quants.c) computes it in
// float32: every product and difference rounded to float32 (Math.fround) in ggml's order, so the
// values are bit for bit the ones llama.cpp's reference gives. The model then holds them in its
// f32 (or, with dtype 'f16', half) storage; under dtype 'q8' a Q8_0 tensor's blocks and under
// 'q4' a Q4_0 or Q4_K tensor's (q8.js, q4.js) stay as they are in wasm memory instead.
//
// Block layouts (QK_K = 256 values per super-block):
//   Q8_0  34 bytes / 32:  half d, int8 q[32]                     x = q * d
//   Q4_0  18 bytes / 32:  half d, uint8 qs[16]                   x = ((nibble) - 8) * d, low
//                         nibbles the first 16 values, high nibbles the last 16
//   Q4_K 144 bytes / 256: half d, half dmin, uint8 scales[12], uint8 qs[128]: 8 sub-blocks of
//                         32 with 6-bit scale and min (get_scale_min_k4), x = d*sc*q - dmin*m
//   Q5_K 176 bytes / 256: Q4_K's, plus uint8 qh[32] (the fifth bit) before qs
//   Q6_K 210 bytes / 256: uint8 ql[128] (low 4 bits), uint8 qh[64] (high 2 bits), int8
//                         scales[16], half d; x = d * scale * (q - 32)

// ggml's type ids (ggml.h's enum ggml_type). `read`: the types attnlens converts; the rest are
// named so a file holding one is refused by its name.
const TABLE = [
  [0, 'F32', 1, 4, true],
  [1, 'F16', 1, 2, true],
  [2, 'Q4_0', 32, 18, true],
  [3, 'Q4_1', 32, 20],
  [6, 'Q5_0', 32, 22],
  [7, 'Q5_1', 32, 24],
  [8, 'Q8_0', 32, 34, true],
  [9, 'Q8_1', 32, 36],
  [10, 'Q2_K', 256, 84],
  [11, 'Q3_K', 256, 110],
  [12, 'Q4_K', 256, 144, true],
  [13, 'Q5_K', 256, 176, true],
  [14, 'Q6_K', 256, 210, true],
  [15, 'Q8_K', 256, 292],
  [16, 'IQ2_XXS', 256, 66],
  [17, 'IQ2_XS', 256, 74],
  [18, 'IQ3_XXS', 256, 98],
  [19, 'IQ1_S', 256, 50],
  [20, 'IQ4_NL', 32, 18],
  [21, 'IQ3_S', 256, 110],
  [22, 'IQ2_S', 256, 82],
  [23, 'IQ4_XS', 256, 136],
  [24, 'I8', 1, 1],
  [25, 'I16', 1, 2],
  [26, 'I32', 1, 4],
  [27, 'I64', 1, 8],
  [28, 'F64', 1, 8],
  [29, 'IQ1_M', 256, 56],
  [30, 'BF16', 1, 2, true],
  [34, 'TQ1_0', 256, 54],
  [35, 'TQ2_0', 256, 66],
  [39, 'MXFP4', 32, 17],
];

/** ggml type id -> { id, name, block (values per block), bytes (per block), read }. */
export const GGML_TYPES = Object.freeze(
  Object.fromEntries(
    TABLE.map(([id, name, block, bytes, read = false]) => [
      id,
      Object.freeze({ id, name, block, bytes, read }),
    ]),
  ),
);

/** The types attnlens reads, by name. */
export const GGUF_READ_TYPES = Object.freeze(TABLE.filter((row) => row[4]).map((row) => row[1]));

/** Bytes of `count` values of `type` (count a multiple of its block). */
export const tensorBytes = (type, count) => (count / type.block) * type.bytes;

const f = Math.fround;

let halves = null;
// float32 value of every half bit pattern (ggml's GGML_FP16_TO_FP32).
function halfTable() {
  if (halves) return halves;
  halves = new Float32Array(65536);
  for (let h = 0; h < 65536; h++) {
    const sign = h & 0x8000 ? -1 : 1;
    const exponent = (h >>> 10) & 0x1f;
    const mantissa = h & 0x3ff;
    if (exponent === 0) halves[h] = sign * mantissa * 2 ** -24;
    else if (exponent === 31) halves[h] = mantissa ? NaN : sign * Infinity;
    else halves[h] = sign * (1 + mantissa / 1024) * 2 ** (exponent - 15);
  }
  return halves;
}

function dequantizeQ8_0(bytes, out, blocks, half) {
  for (let b = 0; b < blocks; b++) {
    const at = b * 34;
    const d = half[bytes[at] | (bytes[at + 1] << 8)];
    for (let j = 0; j < 32; j++) out[b * 32 + j] = f(((bytes[at + 2 + j] << 24) >> 24) * d);
  }
}

function dequantizeQ4_0(bytes, out, blocks, half) {
  for (let b = 0; b < blocks; b++) {
    const at = b * 18;
    const d = half[bytes[at] | (bytes[at + 1] << 8)];
    for (let j = 0; j < 16; j++) {
      const q = bytes[at + 2 + j];
      out[b * 32 + j] = f(((q & 0x0f) - 8) * d);
      out[b * 32 + j + 16] = f(((q >> 4) - 8) * d);
    }
  }
}

/** ggml's GGML_FP16_TO_FP32: the float32 value of half bits. */
export const halfToFloat = (bits) => halfTable()[bits];

/** ggml's get_scale_min_k4: sub-block j's 6-bit scale and min from the 12 packed bytes at `s`. */
export function scaleMinK4(bytes, s, j) {
  if (j < 4) return [bytes[s + j] & 63, bytes[s + j + 4] & 63];
  return [
    (bytes[s + j + 4] & 0x0f) | ((bytes[s + j - 4] >> 6) << 4),
    (bytes[s + j + 4] >> 4) | ((bytes[s + j] >> 6) << 4),
  ];
}

// Q4_K and Q5_K (Q5_K with the fifth bits at `qh`, 32 bytes before qs).
function dequantizeK45(bytes, out, blocks, half, five) {
  const size = five ? 176 : 144;
  for (let b = 0; b < blocks; b++) {
    const at = b * size;
    const d = half[bytes[at] | (bytes[at + 1] << 8)];
    const min = half[bytes[at + 2] | (bytes[at + 3] << 8)];
    const scales = at + 4;
    const qh = at + 16;
    let qs = at + (five ? 48 : 16);
    let y = b * 256;
    for (let j = 0, sub = 0; j < 256; j += 64, sub += 2) {
      const [sc1, m1] = scaleMinK4(bytes, scales, sub);
      const [sc2, m2] = scaleMinK4(bytes, scales, sub + 1);
      const d1 = f(d * sc1);
      const min1 = f(min * m1);
      const d2 = f(d * sc2);
      const min2 = f(min * m2);
      const bit1 = 1 << sub;
      const bit2 = 2 << sub;
      for (let l = 0; l < 32; l++) {
        const high = five && bytes[qh + l] & bit1 ? 16 : 0;
        out[y++] = f(f(d1 * ((bytes[qs + l] & 0x0f) + high)) - min1);
      }
      for (let l = 0; l < 32; l++) {
        const high = five && bytes[qh + l] & bit2 ? 16 : 0;
        out[y++] = f(f(d2 * ((bytes[qs + l] >> 4) + high)) - min2);
      }
      qs += 32;
    }
  }
}

function dequantizeQ6_K(bytes, out, blocks, half) {
  for (let b = 0; b < blocks; b++) {
    const at = b * 210;
    const d = half[bytes[at + 208] | (bytes[at + 209] << 8)];
    let ql = at;
    let qh = at + 128;
    let sc = at + 192;
    let y = b * 256;
    for (let n = 0; n < 256; n += 128) {
      for (let l = 0; l < 32; l++) {
        const is = l >> 4;
        const h = bytes[qh + l];
        const q1 = ((bytes[ql + l] & 0x0f) | ((h & 3) << 4)) - 32;
        const q2 = ((bytes[ql + l + 32] & 0x0f) | (((h >> 2) & 3) << 4)) - 32;
        const q3 = ((bytes[ql + l] >> 4) | (((h >> 4) & 3) << 4)) - 32;
        const q4 = ((bytes[ql + l + 32] >> 4) | (((h >> 6) & 3) << 4)) - 32;
        const scale = (k) => (bytes[sc + is + k] << 24) >> 24;
        out[y + l] = f(f(d * scale(0)) * q1);
        out[y + l + 32] = f(f(d * scale(2)) * q2);
        out[y + l + 64] = f(f(d * scale(4)) * q3);
        out[y + l + 96] = f(f(d * scale(6)) * q4);
      }
      y += 128;
      ql += 64;
      qh += 32;
      sc += 8;
    }
  }
}

const DEQUANTIZE = {
  Q8_0: dequantizeQ8_0,
  Q4_0: dequantizeQ4_0,
  Q4_K: (bytes, out, blocks, half) => dequantizeK45(bytes, out, blocks, half, false),
  Q5_K: (bytes, out, blocks, half) => dequantizeK45(bytes, out, blocks, half, true),
  Q6_K: dequantizeQ6_K,
};

/** Is `name` a block type dequantiseQuantized reads? */
export const isQuantized = (name) => Object.hasOwn(DEQUANTIZE, name);

/**
 * The float32 values of `count` values of the block type `typeName` in `bytes` (exactly the
 * tensor's bytes). A block scale that is not finite gives values that are not finite: the core
 * refuses those when the model is finalised, naming the tensor, as for every other format.
 */
export function dequantize(bytes, typeName, count) {
  const out = new Float32Array(count);
  const type = Object.values(GGML_TYPES).find((t) => t.name === typeName);
  DEQUANTIZE[typeName](bytes, out, count / type.block, halfTable());
  return out;
}
