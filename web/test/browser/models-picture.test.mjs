// The Picture mode of the demo page with a vision transformer: the tiny ViT classifier of
// tests/models/make_tiny_vit.py served in the Hub's layout under google/vit-base-patch16-224's
// id (and DINOv2 with registers under its id). The bundled sample, a chosen file and a dropped
// one give maps equal to model.run() in Node on the same pixels (the JSON export holds every
// head's class-token row, the rollout and the distances), the patch focus moves by keyboard
// and click, both languages, phone width, axe-core over the mode in both languages (with a
// patch focused), the camera followed frame after frame (Chromium's fake camera) with its rate
// shown, and screenshots of each into test-artifacts/.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { meanAttentionDistance } from '../../src/interpret/attention-distance.js';
import { attentionRollout } from '../../src/interpret/rollout.js';
import { blockingFindings } from './axe.mjs';
import { artifact, newPage, openBrowser, REPO_ROOT } from './harness.mjs';
import { startHub, useHub } from './model-page-support.mjs';

const VIT = 'google/vit-base-patch16-224';
const REGISTERS = 'facebook/dinov2-with-registers-small';
const TOLERANCE = 1e-6; // the same wasm flavour on the same pixels: equal to float32 rounding

/**
 * model.run() in Node on the page's flavour (wasm-relaxed), on RGBA pixels from a file; `mask`:
 * the page's mask surgery for every layer, or null.
 */
function runPictureInNode(folder, rgbaFile, width, height, mask = null) {
  const models = new URL('../../src/models/index.js', import.meta.url).href;
  const index = new URL('../../src/index.js', import.meta.url).href;
  const script = `import { readFileSync } from 'node:fs';
    import { createAttention } from ${JSON.stringify(index)};
    import { loadModel } from ${JSON.stringify(models)};
    const attention = await createAttention({ backend: 'wasm-relaxed', models: true });
    const model = await loadModel(${JSON.stringify(folder)}, { attention });
    const data = new Uint8Array(readFileSync(${JSON.stringify(rgbaFile)}));
    const options = model.info.predicts ? { topK: Math.min(5, model.labels.length) } : {};
    if (${JSON.stringify(mask)}) options.masks = ${JSON.stringify(mask)};
    const run = await model.run({ data, width: ${width}, height: ${height} }, options);
    console.log(JSON.stringify({ info: model.info, tokens: run.tokens, grid: run.grid,
      registers: run.registers, labels: run.labels, attention: [...run.attention] }));`;
  const out = execFileSync(
    process.execPath,
    ['--experimental-wasm-relaxed-simd', '--input-type=module', '-e', script],
    { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
  );
  return JSON.parse(out);
}

describe('the Picture mode with a vision transformer', () => {
  let hub, browser, folder, folders, work;
  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'attnlens-picture-'));
    execFileSync('/usr/bin/python3', [join(REPO_ROOT, 'tests/models/make_tiny_vit.py'), work]);
    const root = join(work, 'hub');
    folder = join(root, ...VIT.split('/'), 'main');
    cpSync(join(work, 'vit'), folder, { recursive: true });
    const registersFolder = join(root, ...REGISTERS.split('/'), 'main');
    cpSync(join(work, 'dinov2-registers'), registersFolder, { recursive: true });
    folders = { [VIT]: folder, [REGISTERS]: registersFolder };
    // A chosen file unlike the sample: a portrait gradient PNG drawn by Pillow.
    execFileSync('/usr/bin/python3', [
      '-c',
      'import sys; from PIL import Image; im = Image.new("RGB", (40, 70)); ' +
        'im.putdata([(x * 6, y * 3, (x * y) % 256) for y in range(70) for x in range(40)]); ' +
        'im.save(sys.argv[1])',
      join(work, 'chosen.png'),
    ]);
    hub = await startHub(root);
    // Chromium's fake camera (a moving test pattern), allowed without a prompt.
    browser = await openBrowser({
      args: ['--use-fake-device-for-media-stream', '--use-fake-ui-for-media-stream'],
    });
    await useHub(browser.context, hub.url);
  });
  after(async () => {
    await browser?.close();
    await hub?.close?.();
  });

  async function openVit(lang, viewport, model = VIT) {
    const page = await newPage(browser.context, { viewport });
    await page.goto(`${browser.base}/demo/?${new URLSearchParams({ lang, model })}`);
    // Once its files are in the browser's cache (after the first test) the model loads at once.
    await page.waitForSelector('#model-load, .model-status.is-ready', { timeout: 30000 });
    if (await page.$('#model-load')) await page.click('#model-load');
    await waitForPictures(page, 1);
    return page;
  }

  const waitForSurgeries = (page, n) =>
    page.waitForFunction(
      (count) => Number(document.body.dataset.pictureSurgeryRuns ?? 0) >= count,
      n,
      { timeout: 30000 },
    );

  const largest = (a, b) => a.reduce((m, x, i) => Math.max(m, Math.abs(x - b[i])), 0);

  const waitForPictures = (page, n) =>
    page.waitForFunction((count) => Number(document.body.dataset.pictureRuns ?? 0) >= count, n, {
      timeout: 30000,
    });

  // The pixels the page ran: the same bytes decoded by the page's own reader.
  async function pagePixels(page, bytes) {
    return page.evaluate(async (list) => {
      const { readPicture } = await import('/demo/model/picture/picture-source.js');
      const picture = await readPicture(new Blob([new Uint8Array(list)]));
      return { data: Array.from(picture.data), width: picture.width, height: picture.height };
    }, Array.from(bytes));
  }

  async function exportedJson(page) {
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.click('.picture-controls button:text-is("JSON")'),
    ]);
    return JSON.parse(readFileSync(await download.path(), 'utf8'));
  }

  function assertMatchesNode(json, node, label) {
    const { layers, heads } = node.info;
    const n = node.tokens;
    const first = 1 + node.registers;
    const patches = node.grid.rows * node.grid.columns;
    assert.deepEqual(json.grid, node.grid, `${label}: grid`);
    for (let l = 0; l < layers; l++) {
      for (let h = 0; h < heads; h++) {
        const start = (l * heads + h) * n * n + first;
        const want = node.attention.slice(start, start + patches);
        json.classAttention[l][h].forEach((got, p) => {
          const diff = Math.abs(got - want[p]);
          assert.ok(diff <= TOLERANCE, `${label}: layer ${l} head ${h} patch ${p}: ${diff}`);
        });
      }
    }
    const attention = Float32Array.from(node.attention);
    const shape = { layers, heads, n };
    const rollout = attentionRollout(attention, shape, { rows: [0] });
    json.rollout.forEach((got, p) => {
      assert.ok(Math.abs(got - rollout[first + p]) <= TOLERANCE, `${label}: rollout ${p}`);
    });
    const distance = meanAttentionDistance(attention, shape, {
      ...node.grid,
      patchSize: node.info.patchSize,
      first,
    });
    json.distance.pixels.forEach((got, k) => {
      assert.ok(Math.abs(got - distance.distances[k]) <= 1e-3, `${label}: distance ${k}`);
    });
    assert.deepEqual(json.distance.labels, distance.labels, `${label}: local/global`);
    assert.deepEqual(
      json.labels?.map((x) => x.label) ?? null,
      node.labels?.map((x) => x.label) ?? null,
      `${label}: predicted labels`,
    );
  }

  async function checkAgainstNode(page, bytes, label, model = VIT, mask = null) {
    const pixels = await pagePixels(page, bytes);
    const rgba = join(work, `${label}.rgba`);
    writeFileSync(rgba, Uint8Array.from(pixels.data));
    const node = runPictureInNode(folders[model], rgba, pixels.width, pixels.height, mask);
    const json = await exportedJson(page);
    assert.equal(json.mask, mask ?? 'global', `${label}: the exported mask`);
    assertMatchesNode(json, node, label);
    return node;
  }

  it('the sample, a chosen file and a dropped one give model.run()’s maps in Node', async () => {
    const page = await openVit('en');
    assert.equal(await page.textContent('#picture-title'), 'Picture');
    const sample = readFileSync(join(REPO_ROOT, 'web/demo/model/picture/sample-picture.png'));
    const node = await checkAgainstNode(page, sample, 'sample');
    // Every layer x head as a small overlay, and the distance plot with one dot per head.
    const heads = node.info.layers * node.info.heads;
    assert.equal(await page.locator('.picture-cell-button').count(), heads);
    assert.equal(await page.locator('.distance-plot circle').count(), heads);
    assert.ok((await page.locator('.picture-labels li').count()) > 0, 'predicted labels');
    assert.match(await page.textContent('.picture-distance .hint'), /Below [\d.]+ px \(half/);
    await page.screenshot({ path: artifact('picture-sample-en.png'), fullPage: true });

    const chosen = join(work, 'chosen.png');
    await page.setInputFiles('.picture-file', chosen);
    await waitForPictures(page, 2);
    await checkAgainstNode(page, readFileSync(chosen), 'chosen');
    // A dropped file: the sample again, as a drag from the desktop delivers it.
    await page.evaluate(async (list) => {
      const transfer = new DataTransfer();
      transfer.items.add(new File([new Uint8Array(list)], 'dropped.png', { type: 'image/png' }));
      const zone = document.querySelector('.picture-drop');
      zone.dispatchEvent(new DragEvent('drop', { dataTransfer: transfer, bubbles: true }));
    }, Array.from(sample));
    await waitForPictures(page, 3);
    await checkAgainstNode(page, sample, 'dropped');
    // Requests to the Hub server are the design (and the catalog asks huggingface.co about
    // its other models, which this machine cannot reach); everything else must be clean.
    const hubOrigin = new URL(hub.url).origin;
    const problems = page.problems.filter(
      (line) => !line.includes(hubOrigin) && !line.includes('https://huggingface.co/'),
    );
    assert.deepEqual(problems, []);
    await page.close();
  });

  it('DINOv2 with registers: the maps leave the registers out and equal Node’s', async () => {
    const page = await openVit('en', undefined, REGISTERS);
    const sample = readFileSync(join(REPO_ROOT, 'web/demo/model/picture/sample-picture.png'));
    const node = await checkAgainstNode(page, sample, 'registers', REGISTERS);
    assert.ok(node.registers > 0, 'the fixture has registers');
    assert.equal(await page.locator('.picture-labels li').count(), 0, 'no classifier');
    await page.screenshot({ path: artifact('picture-registers-en.png'), fullPage: true });
    await page.close();
  });

  it('a patch is focused by keyboard and click; Escape goes back to the class token', async () => {
    const page = await openVit('en');
    await page.focus('.picture-main');
    await page.keyboard.press('ArrowRight');
    assert.match(await page.textContent('.picture-figure figcaption'), /patch at row \d+/);
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowDown');
    await page.screenshot({ path: artifact('picture-focus-en.png'), fullPage: true });
    assert.deepEqual(await blockingFindings(page), [], 'axe (en)');
    await page.keyboard.press('Escape');
    assert.match(await page.textContent('.picture-figure figcaption'), /class token/);
    await page.click('.picture-main', { position: { x: 5, y: 5 } });
    assert.match(await page.textContent('.picture-figure figcaption'), /row 0, column 0/);
    // A grid cell chooses its layer and head.
    await page.locator('.picture-cell-button').last().click();
    assert.match(await page.textContent('.picture-figure figcaption'), /^Layer \d+, head \d+/);
    await page.close();
  });

  it('follows the camera: one frame in flight, its rate shown, stopped by the reader', async () => {
    const page = await openVit('en');
    const runs = () => page.evaluate(() => Number(document.body.dataset.pictureRuns));
    await page.click('.picture-camera');
    await page.waitForSelector('.picture-follow:not([hidden])');
    const before = await runs();
    await page.click('.picture-follow');
    assert.equal(await page.getAttribute('.picture-follow', 'aria-pressed'), 'true');
    await waitForPictures(page, before + 3);
    await page.waitForFunction(() =>
      /frames\/s/.test(document.querySelector('.picture-status').textContent),
    );
    const status = await page.textContent('.picture-status');
    assert.match(
      status,
      /^Following the camera: \d+\.\d frames\/s \(\d+ frames shown, \d+ dropped/,
    );
    assert.ok(Number(await page.getAttribute('#picture-mode', 'data-follow-fps')) > 0, status);
    // Each frame redraws the grid's maps in its kept cells: a focused cell keeps its focus.
    await page.focus('.picture-cell-button >> nth=1');
    const focused = await runs();
    await waitForPictures(page, focused + 2);
    assert.equal(
      await page.evaluate(() =>
        [...document.querySelectorAll('.picture-cell-button')].indexOf(document.activeElement),
      ),
      1,
    );
    await page.screenshot({ path: artifact('picture-camera-en.png'), fullPage: true });
    await page.click('.picture-follow');
    assert.equal(await page.getAttribute('.picture-follow', 'aria-pressed'), 'false');
    // The frame in flight may still land; then no more come.
    await page.waitForTimeout(1500);
    const stopped = await runs();
    await page.waitForTimeout(1500);
    assert.equal(await runs(), stopped, 'no frame runs once following stops');
    await page.click('.picture-camera');
    assert.equal(await page.isHidden('.picture-follow'), true);
    const hubOrigin = new URL(hub.url).origin;
    const problems = page.problems.filter(
      (line) => !line.includes(hubOrigin) && !line.includes('https://huggingface.co/'),
    );
    assert.deepEqual(problems, []);
    await page.close();
  });

  it('reads in Chinese and fits a phone', async () => {
    const page = await openVit('zh', { width: 390, height: 844 });
    assert.equal(await page.textContent('#picture-title'), '图片');
    assert.match(await page.textContent('.picture-figure figcaption'), /第 \d+ 层/);
    const overflow = await page.evaluate(
      () => document.documentElement.scrollWidth - window.innerWidth,
    );
    assert.ok(overflow <= 0, `the page is ${overflow} px wider than the phone`);
    await page.screenshot({ path: artifact('picture-phone-zh.png'), fullPage: true });
    await page.focus('.picture-main');
    await page.keyboard.press('ArrowUp');
    assert.deepEqual(await blockingFindings(page), [], 'axe (zh)');
    await page.close();
  });

  it('mask surgery: a k x k window changes the maps and labels beside full attention', async () => {
    const page = await openVit('en');
    const sample = readFileSync(join(REPO_ROOT, 'web/demo/model/picture/sample-picture.png'));
    const full = await checkAgainstNode(page, sample, 'surgery-full');
    assert.ok(await page.locator('.picture-surgery-compare').isHidden());
    assert.ok(await page.locator('.picture-surgery-window').isDisabled());
    // By keyboard: the checkbox with Space, then the window's size with the arrow keys.
    await page.focus('.picture-surgery-on');
    await page.keyboard.press('Space');
    await waitForSurgeries(page, 1);
    const windowed = await checkAgainstNode(page, sample, 'surgery-3', VIT, 'patch:3');
    assert.ok(await page.locator('.picture-surgery-compare').isVisible());
    assert.match(await page.textContent('.picture-figure figcaption'), /\(3 × 3 window\)/);
    // The window changes what the class token sees in every layer after the first.
    assert.ok(largest(full.attention, windowed.attention) > 1e-3, 'the maps change');
    // Both label lists side by side: full attention's and the window's, as Node gives them.
    const lists = await page.$$eval('.picture-surgery-compare ol', (ols) =>
      ols.map((ol) => [...ol.children].map((li) => li.textContent)),
    );
    const shown = (run) => run.labels.map((l) => `${l.label}: ${(l.p * 100).toFixed(1)}%`);
    assert.deepEqual(lists, [shown(full), shown(windowed)]);
    assert.notDeepEqual(lists[0], lists[1], 'the labels change under the window');
    const summary = await page.textContent('.picture-surgery-summary');
    const [before, after] = [full.labels[0].label, windowed.labels[0].label];
    assert.ok(summary.includes(before === after ? 'unchanged' : `${before} → ${after}`), summary);
    await page.screenshot({ path: artifact('picture-surgery-en.png'), fullPage: true });
    assert.deepEqual(await blockingFindings(page), [], 'axe (surgery)');
    // 1 x 1: each patch sees only itself and the class token.
    await page.focus('.picture-surgery-window');
    await page.keyboard.press('ArrowUp');
    await waitForSurgeries(page, 2);
    const alone = await checkAgainstNode(page, sample, 'surgery-1', VIT, 'patch:1');
    assert.ok(largest(alone.attention, windowed.attention) > 1e-3, 'another window, other maps');
    // Off again: full attention's views come back without running the picture again.
    await page.focus('.picture-surgery-on');
    await page.keyboard.press('Space');
    assert.ok(await page.locator('.picture-surgery-compare').isHidden());
    assert.equal(await page.evaluate(() => document.body.dataset.pictureRuns), '1');
    await checkAgainstNode(page, sample, 'surgery-off');
    await page.close();
  });

  it('the mask surgery reads in Chinese and fits a phone', async () => {
    const page = await openVit('zh', { width: 390, height: 844 });
    await page.check('.picture-surgery-on');
    await waitForSurgeries(page, 1);
    assert.match(await page.textContent('.picture-surgery legend'), /掩码手术/);
    assert.match(await page.textContent('.picture-surgery-summary'), /3 × 3 窗口/);
    const overflow = await page.evaluate(
      () => document.documentElement.scrollWidth - window.innerWidth,
    );
    assert.ok(overflow <= 0, `the page is ${overflow} px wider than the phone`);
    await page.locator('.picture-surgery').screenshot({ path: artifact('picture-surgery-zh.png') });
    await page.close();
  });
});
