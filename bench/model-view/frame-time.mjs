#!/usr/bin/env node
// Frame times of the model view on long texts in headless Chromium: the grid of every layer's
// and head's attention (web/src/views/model-grid.js) and one head opened in the matrix
// (heatmap.js), before (the drawing at --before, read from git) and after (this tree), the two
// alternating in one run on the same synthetic causal run (drawing needs no model; shapes of
// GPT-2-small: 12 layers x 12 heads). Prints milliseconds of main-thread work (script, style
// and layout, forced) per interaction, medians over --repeat rounds; asserts nothing.
//
//   node bench/model-view/frame-time.mjs [--sizes 256,1024,2048] [--repeat 3] [--before REV]
//
// At 2,048 tokens 144 heads would take 2.4 GB of weights: that size runs 3 layers (36 heads).
// Needs web/node_modules (playwright-core) and Debian's chromium.
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { newPage, openBrowser, REPO_ROOT } from '../../web/scripts/chromium.mjs';

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '256,1024,2048' },
    repeat: { type: 'string', default: '3' },
    // main when the tiles came in: the drawing of every thumbnail from the whole N x N map
    before: { type: 'string', default: 'dffdb5e' },
  },
});
const sizes = values.sizes.split(',').map(Number);
const repeat = Number(values.repeat);

// The views at --before, beside this tree's, served from the same origin.
const BUILD = join(REPO_ROOT, 'bench/model-view/build');
function writeBefore(rev) {
  const dir = join(BUILD, 'before/views');
  rmSync(BUILD, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const git = (...args) => execFileSync('git', ['-C', REPO_ROOT, ...args], { encoding: 'utf8' });
  const files = git('ls-tree', '--name-only', `${rev}:web/src/views`).split('\n').filter(Boolean);
  for (const file of files)
    writeFileSync(join(dir, file), git('show', `${rev}:web/src/views/${file}`));
  return git('rev-parse', '--short', rev).trim();
}

// In the page: one size, both versions alternating, `repeat` rounds.
async function measure({ n, layers, heads, repeat }) {
  const versions = {
    before: '/bench/model-view/build/before/views',
    after: '/web/src/views',
  };
  const { syntheticAttention } = await import('/web/test/support/synthetic-attention.js');
  const run = syntheticAttention({ layers, heads, n });
  const stage = document.getElementById('stage');
  const median = (list) => [...list].sort((a, b) => a - b)[list.length >> 1];
  const frame = () => new Promise((done) => requestAnimationFrame(() => setTimeout(done, 0)));
  // Main-thread time of `work` with the style and layout it causes.
  const timed = (work) => {
    const t0 = performance.now();
    work();
    document.body.getBoundingClientRect();
    return performance.now() - t0;
  };
  const tokens = Array.from({ length: n }, (_, i) => ({ text: `t${i}` }));
  const strings = {
    layer: (l) => `Layer ${l + 1}`,
    label: () => '—',
    describe: (l, h) => `layer ${l + 1}, head ${h + 1}`,
    region: (l, h, r) => `layer ${l + 1}, head ${h + 1}: queries ${r.queries} keys ${r.keys}`,
  };
  const results = { before: {}, after: {} };
  const record = (version, name, ms) => (results[version][name] ??= []).push(ms);
  for (let round = 0; round < repeat; round++) {
    for (const version of round % 2 ? ['after', 'before'] : ['before', 'after']) {
      const { ModelGrid } = await import(`${versions[version]}/model-grid.js`);
      const { Heatmap } = await import(`${versions[version]}/heatmap.js`);
      const gridHost = document.createElement('div');
      const heatHost = document.createElement('div');
      stage.replaceChildren(gridHost, heatHost);
      const grid = new ModelGrid(gridHost, { onSelect: () => {}, strings });
      const data = { layers, heads, n, ...run, selected: { layer: 0, head: 0 }, scale: 'viridis' };
      let t0 = performance.now();
      record(
        version,
        'grid first draw',
        timed(() => grid.setData(data)),
      );
      await frame();
      record(version, 'grid first frame', performance.now() - t0);
      // The keyboard moving the selection: the grid renders again.
      const select = [];
      for (let h = 1; h <= 6; h++) {
        select.push(timed(() => grid.setData({ ...data, selected: { layer: 0, head: h } })));
        await frame();
      }
      record(version, 'grid select', median(select));
      // The pointer over thumbnails: enter a head, move within it.
      const hover = [];
      for (let k = 0; k < 12; k++) {
        const canvas = gridHost.querySelector(`[data-cell="${k % layers}:${k % heads}"] canvas`);
        const box = canvas.getBoundingClientRect();
        const at = { bubbles: true, pointerType: 'mouse' };
        const clientX = box.left + (box.width * (k + 0.5)) / 12;
        const clientY = box.top + (box.height * (k + 0.5)) / 12;
        hover.push(
          timed(() => {
            canvas.dispatchEvent(new PointerEvent('pointerover', { ...at, clientX, clientY }));
            canvas.dispatchEvent(new PointerEvent('pointermove', { ...at, clientX, clientY }));
          }),
        );
        await frame();
      }
      record(version, 'grid hover', median(hover));
      // Scrolling the page over the grid: frames between scroll steps.
      const scroll = [];
      for (let k = 0; k < 10; k++) {
        const t = performance.now();
        window.scrollTo(0, (k % 2) * 300);
        await frame();
        scroll.push(performance.now() - t);
      }
      record(version, 'grid scroll frame', median(scroll));
      grid.destroy();
      // Zoom: one head opened in the matrix at full resolution, then pointer, scroll, zoom steps.
      const heatmap = new Heatmap(heatHost, {});
      const size = n * n;
      const open = { rowTokens: tokens, colTokens: tokens, scale: 'viridis', range: [0, 1] };
      const head = { weights: run.attention.subarray(3 * size, 4 * size) };
      const mask = run.visible.subarray(0, size);
      t0 = performance.now();
      record(
        version,
        'open head',
        timed(() => heatmap.setData({ ...open, ...head, mask })),
      );
      await frame();
      const canvas = heatmap.canvas;
      const moves = [];
      for (let k = 0; k < 12; k++) {
        const box = canvas.getBoundingClientRect();
        const at = { bubbles: true, pointerType: 'mouse' };
        const clientX = box.left + 200 + k * 7;
        const clientY = box.top + 150 + k * 5;
        moves.push(
          timed(() =>
            canvas.dispatchEvent(new PointerEvent('pointermove', { ...at, clientX, clientY })),
          ),
        );
        await frame();
      }
      record(version, 'head hover', median(moves));
      const scrolls = [];
      for (let k = 0; k < 8; k++) {
        // What the scroll handler runs (once per frame): the render with sticky labels.
        heatmap.scroller.scrollTop = 40 * (k + 1);
        scrolls.push(timed(() => heatmap.render()));
        await frame();
      }
      record(version, 'head scroll', median(scrolls));
      const zooms = [];
      for (const factor of [2, 0.5, 2, 0.5]) {
        zooms.push(timed(() => heatmap.zoomBy(factor)));
        await frame();
      }
      record(version, 'head zoom step', median(zooms));
      heatmap.resizeObserver.disconnect();
      stage.replaceChildren();
    }
  }
  const out = {};
  for (const [version, byName] of Object.entries(results)) {
    out[version] = Object.fromEntries(
      Object.entries(byName).map(([name, list]) => [name, median(list)]),
    );
  }
  return out;
}

const beforeRev = writeBefore(values.before);
const head = execFileSync('git', ['-C', REPO_ROOT, 'rev-parse', '--short', 'HEAD'], {
  encoding: 'utf8',
}).trim();
const browser = await openBrowser({ root: REPO_ROOT, isolated: false });
try {
  const page = await newPage(browser.context);
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.goto(`${browser.base}/bench/model-view/page.html`);
  const agent = await page.evaluate(() => navigator.userAgent);
  const version = /Chrom\w+\/([\d.]+)/.exec(agent)?.[1] ?? agent;
  console.log(
    `model view frame times, headless Chromium ${version}, before ${beforeRev}, after ${head}` +
      ` (working tree); load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
  );
  console.log('ms of main-thread work per step (median of rounds); ratio = before / after');
  for (const n of sizes) {
    const layers = n > 1024 ? 3 : 12;
    const heads = 12;
    const result = await page.evaluate(measure, { n, layers, heads, repeat });
    console.log(`\nN = ${n}, ${layers} x ${heads} heads`);
    console.log(`${'step'.padEnd(20)} ${'before'.padStart(10)} ${'after'.padStart(10)}  ratio`);
    for (const name of Object.keys(result.after)) {
      const [b, a] = [result.before[name], result.after[name]];
      console.log(
        `${name.padEnd(20)} ${b.toFixed(1).padStart(10)} ${a.toFixed(1).padStart(10)}  ` +
          `${(b / a).toFixed(1)}x`,
      );
    }
  }
  console.log(
    `\nload average after ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
} finally {
  await browser.close();
}
