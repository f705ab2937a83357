// The images model.run() takes, read into 8-bit RGB pixels with their size checked against a
// pixel budget, so that no image, whatever it claims, can make attnlens allocate without bound.
//
//   - raw pixels `{ data, width, height }`: RGBA bytes (Uint8Array or Uint8ClampedArray, 4 a
//     pixel, rows top to bottom), which an ImageData also is; the only kind in Node;
//   - in browsers and workers: ImageBitmap, HTMLImageElement, HTMLCanvasElement, OffscreenCanvas,
//     HTMLVideoElement (its current frame), drawn onto a canvas and read back;
//   - a Blob or File: its header is read first (image-header.js) and its claimed size checked
//     before createImageBitmap decodes it.
//
// Alpha is dropped, as Pillow's convert('RGB') does (what the transformers library's processors
// see): a transparent pixel keeps whatever colour it stores.

import { describe } from '../errors.js';
import { rangeError, shapeError, typeError } from '../argument-checks.js';
import { genuineView, typedArrayName } from '../typed-arrays.js';
import { imageHeader } from './image-header.js';

/** The longest side an image may have (browsers' canvases stop near here too). */
export const MAX_IMAGE_SIDE = 16384;
/** The most pixels an image may have: 32 Mpx, 128 MiB as RGBA. */
export const MAX_IMAGE_PIXELS = 2 ** 25;
/** The largest image file read. */
export const MAX_IMAGE_FILE_BYTES = 2 ** 27;

const DRAWABLE_CLASSES = [
  'ImageBitmap',
  'HTMLImageElement',
  'HTMLCanvasElement',
  'OffscreenCanvas',
  'HTMLVideoElement',
];

/** `image` as { data: Uint8Array of RGB bytes, width, height }; throws the errors above. */
export async function readImage(image, name = 'image') {
  const { data, width, height, channels } = await readImagePixels(image, name);
  if (channels === 3) return { data, width, height };
  const pixels = width * height;
  const rgb = new Uint8Array(pixels * 3);
  for (let i = 0; i < pixels; i++) {
    rgb[i * 3] = data[i * 4];
    rgb[i * 3 + 1] = data[i * 4 + 1];
    rgb[i * 3 + 2] = data[i * 4 + 2];
  }
  return { data: rgb, width, height };
}

/**
 * `image` as its bytes come, checked as readImage() checks them: { data, width, height,
 * channels: 4 } (RGBA, alpha to be skipped), raw pixels read in place (no copy) and a canvas's
 * own ImageData; the preprocessing reads RGBA directly (preprocessor.js), a camera frame's
 * pixels are copied nowhere else.
 */
export async function readImagePixels(image, name = 'image') {
  if (typeof Blob === 'function' && image instanceof Blob) return readImageFile(image, name);
  const drawable = DRAWABLE_CLASSES.find(
    (cls) => typeof globalThis[cls] === 'function' && image instanceof globalThis[cls],
  );
  if (drawable) return readDrawable(image, drawable, name);
  if (image !== null && typeof image === 'object' && 'data' in image)
    return readPixels(image, name);
  throw typeError(
    name,
    `must be an ImageData, ImageBitmap, HTMLImageElement, HTMLCanvasElement, Blob or File, or ` +
      `raw pixels { data: RGBA Uint8Array, width, height }; got ${describe(image)}`,
  );
}

/** Throws unless width x height is a size within the budget. */
export function checkImageSize(width, height, name) {
  for (const [value, side] of [
    [width, 'width'],
    [height, 'height'],
  ]) {
    if (typeof value !== 'number' || !Number.isInteger(value)) {
      throw typeError(`${name}.${side}`, `must be an integer, got ${describe(value)}`);
    }
    if (value < 1) throw rangeError(`${name}.${side}`, `is ${value}: an image needs pixels`);
    if (value > MAX_IMAGE_SIDE) {
      throw rangeError(
        `${name}.${side}`,
        `is ${value}, over the limit of ${MAX_IMAGE_SIDE} pixels`,
      );
    }
  }
  if (width * height > MAX_IMAGE_PIXELS) {
    throw rangeError(
      name,
      `is ${width} x ${height} pixels, over the limit of ${MAX_IMAGE_PIXELS} pixels ` +
        `(${MAX_IMAGE_PIXELS / 2 ** 20} Mpx): scale it down first`,
    );
  }
}

function readPixels(image, name) {
  const { data, width, height } = image;
  checkImageSize(width, height, name);
  const type = typedArrayName(data);
  if (type !== 'Uint8Array' && type !== 'Uint8ClampedArray') {
    throw typeError(
      `${name}.data`,
      `must be RGBA bytes (a Uint8ClampedArray or Uint8Array), got ${describe(data)}`,
    );
  }
  const rgba = genuineView(data, type === 'Uint8Array' ? Uint8Array : Uint8ClampedArray);
  if (rgba === null) throw typeError(`${name}.data`, 'has a detached (transferred) ArrayBuffer');
  const pixels = width * height;
  if (rgba.length !== pixels * 4) {
    const perPixel = rgba.length / pixels;
    const hint = { 1: ' (grey)', 2: ' (grey and alpha)', 3: ' (RGB)' }[perPixel] ?? '';
    throw shapeError(
      `${name}.data`,
      `has ${rgba.length} values for ${width} x ${height} pixels` +
        (Number.isInteger(perPixel) ? `, ${perPixel} a pixel${hint}` : '') +
        `; RGBA needs 4 a pixel, ${pixels * 4}`,
    );
  }
  return { data: rgba, width, height, channels: 4 };
}

function drawableSize(image, drawable) {
  if (drawable === 'HTMLImageElement') return [image.naturalWidth, image.naturalHeight];
  if (drawable === 'HTMLVideoElement') return [image.videoWidth, image.videoHeight];
  return [image.width, image.height];
}

// One canvas kept for drawing pictures to read back: a camera's frames, all of one size, need no
// new canvas each. Only a camera-sized one is kept, so a huge picture's memory is not held.
const MAX_KEPT_PIXELS = 2 ** 22;
let kept = null;
function drawingContext(width, height) {
  if (kept?.canvas.width === width && kept?.canvas.height === height) {
    kept.clearRect(0, 0, width, height);
    return kept;
  }
  const canvas =
    typeof OffscreenCanvas === 'function'
      ? new OffscreenCanvas(width, height)
      : Object.assign(document.createElement('canvas'), { width, height });
  const context = canvas.getContext('2d', { willReadFrequently: true });
  kept = width * height <= MAX_KEPT_PIXELS ? context : null;
  return context;
}

function readDrawable(image, drawable, name) {
  if (drawable === 'HTMLImageElement' && (!image.complete || image.naturalWidth === 0)) {
    throw typeError(
      name,
      'is an <img> that has not loaded (or failed to): await img.decode() first',
    );
  }
  const [width, height] = drawableSize(image, drawable);
  checkImageSize(width, height, name);
  const context = drawingContext(width, height);
  let imageData;
  try {
    context.drawImage(image, 0, 0, width, height);
    imageData = context.getImageData(0, 0, width, height);
  } catch (error) {
    throw typeError(
      name,
      `could not be read (${error?.name ?? 'error'}): a cross-origin image needs CORS ` +
        `(crossorigin="anonymous") to be read back`,
    );
  }
  return readPixels(imageData, name);
}

async function readImageFile(file, name) {
  if (file.size > MAX_IMAGE_FILE_BYTES) {
    throw rangeError(
      name,
      `is a file of ${file.size} bytes, over the limit of ${MAX_IMAGE_FILE_BYTES}`,
    );
  }
  const header = imageHeader(new Uint8Array(await file.arrayBuffer()));
  if (header === null) {
    throw typeError(name, 'is not a PNG, JPEG, GIF, WebP or BMP file (or its header is cut short)');
  }
  checkImageSize(header.width, header.height, name);
  if (typeof createImageBitmap !== 'function') {
    throw typeError(
      name,
      `is a ${header.format} file, and decoding files needs createImageBitmap (browsers and ` +
        `workers); in Node pass decoded pixels { data: RGBA Uint8Array, width, height }`,
    );
  }
  let bitmap;
  try {
    bitmap = await createImageBitmap(file);
  } catch (error) {
    throw typeError(
      name,
      `is a ${header.format} file that could not be decoded: ${error?.message ?? error}`,
    );
  }
  try {
    return readDrawable(bitmap, 'ImageBitmap', name);
  } finally {
    bitmap.close();
  }
}

/**
 * `image` as RGBA { data: Uint8ClampedArray, width, height } (alpha 255, a copy), checked and
 * read as readImage() does: pixels a canvas draws (ImageData) and model.run() takes alike.
 */
export async function readImageRgba(image, name = 'image') {
  const { data, width, height } = await readImagePixels(image, name);
  const rgba = Uint8ClampedArray.from(data);
  for (let j = 3; j < rgba.length; j += 4) rgba[j] = 255;
  return { data: rgba, width, height };
}
