// A picture's snapshot (format.js): what a vision transformer's run showed over one picture, so
// <attn-lens snapshot> and the page's Picture mode draw its maps again with no model and no
// compute. The root holds `model`, `layers`, `heads` and `selected` as every snapshot does, and
// instead of text, tokens and the full attention, a `picture`:
//
//     "picture": {
//       "image": "data:image/jpeg;base64,...",   the picture as the model saw it (resized and
//                  centre-cropped), downscaled to at most PICTURE_LIMITS.imageSide pixels a side;
//                  PNG or JPEG only, at most PICTURE_LIMITS.imageBytes bytes once decoded
//       "input": { "width": 224, "height": 224 },   the model's input in pixels
//       "grid": { "rows": 14, "columns": 14 }, "patchSize": 16, "registers": 0,
//       "classAttention": { "dtype": "float32", "encoding": "base64", "data": "..." }
//                  little-endian float32 [layers.length, heads.length, rows * columns]: the
//                  class token's row over the patch keys (class token and registers left out,
//                  so a row sums to at most 1)
//       "rollout": { ... } | null     float32 [rows * columns]: the class token's rollout over
//                  every layer (interpret/rollout.js), over the patches
//       "labels": [{ "label": "tabby cat", "p": 0.62 }] | null   a classifier's top labels
//     }
//
// Read like any file from elsewhere: sizes, shapes, every weight, and the image's own header
// (image-header.js) against its MIME type and the caps, before anything decodes it.
import { fromBase64, SNAPSHOT_LIMITS, toBase64, float32Bytes } from './format.js';
import {
  array,
  fail,
  indexList,
  int,
  object,
  readRows,
  readSelected,
  string,
  typeFail,
} from './fields.js';
import { imageHeader } from '../vision/image-header.js';

export const PICTURE_LIMITS = Object.freeze({
  imageSide: 512, // the stored picture's longer side, in pixels
  imageBytes: 256 * 1024, // the stored picture's file (the data URL's bytes once decoded)
  inputSide: 4096, // the model's input side, in pixels
  gridSide: 256, // patches a side
  patchSize: 64,
  registers: 16,
});

const DATA_URL = /^data:image\/(png|jpeg);base64,/;
const IMAGE_MIME = { png: 'image/png', jpeg: 'image/jpeg' };

/**
 * The picture of a data URL, checked: PNG or JPEG (its header agreeing with its MIME type),
 * within the size caps. @returns {{ format, width, height }}
 */
export function checkPictureDataUrl(value, field = 'picture.image') {
  const L = PICTURE_LIMITS;
  const maxChars = 40 + 4 * Math.ceil(L.imageBytes / 3);
  string(value, field, maxChars);
  const match = DATA_URL.exec(value);
  if (!match) {
    throw fail(
      'invalid_argument',
      field,
      'must be a data URL of a PNG or JPEG (data:image/png;base64,... or data:image/jpeg;...)',
    );
  }
  const body = value.slice(match[0].length);
  const padding = body.endsWith('==') ? 2 : body.endsWith('=') ? 1 : 0;
  const bytes = body.length % 4 === 0 ? fromBase64(body, (body.length / 4) * 3 - padding) : null;
  if (!bytes) throw fail('invalid_argument', field, 'is not valid base64 after its data: prefix');
  if (bytes.length > L.imageBytes) {
    throw fail('out_of_range', field, `is ${bytes.length} bytes, over the cap of ${L.imageBytes}`);
  }
  const header = imageHeader(bytes);
  if (!header || IMAGE_MIME[header.format] !== `image/${match[1]}`) {
    throw fail('invalid_argument', field, `does not hold the ${match[1]} image its type says`);
  }
  for (const side of ['width', 'height']) {
    int(header[side], `${field}.${side}`, 1, L.imageSide);
  }
  return header;
}

// A classifier's top labels (as the run gave them, at most SNAPSHOT_LIMITS.topK), or null.
function readLabels(value) {
  if (value === null || value === undefined) return null;
  return array(value, 'picture.labels', SNAPSHOT_LIMITS.topK).map((raw, i) => {
    const field = `picture.labels[${i}]`;
    const entry = object(raw, field);
    const p = entry.p;
    if (typeof p !== 'number' || !(p >= 0 && p <= 1))
      throw typeFail(`${field}.p`, 'a probability', p);
    return { label: string(entry.label, `${field}.label`, SNAPSHOT_LIMITS.tokenText), p };
  });
}

/**
 * The picture snapshot's own fields, read from the parsed root (read.js has checked the format,
 * version, date and model). @returns {{ layers, heads, selected, picture }}, picture: { image,
 * imageWidth, imageHeight, input, grid, patchSize, registers, patches, classAttention:
 * Float32Array [layers.length, heads.length, patches], rollout: Float32Array | null, labels }
 */
export function readPicture(root, model) {
  const L = PICTURE_LIMITS;
  const picture = object(root.picture, 'picture');
  const layers = indexList(root.layers, 'layers', model.layers);
  const heads = indexList(root.heads, 'heads', model.heads);
  const input = object(picture.input, 'picture.input');
  const width = int(input.width, 'picture.input.width', 1, L.inputSide);
  const height = int(input.height, 'picture.input.height', 1, L.inputSide);
  const patchSize = int(picture.patchSize, 'picture.patchSize', 1, L.patchSize);
  const grid = object(picture.grid, 'picture.grid');
  const rows = int(grid.rows, 'picture.grid.rows', 1, L.gridSide);
  const columns = int(grid.columns, 'picture.grid.columns', 1, L.gridSide);
  // The grid the model's patch embedding cuts from its input: whole patches only.
  if (rows !== Math.floor(height / patchSize) || columns !== Math.floor(width / patchSize)) {
    throw fail(
      'shape_mismatch',
      'picture.grid',
      `${rows} x ${columns} is not the grid of ${patchSize}-pixel patches over ` +
        `${width} x ${height}`,
    );
  }
  const patches = rows * columns;
  const cells = layers.length * heads.length * patches;
  if (cells > SNAPSHOT_LIMITS.weights) {
    throw fail(
      'out_of_range',
      'picture.classAttention',
      `${cells} weights are more than the cap of ${SNAPSHOT_LIMITS.weights}`,
    );
  }
  const header = checkPictureDataUrl(picture.image);
  const blocks = layers.length * heads.length;
  return {
    layers,
    heads,
    selected: readSelected(root.selected, model, layers, heads),
    picture: {
      image: picture.image,
      imageWidth: header.width,
      imageHeight: header.height,
      input: { width, height },
      grid: { rows, columns },
      patchSize,
      registers: int(picture.registers, 'picture.registers', 0, L.registers),
      patches,
      classAttention: readRows(picture.classAttention, 'picture.classAttention', {
        blocks,
        rows: 1,
        cols: patches,
        part: true,
      }),
      rollout:
        picture.rollout === null || picture.rollout === undefined
          ? null
          : readRows(picture.rollout, 'picture.rollout', {
              blocks: 1,
              rows: 1,
              cols: patches,
              part: true,
            }),
      labels: readLabels(picture.labels),
    },
  };
}

/**
 * The `picture` field writeSnapshot() writes for a picture run (pictureRun()), keeping `layers`
 * and `heads` (model indices) of its class-token rows.
 */
export function writePicture(picture, { layers, heads, modelHeads }) {
  const { tokens, registers, grid } = picture;
  const patches = grid.rows * grid.columns;
  if (tokens !== 1 + registers + patches) {
    throw new RangeError('picture: tokens must be the class token, registers and patches');
  }
  checkPictureDataUrl(picture.image);
  const rows = new Float32Array(layers.length * heads.length * patches);
  layers.forEach((layer, a) =>
    heads.forEach((head, b) => {
      const from = ((layer * modelHeads + head) * tokens + 0) * tokens + 1 + registers;
      rows.set(picture.attention.subarray(from, from + patches), (a * heads.length + b) * patches);
    }),
  );
  const field = (values) => ({
    dtype: 'float32',
    encoding: 'base64',
    data: toBase64(float32Bytes(values)),
  });
  return {
    image: picture.image,
    input: { width: picture.input.width, height: picture.input.height },
    grid: { rows: grid.rows, columns: grid.columns },
    patchSize: picture.patchSize,
    registers,
    classAttention: field(rows),
    rollout: picture.rollout ? field(picture.rollout.subarray(1 + registers)) : null,
    labels: picture.labels ? picture.labels.map(({ label, p }) => ({ label, p })) : null,
  };
}

/**
 * The run writeSnapshot() takes for a picture: a VisionModel's run() (or the page's
 * runPicture(), with its rollout) and the picture as a data URL (pictureDataUrl()).
 * @param {object} parts
 *   model     { id, revision, modelType, layers, heads, patchSize } as Model.info has them
 *   run       { attention [layers, heads, N, N], tokens: N, registers, grid, input, labels,
 *             rollout?: Float32Array [N], the class token's rollout row }
 *   image     the data URL
 *   selected  { layer, head }
 */
export function pictureRun({ model, run, image, selected = { layer: 0, head: 0 } }) {
  return {
    model: { ...model, causal: false },
    selected,
    picture: {
      image,
      attention: run.attention,
      tokens: run.tokens,
      registers: run.registers,
      grid: run.grid,
      input: run.input,
      patchSize: model.patchSize,
      rollout: run.rollout ?? null,
      labels: run.labels ?? null,
    },
  };
}

/**
 * The picture `view` (a canvas or image, as the model saw it) as a data URL within the caps:
 * JPEG at falling quality, then smaller, until it fits. Browsers only (a canvas encodes it).
 */
export function pictureDataUrl(view) {
  const L = PICTURE_LIMITS;
  const longer = Math.max(view.width, view.height);
  let scale = Math.min(1, L.imageSide / longer);
  for (;;) {
    const canvas = document.createElement('canvas');
    canvas.width = Math.max(1, Math.round(view.width * scale));
    canvas.height = Math.max(1, Math.round(view.height * scale));
    canvas.getContext('2d').drawImage(view, 0, 0, canvas.width, canvas.height);
    for (const quality of [0.9, 0.75, 0.6]) {
      const url = canvas.toDataURL('image/jpeg', quality);
      const bytes = Math.floor(((url.length - url.indexOf(',') - 1) * 3) / 4);
      if (url.startsWith('data:image/jpeg;') && bytes <= L.imageBytes) return url;
    }
    if (canvas.width <= 16 && canvas.height <= 16) {
      throw new RangeError('picture: could not encode the picture within the snapshot cap');
    }
    scale /= 2;
  }
}
