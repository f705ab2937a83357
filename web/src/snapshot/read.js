// Reading a snapshot (format.js) from elsewhere: a file a page names, a file someone drops. It is
// checked before anything is drawn: the format and version, every field's type, caps on every
// size, the counts against each other (tokens x layers x heads x N^2 floats, N^2 bits a layer),
// offsets inside their texts, weights that are finite probabilities, zero where the mask hides a
// key, and rows that sum to 1 where any key is visible. Any problem is a TypeError / RangeError
// naming the field ('snapshot.tokens[3].end: ...'); nothing from the file is ever executed.

import { describe } from '../errors.js';
import {
  array,
  bool,
  fail,
  indexList,
  int,
  object,
  readRows,
  readSelected,
  ROW_SUM_TOLERANCE,
  string,
  typeFail,
} from './fields.js';
import {
  fromBase64,
  SNAPSHOT_FORMAT,
  SNAPSHOT_LIMITS,
  SNAPSHOT_VERSION,
  unpackBits,
} from './format.js';
import { readPicture } from './picture.js';

function readModel(value) {
  const model = object(value, 'model');
  const L = SNAPSHOT_LIMITS;
  return {
    id: string(model.id, 'model.id', 200, true),
    revision: string(model.revision, 'model.revision', 256, true),
    modelType: string(model.modelType, 'model.modelType', 40),
    layers: int(model.layers, 'model.layers', 1, L.layers),
    heads: int(model.heads, 'model.heads', 1, L.heads),
    causal: bool(model.causal, 'model.causal'),
  };
}

function readTokens(value, texts) {
  const list = array(value, 'tokens', SNAPSHOT_LIMITS.tokens);
  if (list.length === 0) throw fail('out_of_range', 'tokens', 'must hold at least one token');
  return list.map((raw, i) => {
    const field = `tokens[${i}]`;
    const token = object(raw, field);
    const segment = int(token.segment, `${field}.segment`, 0, texts.length - 1);
    const length = texts[segment].length;
    const start = int(token.start, `${field}.start`, 0, length);
    const end = int(token.end, `${field}.end`, start, length);
    return {
      text: string(token.text, `${field}.text`, SNAPSHOT_LIMITS.tokenText),
      start,
      end,
      special: bool(token.special, `${field}.special`),
      segment,
    };
  });
}

function readPrediction(raw, field, vocabMax = 2 ** 31) {
  const entry = object(raw, field);
  const p = entry.p;
  if (typeof p !== 'number' || !(p >= 0 && p <= 1))
    throw typeFail(`${field}.p`, 'a probability', p);
  return {
    id: int(entry.id, `${field}.id`, 0, vocabMax),
    token: string(entry.token, `${field}.token`, SNAPSHOT_LIMITS.tokenText),
    text: string(entry.text, `${field}.text`, SNAPSHOT_LIMITS.tokenText),
    // Snapshots written before predictions said so have no `partial`.
    partial: entry.partial === undefined ? false : bool(entry.partial, `${field}.partial`),
    p,
  };
}

function readPredictions(value, causal, n) {
  const list = array(value, 'predictions', SNAPSHOT_LIMITS.predictions);
  const top = (items, field) =>
    array(items, field, SNAPSHOT_LIMITS.topK).map((item, i) =>
      readPrediction(item, `${field}[${i}]`),
    );
  if (causal) return top(list, 'predictions');
  return list.map((raw, i) => {
    const entry = object(raw, `predictions[${i}]`);
    return {
      position: int(entry.position, `predictions[${i}].position`, 0, n - 1),
      top: top(entry.top, `predictions[${i}].top`),
    };
  });
}

// The weights, checked cell by cell against the visibility of their layer.
function readAttention(value, visibleValue, counts) {
  const { layers, heads, n } = counts;
  const size = n * n;
  const attention = object(value, 'attention');
  if (attention.dtype !== 'float32' || attention.encoding !== 'base64') {
    throw fail('invalid_argument', 'attention', "must be { dtype: 'float32', encoding: 'base64' }");
  }
  const bytes = fromBase64(attention.data, layers * heads * size * 4);
  if (!bytes) {
    throw fail(
      'shape_mismatch',
      'attention.data',
      `must be base64 of ${layers} x ${heads} x ${n} x ${n} float32 values`,
    );
  }
  const visibleField = object(visibleValue, 'visible');
  if (visibleField.encoding !== 'base64-bits') {
    throw fail('invalid_argument', 'visible', "must be { encoding: 'base64-bits' }");
  }
  const bits = fromBase64(visibleField.data, Math.ceil((layers * size) / 8));
  if (!bits) {
    throw fail('shape_mismatch', 'visible.data', `must be base64 of ${layers} x ${n} x ${n} bits`);
  }
  const visible = unpackBits(bits, layers * size);
  const view = new DataView(bytes.buffer);
  const weights = new Float32Array(layers * heads * size);
  for (let i = 0; i < weights.length; i++) weights[i] = view.getFloat32(i * 4, true);
  for (let a = 0; a < layers; a++) {
    for (let b = 0; b < heads; b++) {
      for (let i = 0; i < n; i++) {
        let sum = 0;
        let seen = false;
        for (let j = 0; j < n; j++) {
          const w = weights[(a * heads + b) * size + i * n + j];
          const where = `attention[${a}][${b}][${i}][${j}]`;
          if (!(w >= 0 && w <= 1))
            throw fail('out_of_range', where, `is ${w}, not a weight in [0, 1]`);
          const shown = visible[a * size + i * n + j] === 1;
          if (!shown && w !== 0)
            throw fail('out_of_range', where, 'is not 0 where the mask hides the key');
          seen ||= shown;
          sum += w;
        }
        if (seen && Math.abs(sum - 1) > ROW_SUM_TOLERANCE) {
          throw fail('out_of_range', `attention[${a}][${b}][${i}]`, `sums to ${sum}, not 1`);
        }
      }
    }
  }
  return { weights, visible };
}

// A translation's decoder side (format.js): its tokens and the cross-attention over the n
// source tokens, checked like the rest.
function readTranslation(value, model, n) {
  if (value === undefined || value === null) return null;
  const translation = object(value, 'translation');
  const L = SNAPSHOT_LIMITS;
  const decoderLayers = int(translation.decoderLayers, 'translation.decoderLayers', 1, L.layers);
  const target = array(translation.target, 'translation.target', L.tokens);
  if (target.length === 0) {
    throw fail('out_of_range', 'translation.target', 'must hold at least one token');
  }
  const tokens = target.map((raw, i) => {
    const token = object(raw, `translation.target[${i}]`);
    return {
      text: string(token.text, `translation.target[${i}].text`, L.tokenText),
      special: bool(token.special, `translation.target[${i}].special`),
    };
  });
  const layers = indexList(translation.layers, 'translation.layers', decoderLayers);
  const heads = indexList(translation.heads, 'translation.heads', model.heads);
  const blocks = layers.length * heads.length;
  if (blocks * tokens.length * n > L.weights) {
    throw fail('out_of_range', 'translation.cross', `is more than the cap of ${L.weights} weights`);
  }
  return {
    text: string(translation.text, 'translation.text', L.textLength),
    decoderLayers,
    target: tokens,
    layers,
    heads,
    cross: readRows(translation.cross, 'translation.cross', {
      blocks,
      rows: tokens.length,
      cols: n,
    }),
  };
}

// The optional rollout [N, N]: probabilities whose rows sum to 1 (each is a mix of the inputs).
function readRollout(value, n) {
  if (value === undefined || value === null) return null;
  return readRows(value, 'rollout', { blocks: 1, rows: n, cols: n });
}

/**
 * A checked snapshot from its JSON text (or the parsed value). A picture's snapshot gives
 * { version, created, model, layers, heads, selected, picture } instead (picture.js readPicture).
 * @returns {{ version, created, model, text, pair, tokens, layers, heads, n, attention, visible,
 *   masks, predictions, selected, rollout, translation }} attention: Float32Array
 *   [layers.length, heads.length, N, N]; visible: Uint8Array [layers.length, N, N]; rollout:
 *   Float32Array [N, N] or null (a snapshot written without it); translation: null, or { text,
 *   decoderLayers, target, layers, heads, cross: Float32Array [layers.length, heads.length, T, N] }
 */
export function readSnapshot(input) {
  let value = input;
  if (typeof input === 'string') {
    if (input.length > SNAPSHOT_LIMITS.bytes) {
      throw fail(
        'out_of_range',
        'file',
        `is larger than the cap of ${SNAPSHOT_LIMITS.bytes} bytes`,
      );
    }
    try {
      value = JSON.parse(input);
    } catch (error) {
      throw fail('invalid_argument', 'file', `is not JSON (${error.message})`);
    }
  }
  const root = object(value, 'file');
  if (root.format !== SNAPSHOT_FORMAT) {
    throw fail(
      'invalid_argument',
      'format',
      `must be '${SNAPSHOT_FORMAT}', got ${describe(root.format)}`,
    );
  }
  if (root.version !== SNAPSHOT_VERSION) {
    throw fail(
      'out_of_range',
      'version',
      `${describe(root.version)} is not a version this reads (${SNAPSHOT_VERSION})`,
    );
  }
  const created = string(root.created, 'created', 40);
  if (Number.isNaN(Date.parse(created))) throw typeFail('created', 'an ISO date', created);
  const model = readModel(root.model);
  // A picture's snapshot (picture.js) holds a picture and class-token maps instead of text.
  if (root.picture !== undefined) {
    return { version: root.version, created, model, ...readPicture(root, model) };
  }
  const text = string(root.text, 'text', SNAPSHOT_LIMITS.textLength);
  const pair = string(root.pair, 'pair', SNAPSHOT_LIMITS.textLength, true);
  const tokens = readTokens(root.tokens, pair === null ? [text] : [text, pair]);
  const n = tokens.length;
  const layers = indexList(root.layers, 'layers', model.layers);
  const heads = indexList(root.heads, 'heads', model.heads);
  const cells = layers.length * heads.length * n * n;
  if (cells > SNAPSHOT_LIMITS.weights) {
    throw fail(
      'out_of_range',
      'attention',
      `${cells} weights are more than the cap of ${SNAPSHOT_LIMITS.weights}`,
    );
  }
  const { weights, visible } = readAttention(root.attention, root.visible, {
    layers: layers.length,
    heads: heads.length,
    n,
  });
  const masks = object(root.masks, 'masks');
  const layerMasks = array(masks.layerMasks, 'masks.layerMasks', layers.length);
  if (layerMasks.length !== layers.length) {
    throw fail('shape_mismatch', 'masks.layerMasks', `must have one per layer (${layers.length})`);
  }
  return {
    version: root.version,
    created,
    model,
    text,
    pair,
    tokens,
    layers,
    heads,
    n,
    attention: weights,
    visible,
    masks: {
      surgery: string(masks.surgery, 'masks.surgery', 200, true),
      surgeryLayer:
        masks.surgeryLayer === null
          ? null
          : int(masks.surgeryLayer, 'masks.surgeryLayer', 0, model.layers - 1),
      layerMasks: layerMasks.map((mask, i) => string(mask, `masks.layerMasks[${i}]`, 200)),
    },
    predictions: readPredictions(root.predictions, model.causal, n),
    selected: readSelected(root.selected, model, layers, heads),
    rollout: readRollout(root.rollout, n),
    translation: readTranslation(root.translation, model, n),
  };
}

/** One decoder head of a translation's snapshot: { weights, mask } [T, N] (nothing masked). */
export function translationHead(snapshot, layer, head) {
  const { translation, n } = snapshot;
  const a = translation.layers.indexOf(layer);
  const b = translation.heads.indexOf(head);
  if (a < 0 || b < 0) return null;
  const size = translation.target.length * n;
  const at = (a * translation.heads.length + b) * size;
  return { weights: translation.cross.subarray(at, at + size), mask: new Uint8Array(size).fill(1) };
}

/** One head of a read snapshot by its model indices: { weights, mask } [N, N] views. */
export function snapshotHead(snapshot, layer, head) {
  const a = snapshot.layers.indexOf(layer);
  const b = snapshot.heads.indexOf(head);
  if (a < 0 || b < 0) return null;
  const size = snapshot.n * snapshot.n;
  const at = (a * snapshot.heads.length + b) * size;
  return {
    weights: snapshot.attention.subarray(at, at + size),
    mask: snapshot.visible.subarray(a * size, (a + 1) * size),
  };
}
