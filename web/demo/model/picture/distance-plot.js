// The ViT paper's figure 7: each head's mean attention distance (pixels) against its layer, one
// dot per head, with the local/global threshold as a dashed line. SVG, so it scales to a phone
// and exports as it is; every dot carries its numbers as a <title> for pointer and screen reader.
import { svgEl } from '../../../src/views/dom.js';
import { t } from '../../i18n.js';

const WIDTH = 320;
const HEIGHT = 200;
const PAD = { left: 44, right: 10, top: 10, bottom: 34 };
const LABEL_KEYS = { local: 'pictureLocal', global: 'pictureGlobal' };

/**
 * @param {{ distances: Float32Array, threshold: number, labels: string[] }} distance
 * @param {number} layers
 * @param {number} heads
 */
export function distancePlot(distance, layers, heads) {
  let top = distance.threshold * 2;
  for (const d of distance.distances) top = Math.max(top, d);
  const plotW = WIDTH - PAD.left - PAD.right;
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const x = (layer) => PAD.left + ((layer + 0.5) / layers) * plotW;
  const y = (px) => PAD.top + plotH - (px / top) * plotH;
  const svg = svgEl('svg', {
    class: 'distance-plot',
    viewBox: `0 0 ${WIDTH} ${HEIGHT}`,
    role: 'img',
    'aria-label': t('pictureDistanceAria', { threshold: distance.threshold.toFixed(1) }),
  });
  svg.append(
    svgEl('line', { x1: PAD.left, y1: y(0), x2: WIDTH - PAD.right, y2: y(0), class: 'axis' }),
    svgEl('line', { x1: PAD.left, y1: PAD.top, x2: PAD.left, y2: y(0), class: 'axis' }),
    svgEl('line', {
      x1: PAD.left,
      y1: y(distance.threshold),
      x2: WIDTH - PAD.right,
      y2: y(distance.threshold),
      class: 'threshold',
    }),
    svgEl('text', { x: PAD.left - 4, y: y(top) + 4, 'text-anchor': 'end', text: top.toFixed(0) }),
    svgEl('text', { x: PAD.left - 4, y: y(0), 'text-anchor': 'end', text: '0' }),
    svgEl(
      'text',
      { x: PAD.left + plotW / 2, y: HEIGHT - 4, 'text-anchor': 'middle' },
      t('pictureLayerAxis'),
    ),
  );
  for (let layer = 0; layer < layers; layer++) {
    svg.append(svgEl('text', { x: x(layer), y: y(0) + 14, 'text-anchor': 'middle', text: layer }));
    for (let head = 0; head < heads; head++) {
      const k = layer * heads + head;
      const px = distance.distances[k];
      // Heads of one layer spread a little sideways so equal distances stay apart.
      const spread = heads > 1 ? (head / (heads - 1) - 0.5) * (plotW / layers) * 0.5 : 0;
      const label = distance.labels[k];
      svg.append(
        svgEl(
          'circle',
          { cx: x(layer) + spread, cy: y(px), r: 3.5, class: `dot ${label}` },
          svgEl('title', {
            text: t('pictureDistanceDot', {
              layer,
              head,
              px: px.toFixed(1),
              label: t(LABEL_KEYS[label]),
            }),
          }),
        ),
      );
    }
  }
  return svg;
}
