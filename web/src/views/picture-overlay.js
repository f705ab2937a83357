// Drawing a picture's attention (the page's Picture mode, <attn-lens image> and picture
// snapshots): the picture as the model saw it (resized, then centre-cropped, as run().input
// says) with a map of one weight per patch over it. The overlay darkens where the map is low and
// tints where it is high, so the picture stays readable under any opacity.

import { readImageRgba } from '../vision/image-input.js';

/** A canvas holding RGBA pixels { data, width, height }, to draw from. */
export function pictureCanvas({ data, width, height }) {
  const canvas = document.createElement('canvas');
  canvas.width = width;
  canvas.height = height;
  canvas.getContext('2d').putImageData(new ImageData(data, width, height), 0, 0);
  return canvas;
}

/** The picture cut and scaled as the model's input: a canvas of input.width x input.height. */
export function modelView(source, input) {
  const canvas = document.createElement('canvas');
  canvas.width = input.width;
  canvas.height = input.height;
  const context = canvas.getContext('2d');
  context.drawImage(
    source,
    -input.crop.left,
    -input.crop.top,
    input.resized.width,
    input.resized.height,
  );
  return canvas;
}

/**
 * Draws `view` (modelView's canvas) onto `canvas` with `map` over it.
 * @param {Float32Array} map one weight per patch, row by row
 * @param {{ rows: number, columns: number }} grid
 * @param {number} patchSize in input pixels
 * @param {number} opacity 0..1: how strongly the map covers the picture
 * @param {number} focus a patch to outline (-1: none)
 */
export function drawOverlay(canvas, view, map, { grid, patchSize, opacity, focus = -1 }) {
  const context = canvas.getContext('2d');
  const scale = canvas.width / view.width;
  context.imageSmoothingEnabled = true;
  context.drawImage(view, 0, 0, canvas.width, canvas.height);
  let max = 0;
  for (const v of map) max = Math.max(max, v);
  const side = patchSize * scale;
  for (let p = 0; p < map.length; p++) {
    const share = max > 0 ? map[p] / max : 0;
    const x = (p % grid.columns) * side;
    const y = Math.floor(p / grid.columns) * side;
    context.fillStyle = `rgba(0, 0, 0, ${opacity * (1 - share) * 0.85})`;
    context.fillRect(x, y, side, side);
    context.fillStyle = `rgba(255, 140, 0, ${opacity * share * 0.45})`;
    context.fillRect(x, y, side, side);
  }
  if (focus >= 0) {
    context.strokeStyle = '#00e5ff';
    context.lineWidth = Math.max(2, side / 8);
    context.strokeRect(
      (focus % grid.columns) * side,
      Math.floor(focus / grid.columns) * side,
      side,
      side,
    );
  }
}

/**
 * A snapshot's picture (its checked PNG or JPEG data URL, src/snapshot/picture.js) decoded
 * through the same header checks as any image, on a canvas of the model's input size: the view
 * drawOverlay() draws its maps over.
 */
export async function snapshotPictureView(picture) {
  const { image, input } = picture;
  const type = image.slice(5, image.indexOf(';'));
  const bytes = Uint8Array.from(atob(image.slice(image.indexOf(',') + 1)), (c) => c.charCodeAt(0));
  const pixels = await readImageRgba(new Blob([bytes], { type }), 'snapshot.picture.image');
  const view = document.createElement('canvas');
  view.width = input.width;
  view.height = input.height;
  view.getContext('2d').drawImage(pictureCanvas(pixels), 0, 0, view.width, view.height);
  return view;
}
