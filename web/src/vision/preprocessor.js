// A checkpoint's preprocessor_config.json, read as the transformers library's image processors
// read it, and an image turned into the model's pixel_values exactly as they would: resize
// (Pillow's filters, resample.js) to `size`, centre crop to `crop_size` (zero padding where the
// image is smaller), rescale by `rescale_factor` and normalise by `image_mean` / `image_std`,
// channels first, float32.
//
// Processors: ViTImageProcessor (ViT, DeiT as ViT, DINO v1; the older ViTFeatureExtractor files
// too), DeiTImageProcessor and BitImageProcessor (DINOv2). A key a file leaves out takes that
// processor's default, as the library does; an integer `size` means a square for ViT and DeiT and
// the shortest edge for Bit (get_size_dict's default_to_square).

import { describe } from '../errors.js';
import { rangeError, typeError } from '../argument-checks.js';
import { MAX_IMAGE_SIDE } from './image-input.js';
import { PIL_FILTERS, resizeWindow } from './resample.js';

/** The largest side a preprocessor may resize or crop to (a model's input is far smaller). */
export const MAX_MODEL_IMAGE_SIDE = 4096;

const IMAGENET_STANDARD = [0.5, 0.5, 0.5];
const OPENAI_CLIP_MEAN = [0.48145466, 0.4578275, 0.40821073];
const OPENAI_CLIP_STD = [0.26862954, 0.26130258, 0.27577711];

const VIT = {
  squareSize: true,
  crops: false,
  defaults: {
    do_resize: true,
    size: { height: 224, width: 224 },
    resample: 2,
    do_rescale: true,
    rescale_factor: 1 / 255,
    do_normalize: true,
    image_mean: IMAGENET_STANDARD,
    image_std: IMAGENET_STANDARD,
  },
};
const DEIT = {
  squareSize: true,
  crops: true,
  defaults: {
    ...VIT.defaults,
    size: { height: 256, width: 256 },
    resample: 3,
    do_center_crop: true,
    crop_size: { height: 224, width: 224 },
  },
};
const BIT = {
  squareSize: false,
  crops: true,
  defaults: {
    ...DEIT.defaults,
    size: { shortest_edge: 224 },
    image_mean: OPENAI_CLIP_MEAN,
    image_std: OPENAI_CLIP_STD,
  },
};

/** Processor class names (image_processor_type, or feature_extractor_type in older files). */
export const IMAGE_PROCESSORS = {
  ViTImageProcessor: VIT,
  ViTFeatureExtractor: VIT,
  DeiTImageProcessor: DEIT,
  DeiTFeatureExtractor: DEIT,
  BitImageProcessor: BIT,
};

/**
 * The steps a preprocessor_config.json (parsed JSON) asks for, checked: { processor, resize:
 * { height, width } | { shortestEdge } | null, filter, crop: { height, width } | null,
 * rescale: number | null, mean, std: [3] | null }. `fallbackProcessor` names the class when
 * the file names none.
 */
export function imageProcessor(config, fallbackProcessor, name = 'preprocessor_config.json') {
  if (config === null || typeof config !== 'object' || Array.isArray(config)) {
    throw typeError(name, `must be a JSON object, got ${describe(config)}`);
  }
  const processor =
    own(config, 'image_processor_type') ??
    own(config, 'feature_extractor_type') ??
    fallbackProcessor;
  const kind = Object.hasOwn(IMAGE_PROCESSORS, processor) ? IMAGE_PROCESSORS[processor] : null;
  if (!kind) {
    throw typeError(
      `${name}: image_processor_type`,
      `${describe(processor)} is not a processor attnlens reads ` +
        `(known: ${Object.keys(IMAGE_PROCESSORS).join(', ')})`,
    );
  }
  const value = (key) => own(config, key) ?? kind.defaults[key];
  const flag = (key) => {
    const v = value(key);
    if (typeof v !== 'boolean')
      throw typeError(`${name}: ${key}`, `must be true or false, got ${describe(v)}`);
    return v;
  };
  const plan = {
    processor,
    resize: null,
    filter: null,
    crop: null,
    rescale: null,
    mean: null,
    std: null,
  };
  if (flag('do_resize')) {
    plan.resize = sizeOf(value('size'), kind.squareSize, `${name}: size`);
    plan.filter = filterOf(value('resample'), `${name}: resample`);
  }
  if (kind.crops && flag('do_center_crop')) {
    plan.crop = sizeOf(value('crop_size'), true, `${name}: crop_size`);
    if (!('height' in plan.crop))
      throw typeError(`${name}: crop_size`, 'must give height and width');
  }
  if (flag('do_rescale')) plan.rescale = finite(value('rescale_factor'), `${name}: rescale_factor`);
  if (flag('do_normalize')) {
    plan.mean = triple(value('image_mean'), `${name}: image_mean`, false);
    plan.std = triple(value('image_std'), `${name}: image_std`, true);
  }
  return Object.freeze(plan);
}

function own(object, key) {
  return Object.hasOwn(object, key) ? object[key] : undefined;
}

function side(value, name) {
  if (
    typeof value !== 'number' ||
    !Number.isInteger(value) ||
    value < 1 ||
    value > MAX_MODEL_IMAGE_SIDE
  ) {
    throw rangeError(
      name,
      `must be an integer from 1 to ${MAX_MODEL_IMAGE_SIDE}, got ${describe(value)}`,
    );
  }
  return value;
}

// get_size_dict: an integer, a [height, width] pair, or { height, width } / { shortest_edge }.
function sizeOf(size, square, name) {
  if (typeof size === 'number') {
    return square
      ? { height: side(size, name), width: side(size, name) }
      : { shortestEdge: side(size, name) };
  }
  if (Array.isArray(size) && size.length === 2) {
    return { height: side(size[0], `${name}[0]`), width: side(size[1], `${name}[1]`) };
  }
  if (size !== null && typeof size === 'object') {
    const keys = Object.keys(size).sort().join(',');
    if (keys === 'height,width') {
      return {
        height: side(size.height, `${name}.height`),
        width: side(size.width, `${name}.width`),
      };
    }
    if (keys === 'shortest_edge')
      return { shortestEdge: side(size.shortest_edge, `${name}.shortest_edge`) };
  }
  throw typeError(
    name,
    `must be an integer, [height, width], { height, width } or { shortest_edge }, ` +
      `got ${JSON.stringify(size)}`,
  );
}

function filterOf(code, name) {
  if (!Object.hasOwn(PIL_FILTERS, code)) {
    const known = Object.entries(PIL_FILTERS).map(([c, f]) => `${c} (${f.name})`);
    throw rangeError(
      name,
      `${describe(code)} is not a filter attnlens resizes with (known: ${known.join(', ')})`,
    );
  }
  return PIL_FILTERS[code];
}

function finite(value, name) {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw typeError(name, `must be a finite number, got ${describe(value)}`);
  }
  return value;
}

function triple(values, name, nonZero) {
  if (!Array.isArray(values) || values.length !== 3) {
    throw typeError(name, `must be 3 numbers (R, G, B), got ${JSON.stringify(values)}`);
  }
  return values.map((v, i) => {
    finite(v, `${name}[${i}]`);
    if (nonZero && v === 0) throw rangeError(`${name}[${i}]`, 'must not be 0 (it divides)');
    return v;
  });
}

/**
 * The height and width `resize` gives an image of height x width: transformers'
 * get_resize_output_image_size, whose long side is int(short * long / shortest_edge).
 */
export function resizedSize(resize, height, width, name = 'image') {
  if ('height' in resize) return { height: resize.height, width: resize.width };
  const edge = resize.shortestEdge;
  const long = Math.trunc((edge * Math.max(height, width)) / Math.min(height, width));
  // A sliver (16384 x 1) would grow without bound: refused, as the input's own size is.
  if (long > MAX_IMAGE_SIDE) {
    throw rangeError(
      name,
      `is ${width} x ${height} pixels: its shortest edge resized to ${edge} makes the other ` +
        `${long} pixels, over the limit of ${MAX_IMAGE_SIDE}`,
    );
  }
  return width <= height ? { height: long, width: edge } : { height: edge, width: long };
}

/**
 * Where `plan` takes an image of height x width: { height, width } of the pixel values,
 * `resized` { height, width } and `crop` { top, left } (where the crop starts in the resized
 * image; negative where it pads).
 */
export function preprocessLayout(plan, height, width, name = 'image') {
  const resized = plan.resize ? resizedSize(plan.resize, height, width, name) : { height, width };
  if (!plan.crop) return { ...resized, resized, crop: { top: 0, left: 0 } };
  return {
    ...plan.crop,
    resized,
    crop: {
      top: Math.floor((resized.height - plan.crop.height) / 2),
      left: Math.floor((resized.width - plan.crop.width) / 2),
    },
  };
}

/**
 * `image` ({ data: RGB bytes, width, height } or RGBA with `channels: 4`, image-input.js) through
 * `plan`: { pixelValues: Float32Array [3, height, width], height, width, resized, crop }
 * (preprocessLayout()).
 */
export function preprocessImage(image, plan, name = 'image') {
  const layout = preprocessLayout(plan, image.height, image.width, name);
  const pixelValues = new Float32Array(3 * layout.height * layout.width);
  writePixelValues(image, plan, layout, pixelValues);
  return { pixelValues, ...layout };
}

/**
 * Writes `image`'s pixel values as `layout` (preprocessLayout()) places them into `out`
 * (Float32Array [3, layout.height, layout.width], e.g. a view of wasm memory): only the resized
 * pixels the crop keeps are computed (resample.js resizeWindow), then rescaled and normalised
 * through a table of the 256 byte values, channels first.
 */
export function writePixelValues(image, plan, layout, out) {
  const { height, width, resized, crop } = layout;
  // The crop's window inside the resized image (transformers' center_crop pads with zeros
  // where the crop is larger: those pixels are the value of a 0 byte).
  const top = Math.max(crop.top, 0);
  const left = Math.max(crop.left, 0);
  const window = {
    top,
    left,
    height: Math.min(crop.top + height, resized.height) - top,
    width: Math.min(crop.left + width, resized.width) - left,
  };
  const bytes = resizeWindow(
    image.data,
    { width: image.width, height: image.height, channels: image.channels ?? 3 },
    { ...resized, filter: plan.filter, window },
  );
  const table = valueTable(plan);
  const plane = height * width;
  const padded = window.height !== height || window.width !== width;
  for (let c = 0; c < 3; c++) {
    const values = table.subarray(c * 256, c * 256 + 256);
    const at = c * plane;
    if (padded) out.fill(values[0], at, at + plane);
    for (let y = 0; y < window.height; y++) {
      let to = at + (top - crop.top + y) * width + (left - crop.left);
      for (let i = y * window.width * 3 + c, end = i + window.width * 3; i < end; i += 3) {
        out[to++] = values[bytes[i]];
      }
    }
  }
}

// Each channel's pixel value of each byte, in numpy's order and roundings: x * factor in
// float64 stored as float32, then (x - mean) / std in float32.
const valueTables = new WeakMap();
function valueTable(plan) {
  let table = valueTables.get(plan);
  if (table) return table;
  table = new Float32Array(3 * 256);
  for (let c = 0; c < 3; c++) {
    const mean = plan.mean ? Math.fround(plan.mean[c]) : 0;
    const std = plan.std ? Math.fround(plan.std[c]) : 1;
    for (let x = 0; x < 256; x++) {
      let v = plan.rescale === null ? x : Math.fround(x * plan.rescale);
      if (plan.mean) v = Math.fround(Math.fround(v - mean) / std);
      table[c * 256 + x] = v;
    }
  }
  valueTables.set(plan, table);
  return table;
}
