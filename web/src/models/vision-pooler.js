// A vision model's pooled output, as the transformers library's models give it: ViTModel's
// pooler (dense + tanh over the class token of the last hidden state, where the checkpoint
// has pooler.dense.*: DINO's facebook/dino-vits16; ViTForImageClassification has none), and
// Dinov2Model's pooler_output, the class token after the final layernorm. The pooler is one
// hidden x hidden matrix, kept in JS in float32 and applied to one row per run.
import { attnlensError } from '../errors.js';
import { shapeMismatch } from './core-model.js';

const PREFIXES = ['', 'vit.'];

/**
 * ViT's pooler from the checkpoint (read before its tensors are let go), or null without one.
 * @returns {{ weight: Float32Array, bias: Float32Array } | null} weight [hidden, hidden] (out,
 *   in), as nn.Linear stores it
 */
export function readPooler(tensors, hidden) {
  const prefix = PREFIXES.find((p) => tensors.has(`${p}pooler.dense.weight`));
  if (prefix === undefined) return null;
  const read = (name, shape) => {
    const key = `${prefix}pooler.dense.${name}`;
    const actual = tensors.info(key).shape;
    if (actual.length !== shape.length || actual.some((d, i) => d !== shape[i])) {
      throw shapeMismatch(key, actual, shape);
    }
    const values = new Float32Array(shape.reduce((a, b) => a * b, 1));
    tensors.readFloat32(key, values);
    const bad = values.findIndex((v) => !Number.isFinite(v));
    if (bad >= 0) {
      throw attnlensError('invalid_argument', key, `holds ${values[bad]} at element ${bad}`);
    }
    return values;
  };
  return { weight: read('weight', [hidden, hidden]), bias: read('bias', [hidden]) };
}

/** tanh(weight x + bias) over the class token's row `x` (accumulated in double). */
export function poolClassToken({ weight, bias }, x) {
  const hidden = bias.length;
  const out = new Float32Array(hidden);
  for (let o = 0; o < hidden; o++) {
    let sum = bias[o];
    const row = o * hidden;
    for (let i = 0; i < hidden; i++) sum += weight[row + i] * x[i];
    out[o] = Math.tanh(sum);
  }
  return out;
}
