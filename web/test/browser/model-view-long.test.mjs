// The model view at 1,024 tokens in headless Chromium, on a synthetic causal run (drawing needs
// no model): every thumbnail is drawn from a max-pooled tile, so a previous-token head keeps its
// whole diagonal and a single-token spike stays at full strength; the pointer over a thumbnail
// names the true query and key; the head opened in the matrix is drawn at full resolution, one
// cell per token pair, before and after zooming. Screenshots: test-artifacts/model-view-1024*.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { artifact, newPage, openBrowser, WEB_ROOT } from './harness.mjs';

const N = 1024;

async function mount({ n }) {
  const { ModelGrid } = await import('/src/views/model-grid.js');
  const { Heatmap } = await import('/src/views/heatmap.js');
  const { syntheticAttention } = await import('/test/support/synthetic-attention.js');
  const shape = { layers: 2, heads: 4, n };
  const run = syntheticAttention(shape);
  window.run = run;
  window.grid = new ModelGrid(document.getElementById('model-grid'), {
    onSelect: () => {},
    strings: {
      layer: (l) => `Layer ${l + 1}`,
      label: () => '—',
      describe: (l, h) => `layer ${l + 1}, head ${h + 1}`,
      region: (l, h, region) => JSON.stringify({ l, h, ...region }),
    },
  });
  window.grid.setData({
    ...shape,
    ...run,
    selected: { layer: 0, head: 0 },
    scale: 'viridis',
  });
  window.heatmap = new Heatmap(document.getElementById('heatmap'), {});
  return document.querySelectorAll('#model-grid .al-model-cell').length;
}

// Colours of one thumbnail's pixels: [r, g, b] at (x, y) in canvas pixels.
async function thumbnailPixels(page, cell) {
  return page.evaluate((cell) => {
    const canvas = document.querySelector(`#model-grid [data-cell="${cell}"] canvas`);
    const data = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
    return { width: canvas.width, height: canvas.height, data: Array.from(data) };
  }, cell);
}

describe('the model view at 1,024 tokens', () => {
  let browser, page, top, bottom;
  before(async () => {
    browser = await openBrowser({ root: WEB_ROOT, isolated: false });
    page = await newPage(browser.context);
    await page.goto(`${browser.base}/test/browser/model-grid.html`);
    [top, bottom] = await page.evaluate(async () => {
      const { colorAt } = await import('/src/views/colormap.js');
      return [colorAt('viridis', 1), colorAt('viridis', 0)];
    });
  });
  after(async () => browser?.close());

  it('draws heads from max-pooled tiles: whole diagonals, a spike at full strength', async () => {
    assert.equal(await page.evaluate(mount, { n: N }), 8);
    await page.locator('#model-grid').screenshot({ path: artifact('model-view-1024.png') });
    const rgb = (p, x, y) => p.data.slice((y * p.width + x) * 4, (y * p.width + x) * 4 + 3);
    // Previous token: every pixel row of the thumbnail holds a full-strength pixel (a
    // nearest-neighbour scale-down would miss the one-cell-wide diagonal in most rows).
    const previous = await thumbnailPixels(page, '0:0');
    assert.ok(previous.width >= 34 && previous.width < N);
    for (let y = 0; y < previous.height; y++) {
      const row = Array.from({ length: previous.width }, (_, x) => rgb(previous, x, y).join());
      assert.ok(row.includes(top.join()), `pixel row ${y} keeps its diagonal`);
    }
    // The spike: one row of 1,024 all on key 3, its pixel at the top of the scale.
    const { tileOf } = await import('../../src/views/tiles.js');
    const { spikeOf } = await import('../support/synthetic-attention.js');
    const spike = spikeOf(N);
    const spiky = await thumbnailPixels(page, '0:3');
    const t = spiky.width;
    const [sx, sy] = [tileOf(spike.col, N, t), tileOf(spike.row, N, t)];
    assert.deepEqual(rgb(spiky, sx, sy), top);
    assert.notDeepEqual(rgb(spiky, sx + 2, sy), top);
    assert.notDeepEqual(rgb(spiky, sx, sy + 2), top);
  });

  it('names the true query and key under the pointer', async () => {
    const { spikeOf } = await import('../support/synthetic-attention.js');
    const spike = spikeOf(N);
    const box = await page.locator('#model-grid [data-cell="0:3"] canvas').boundingBox();
    // The centre of the CSS pixel holding the spike's tile cell.
    await page.mouse.move(
      box.x + ((spike.col + 0.5) / N) * box.width,
      box.y + ((spike.row + 0.5) / N) * box.height,
    );
    const tooltip = page.locator('#model-grid .al-model-region');
    await tooltip.waitFor({ state: 'visible' });
    const region = JSON.parse(await tooltip.textContent());
    assert.equal(region.l, 0);
    assert.equal(region.h, 3);
    assert.equal(region.query, spike.row);
    assert.equal(region.key, spike.col);
    assert.equal(region.weight, 1);
    assert.ok(region.queries[0] <= spike.row && spike.row <= region.queries[1]);
    assert.ok(region.keys[0] <= spike.col && spike.col <= region.keys[1]);
    assert.ok(region.queries[1] - region.queries[0] < 32, 'a tile cell is a few tokens');
    await page.locator('#model-grid').screenshot({ path: artifact('model-view-1024-hover.png') });
    await page.mouse.move(0, 0);
  });

  it('opens a head at full resolution: one cell per token pair, zoomed too', async () => {
    const { spikeOf } = await import('../support/synthetic-attention.js');
    const spike = spikeOf(N);
    const cellColour = (row, col) =>
      page.evaluate(
        ({ row, col }) => {
          const canvas = window.heatmap.canvas;
          const { left, top, cell } = canvas.dataset;
          const ratio = canvas.width / Number.parseFloat(canvas.style.width);
          const x = Math.floor((Number(left) + (col + 0.5) * Number(cell)) * ratio);
          const y = Math.floor((Number(top) + (row + 0.5) * Number(cell)) * ratio);
          return Array.from(canvas.getContext('2d').getImageData(x, y, 1, 1).data.slice(0, 3));
        },
        { row, col },
      );
    await page.evaluate((n) => {
      const size = n * n;
      const tokens = Array.from({ length: n }, (_, i) => ({ text: `t${i}` }));
      window.heatmap.setData({
        rowTokens: tokens,
        colTokens: tokens,
        weights: window.run.attention.subarray(3 * size, 4 * size),
        mask: window.run.visible.subarray(0, size),
        scale: 'viridis',
        range: [0, 1],
      });
    }, N);
    for (const zoom of [1, 2]) {
      if (zoom > 1) await page.evaluate(() => window.heatmap.zoomBy(2));
      assert.deepEqual(await cellColour(spike.row, spike.col), top, `zoom ${zoom}: the spike`);
      assert.deepEqual(await cellColour(spike.row, spike.col + 1), bottom, `zoom ${zoom}: beside`);
      assert.notDeepEqual(await cellColour(spike.row - 1, spike.col), top, `zoom ${zoom}: above`);
    }
    await page.evaluate((row) => {
      const canvas = window.heatmap.canvas;
      const y = Number(canvas.dataset.top) + row * Number(canvas.dataset.cell);
      window.heatmap.scroller.scrollTop = y - 200;
    }, spike.row);
    await page.locator('#heatmap').screenshot({ path: artifact('model-view-1024-zoom.png') });
    const cell = await page.evaluate(() => Number(window.heatmap.canvas.dataset.cell));
    assert.ok(cell >= 3, `cell ${cell} CSS px: every token pair has its own cells`);
  });
});

// The page itself on a long text: stories260K (bundled, 512 positions) runs its first 512 tokens
// of a ~900-token story and draws all 40 heads; the counts line says what was cut.
describe('the demo page on a long text', () => {
  let browser, page;
  before(async () => {
    browser = await openBrowser();
    page = await newPage(browser.context);
  });
  after(() => browser?.close());

  it('runs as many tokens as the model has positions and draws every head', async () => {
    const sentence = 'Once upon a time, there was a little girl named Lily who loved the sun. ';
    await page.goto(`${browser.base}/demo/?lang=en`);
    await page.waitForFunction(() => Number(document.body.dataset.computed) >= 1);
    await page.fill('#main-text', sentence.repeat(40));
    await page.click('label:has(input[name="model-kind"][value="real"])');
    await page.waitForFunction(() => Number(document.body.dataset.modelRuns ?? 0) >= 1, null, {
      timeout: 60000,
    });
    await page.click('#tab-model');
    await page.waitForFunction(
      () => document.querySelectorAll('#model-grid .al-model-cell canvas').length === 40,
    );
    const status = await page.textContent('#status-line');
    const match = /^512 tokens · the first 512 of (\d+) tokens/.exec(status ?? '');
    assert.ok(match && Number(match[1]) > 512, `status: ${status}`);
    await page.locator('#model-grid').screenshot({ path: artifact('model-view-page-512.png') });
  });
});
