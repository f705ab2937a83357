// <attn-lens> and pictures: model="facebook/dino-vits16" image="cat.png" (the tiny DINO ViT of
// tests/models/make_tiny_vit.py served in the Hub's layout) offers a Load button with the size,
// then draws each head's class-token map over the picture, equal to model.run() in Node on the
// same pixels, and the class token's rollout across the layers (view="rollout" or the View
// control), equal to attentionRollout() over Node's maps and to the page's own export;
// a classifier lists its top labels; the exported snapshot draws again with no
// request to the model's files and no wasm; and pictures that are missing, corrupt or claim
// 30,000 x 30,000 pixels get an error card, before any weight downloads, while the element stays
// usable for the next picture. Screenshots in test-artifacts/.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { attentionRollout } from '../../src/interpret/rollout.js';
import { loadModel } from '../../src/models/index.js';
import { readSnapshot } from '../../src/snapshot/read.js';
import { formatBytes } from '../../src/views/dom.js';
import { blockingFindings } from './axe.mjs';
import { artifact, newPage, openBrowser, REPO_ROOT } from './harness.mjs';
import {
  folderBytes,
  lensPage,
  siteWithLensPages,
  startHub,
  useHub,
  VIOLATIONS_JS,
} from './model-page-support.mjs';

const DINO = 'facebook/dino-vits16';
const VIT = 'google/vit-base-patch16-224';
const TOLERANCE = 1e-4; // Chromium's wasm flavour against Node's on the same pixels

describe('<attn-lens> with a picture', () => {
  let work, hub, site, browser, folders, expected;
  const problems = (page) => page.problems.filter((p) => !p.includes(new URL(hub.url).origin));

  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'attnlens-widget-picture-'));
    execFileSync('/usr/bin/python3', [join(REPO_ROOT, 'tests/models/make_tiny_vit.py'), work]);
    const root = join(work, 'hub');
    folders = {};
    for (const [id, made] of [
      [DINO, 'dino-vit'],
      [VIT, 'vit'],
    ]) {
      folders[id] = join(root, ...id.split('/'), 'main');
      cpSync(join(work, made), folders[id], { recursive: true });
    }
    // The picture: a landscape gradient PNG (lossless, so Node and Chromium get equal pixels),
    // its RGBA for Node, and a PNG header claiming 30,000 x 30,000 pixels.
    execFileSync('/usr/bin/python3', [
      '-c',
      'import sys; from PIL import Image; im = Image.new("RGB", (64, 48)); ' +
        'im.putdata([(x * 4, y * 5, (x * y) % 256) for y in range(48) for x in range(64)]); ' +
        'im.save(sys.argv[1] + "/cat.png"); ' +
        'open(sys.argv[1] + "/cat.rgba", "wb").write(im.convert("RGBA").tobytes())',
      work,
    ]);
    const huge = Buffer.alloc(45);
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(huge);
    huge.writeUInt32BE(13, 8);
    huge.write('IHDR', 12, 'latin1');
    huge.writeUInt32BE(30000, 16);
    huge.writeUInt32BE(30000, 20);
    const pixels = { data: new Uint8Array(readFileSync(join(work, 'cat.rgba'))), width: 64 };
    pixels.height = pixels.data.length / 4 / 64;
    expected = {};
    for (const id of [DINO, VIT]) {
      const model = await loadModel(folders[id]);
      const topK = Math.min(5, model.labels?.length ?? 5);
      const run = await model.run(pixels, model.info.predicts ? { topK } : {});
      expected[id] = { info: model.info, run };
      model.dispose();
    }
    hub = await startHub(root);
    site = siteWithLensPages({
      'dino.html': lensPage(`<attn-lens id="live" model="${DINO}" image="cat.png"></attn-lens>`),
      'vit.html': lensPage(
        `<attn-lens id="live" model="${VIT}" image="cat.png" layer="2" head="1"></attn-lens>`,
      ),
      'bad.html': lensPage(`<attn-lens id="live" model="${DINO}" image="missing.png"></attn-lens>`),
      'cat.png': readFileSync(join(work, 'cat.png')),
      'corrupt.png': Buffer.concat([readFileSync(join(work, 'cat.png')).subarray(0, 40)]),
      'huge.png': huge,
      'violations.js': VIOLATIONS_JS,
    });
    browser = await openBrowser({ root: site });
    await useHub(browser.context, hub.url);
  });
  after(async () => {
    await browser?.close();
    await hub?.close();
    rmSync(work, { recursive: true, force: true });
    rmSync(site, { recursive: true, force: true });
  });

  const state = (page) => page.evaluate(() => document.getElementById('live').dataset.state);
  // `read(root)` of the element's shadow root, run in the page.
  const inShadow = (page, read) => page.locator('#live').evaluate(read);
  async function clickLoad(page, id) {
    const size = formatBytes(folderBytes(folders[id]));
    await page.waitForFunction(
      (size) =>
        document.getElementById('live').shadowRoot.querySelector('.load-model')?.textContent ===
        `Load model (${size})`,
      size,
    );
    assert.equal(await state(page), 'waiting-load');
    await page.evaluate(() =>
      document.getElementById('live').shadowRoot.querySelector('.load-model').click(),
    );
  }
  const waitReady = (page) =>
    page.waitForFunction(() => document.getElementById('live').dataset.state === 'ready', {
      timeout: 60000,
    });

  // The snapshot the widget exports, through its Export button.
  async function exportSnapshot(page) {
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.locator('#live').locator('button.export').click(),
    ]);
    return readFileSync(await download.path(), 'utf8');
  }

  function assertMaps(snapshot, id) {
    const { info, run } = expected[id];
    const { picture } = snapshot;
    assert.deepEqual(picture.grid, run.grid);
    const patches = run.grid.rows * run.grid.columns;
    const n = run.tokens;
    // The rollout the widget shows: the class token's row over every layer of Node's maps.
    const shape = { layers: info.layers, heads: info.heads, n };
    const rollout = attentionRollout(run.attention, shape, { rows: [0] });
    assert.equal(picture.rollout.length, patches);
    for (let p = 0; p < patches; p++) {
      const diff = Math.abs(picture.rollout[p] - rollout[1 + run.registers + p]);
      assert.ok(diff <= TOLERANCE, `${id}: rollout patch ${p}: ${diff}`);
    }
    for (let l = 0; l < info.layers; l++) {
      for (let h = 0; h < info.heads; h++) {
        const from = (l * info.heads + h) * n * n + 1 + run.registers;
        const at = (l * info.heads + h) * patches;
        for (let p = 0; p < patches; p++) {
          const diff = Math.abs(picture.classAttention[at + p] - run.attention[from + p]);
          assert.ok(diff <= TOLERANCE, `${id}: layer ${l} head ${h} patch ${p}: ${diff}`);
        }
      }
    }
  }

  let exported = null;

  it('runs DINO on the picture after the Load click, maps equal to Node', async () => {
    const page = await newPage(browser.context);
    await page.goto(`${browser.base}/lens/dino.html`);
    await clickLoad(page, DINO);
    await waitReady(page);
    // Layer, head (and the heads' mean) and opacity are the reader's controls.
    const controls = await inShadow(page, (host) => {
      const root = host.shadowRoot;
      return [...root.querySelectorAll('.header select')]
        .map((s) => s.options.length)
        .concat(root.querySelectorAll('.header input[type=range]').length);
    });
    const { info } = expected[DINO];
    assert.deepEqual(controls, [2, info.layers, info.heads + 1, 1]);
    assert.equal(
      await inShadow(page, (host) => {
        const root = host.shadowRoot;
        return root.querySelector('.picture-labels').hidden;
      }),
      true,
    );
    const text = await exportSnapshot(page);
    exported = text;
    assertMaps(readSnapshot(text), DINO);
    // The picture is drawn: the canvas holds more than one colour.
    const colours = await inShadow(page, (host) => {
      const root = host.shadowRoot;
      const c = root.querySelector('.picture canvas');
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      const seen = new Set();
      for (let i = 0; i < d.length; i += 400) seen.add(d[i] + ',' + d[i + 1] + ',' + d[i + 2]);
      return seen.size;
    });
    assert.ok(colours > 20, `only ${colours} colours drawn`);
    // Another head, then the mean: the canvas says which.
    await page.locator('#live').locator('.header select').nth(2).selectOption('-1');
    assert.equal(
      await inShadow(page, (host) => {
        const root = host.shadowRoot;
        return root.querySelector('.picture canvas').dataset.head;
      }),
      '-1',
    );
    await page.locator('#live').screenshot({ path: artifact('widget-picture-dino.png') });
    // The rollout view: one map over every layer and head, so layer and head are off.
    await page.locator('#live').locator('.header select').nth(0).selectOption('rollout');
    const rollout = await inShadow(page, (host) => {
      const root = host.shadowRoot;
      const c = root.querySelector('.picture canvas');
      const selects = [...root.querySelectorAll('.header select')];
      return {
        view: c.dataset.view,
        label: c.getAttribute('aria-label'),
        disabled: selects.map((s) => s.disabled),
      };
    });
    assert.equal(rollout.view, 'rollout');
    assert.match(
      rollout.label,
      new RegExp(`^Attention rollout of the class token across all ${info.layers} layers`),
    );
    assert.deepEqual(rollout.disabled, [false, true, true]);
    await page.locator('#live').screenshot({ path: artifact('widget-picture-rollout.png') });
    assert.equal(await page.textContent('#violations'), '0');
    assert.deepEqual(problems(page), []);
    await page.close();
  });

  it('a classifier lists its top labels and opens the layer and head asked', async () => {
    const page = await newPage(browser.context);
    await page.goto(`${browser.base}/lens/vit.html`);
    await clickLoad(page, VIT);
    await waitReady(page);
    const { run } = expected[VIT];
    const labels = await inShadow(page, (host) => {
      const root = host.shadowRoot;
      return [...root.querySelectorAll('.picture-labels li')].map((li) => li.textContent);
    });
    assert.deepEqual(
      labels,
      run.labels.map(({ label, p }) => `${label} · ${(p * 100).toFixed(1)}%`),
    );
    const canvas = await inShadow(page, (host) => {
      const root = host.shadowRoot;
      const c = root.querySelector('.picture canvas');
      return [c.dataset.layer, c.dataset.head, c.getAttribute('aria-label')];
    });
    assert.deepEqual(canvas.slice(0, 2), ['1', '0']);
    assert.match(canvas[2], /^Layer 2, head 1:/);
    const exportedVit = readSnapshot(await exportSnapshot(page));
    assertMaps(exportedVit, VIT);
    // It opens where the reader was.
    assert.deepEqual(exportedVit.selected, { layer: 1, head: 0 });
    await page.locator('#live').screenshot({ path: artifact('widget-picture-vit.png') });
    assert.deepEqual(problems(page), []);
    await page.close();
  });

  it('draws the exported snapshot with no model request and no wasm', async () => {
    assert.ok(exported, 'the first test exported a snapshot');
    writeFileSync(join(site, 'lens', 'picture.json'), exported);
    writeFileSync(
      join(site, 'lens', 'snapshot.html'),
      lensPage('<attn-lens id="live" snapshot="picture.json" layer="2"></attn-lens>'),
    );
    writeFileSync(
      join(site, 'lens', 'snapshot-rollout.html'),
      lensPage('<attn-lens id="live" snapshot="picture.json" view="rollout"></attn-lens>'),
    );
    const page = await newPage(browser.context);
    const fetched = [];
    page.on('request', (r) => {
      const url = r.url();
      if (/\.wasm|\/resolve\/|\/api\/|safetensors|config\.json/.test(url)) fetched.push(url);
      if (url.startsWith(new URL(hub.url).origin)) fetched.push(url);
    });
    await page.goto(`${browser.base}/lens/snapshot.html`);
    await waitReady(page);
    const shown = await inShadow(page, (host) => {
      const root = host.shadowRoot;
      const c = root.querySelector('.picture canvas');
      return [
        c.dataset.layer,
        root.querySelector('.backend').textContent,
        root.querySelectorAll('button.export').length,
      ];
    });
    assert.equal(shown[0], '1');
    assert.match(shown[1], new RegExp(`snapshot of ${DINO}`));
    assert.equal(shown[2], 0);
    await page.locator('#live').screenshot({ path: artifact('widget-picture-snapshot.png') });
    assert.deepEqual(fetched, []);
    assert.equal(await page.textContent('#violations'), '0');
    assert.deepEqual(problems(page), []);
    await page.close();
  });

  it('the snapshot opens on its rollout with view="rollout", with no model', async () => {
    const page = await newPage(browser.context);
    const fetched = [];
    page.on(
      'request',
      (r) => /\.wasm|\/resolve\/|safetensors/.test(r.url()) && fetched.push(r.url()),
    );
    await page.goto(`${browser.base}/lens/snapshot-rollout.html`);
    await waitReady(page);
    const shown = await inShadow(page, (host) => {
      const c = host.shadowRoot.querySelector('.picture canvas');
      return [c.dataset.view, host.shadowRoot.querySelector('.header select').value];
    });
    assert.deepEqual(shown, ['rollout', 'rollout']);
    // Back to the heads' maps by the attribute: the layer and head controls come back.
    await page.evaluate(() => document.getElementById('live').setAttribute('view', 'heads'));
    await page.waitForFunction(
      () =>
        document.getElementById('live').shadowRoot.querySelector('.picture canvas').dataset.view ===
        'heads',
    );
    assert.deepEqual(fetched, []);
    assert.deepEqual(problems(page), []);
    await page.close();
  });

  it('the snapshot in Chinese at phone width: its words, its layout, axe-core', async () => {
    writeFileSync(
      join(site, 'lens', 'snapshot-zh.html'),
      lensPage('<attn-lens id="live" snapshot="picture.json" language="zh" head="2"></attn-lens>'),
    );
    const page = await newPage(browser.context, { viewport: { width: 360, height: 740 } });
    await page.goto(`${browser.base}/lens/snapshot-zh.html`);
    await waitReady(page);
    const shown = await inShadow(page, (host) => {
      const root = host.shadowRoot;
      const canvas = root.querySelector('.picture canvas');
      return {
        label: canvas.getAttribute('aria-label'),
        width: canvas.getBoundingClientRect().width,
        frame: root.querySelector('.frame').getBoundingClientRect().width,
        overflow: host.scrollWidth > host.clientWidth,
      };
    });
    assert.match(shown.label, /^第 1 层，第 2 个头：/);
    assert.ok(shown.width <= shown.frame, `the picture (${shown.width}px) fits (${shown.frame}px)`);
    assert.equal(shown.overflow, false);
    assert.deepEqual(await blockingFindings(page), []);
    await page.locator('#live').screenshot({ path: artifact('widget-picture-snapshot-zh.png') });
    assert.deepEqual(problems(page), []);
    await page.close();
  });

  it('a missing, corrupt or oversized picture gets an error card; the next one runs', async () => {
    const page = await newPage(browser.context);
    const weights = [];
    page.on('request', (r) => r.url().includes('model.safetensors') && weights.push(r.url()));
    await page.goto(`${browser.base}/lens/bad.html`);
    await clickLoad(page, DINO);
    const failure = async (image) => {
      if (image) {
        await page.evaluate((image) => {
          document.getElementById('live').setAttribute('image', image);
        }, image);
      }
      await page.waitForFunction(() => document.getElementById('live').dataset.state === 'error');
      return inShadow(page, (host) => {
        const root = host.shadowRoot;
        return [
          root.querySelector('.status').textContent,
          root.querySelector('.status').dataset.reason,
          root.querySelector('.load-model')?.textContent,
        ];
      });
    };
    const missing = await failure(null);
    assert.match(
      missing[0],
      /^The picture could not be used: image: missing\.png answered HTTP 404/,
    );
    assert.deepEqual(missing.slice(1), ['image', 'Try again']);
    const corrupt = await failure('corrupt.png');
    assert.match(corrupt[0], /^The picture could not be used: image: /);
    await page.locator('#live').screenshot({ path: artifact('widget-picture-error.png') });
    const huge = await failure('huge.png');
    assert.match(huge[0], /30000/);
    // No weight was fetched for a picture that could not be used.
    assert.deepEqual(weights, []);
    page.problems.length = 0; // the 404 above, on purpose
    await page.evaluate(() => document.getElementById('live').setAttribute('image', 'cat.png'));
    await waitReady(page);
    assertMaps(readSnapshot(await exportSnapshot(page)), DINO);
    assert.deepEqual(problems(page), []);
    await page.close();
  });

  it('the page exports a picture snapshot and draws it with no model', async () => {
    const page = await newPage(browser.context);
    await page.goto(`${browser.base}/demo/?${new URLSearchParams({ lang: 'en', model: VIT })}`);
    await page.waitForSelector('#model-load, .model-status.is-ready', { timeout: 30000 });
    if (await page.$('#model-load')) await page.click('#model-load');
    await page.waitForFunction(() => Number(document.body.dataset.pictureRuns ?? 0) >= 1, null, {
      timeout: 30000,
    });
    const save = async (selector) => {
      const [download] = await Promise.all([page.waitForEvent('download'), page.click(selector)]);
      return readFileSync(await download.path(), 'utf8');
    };
    const json = JSON.parse(await save('.picture-controls button:text-is("JSON")'));
    const text = await save('.picture-controls .picture-export-snapshot');
    const snapshot = readSnapshot(text);
    assert.equal(snapshot.model.id, VIT);
    assert.deepEqual(snapshot.picture.grid, json.grid);
    assert.deepEqual(
      snapshot.picture.labels,
      json.labels.map(({ label, p }) => ({ label, p })),
    );
    // The rollout the widget draws from the snapshot is the page's own, bit for bit.
    assert.deepEqual(
      Array.from(snapshot.picture.rollout),
      json.rollout.map((w) => Math.fround(w)),
    );
    // Every head's class-token row as the page's own JSON export has it, bit for bit.
    const { layers, heads } = snapshot.model;
    const patches = json.grid.rows * json.grid.columns;
    for (let l = 0; l < layers; l++) {
      for (let h = 0; h < heads; h++) {
        const at = (l * heads + h) * patches;
        assert.deepEqual(
          Array.from(snapshot.picture.classAttention.subarray(at, at + patches)),
          json.classAttention[l][h].map((w) => Math.fround(w)),
        );
      }
    }
    await page.close();

    // The snapshot on a fresh page: no model file and nothing from the Hub is asked for.
    writeFileSync(join(site, 'lens', 'page-picture.json'), text);
    const fresh = await newPage(browser.context);
    const fetched = [];
    fresh.on('request', (r) => {
      const url = r.url();
      if (/\/resolve\/|\/api\/|safetensors|config\.json/.test(url)) fetched.push(url);
      if (url.startsWith(new URL(hub.url).origin)) fetched.push(url);
    });
    await fresh.goto(`${browser.base}/demo/?lang=en&snapshot=../lens/page-picture.json`);
    await fresh.waitForFunction(() => document.body.dataset.pictureSnapshots === '1', null, {
      timeout: 30000,
    });
    const shown = await fresh.evaluate(() => {
      const panel = document.getElementById('picture-snapshot');
      return {
        status: panel.querySelector('.picture-status').textContent,
        cells: panel.querySelectorAll('.picture-cell').length,
        labels: panel.querySelectorAll('.picture-labels li').length,
        distance: panel.querySelector('.picture-distance').hidden,
      };
    });
    assert.match(shown.status, new RegExp(`^Snapshot of ${VIT}`));
    assert.equal(shown.cells, layers * heads);
    assert.equal(shown.labels, json.labels.length);
    assert.equal(shown.distance, true);
    await fresh.locator('#picture-snapshot').screenshot({
      path: artifact('page-picture-snapshot.png'),
    });
    assert.deepEqual(fetched, []);
    assert.deepEqual(problems(fresh), []);
    assert.deepEqual(await blockingFindings(fresh), []);
    // The address keeps naming the snapshot, so a reload (or the link) shows it again.
    await fresh.waitForTimeout(1200);
    assert.equal(
      await fresh.evaluate(() => new URLSearchParams(location.search).get('snapshot')),
      '../lens/page-picture.json',
    );

    // A snapshot that is not one: the panel says so.
    writeFileSync(join(site, 'lens', 'not-a-snapshot.json'), '{"format": "something else"}');
    await fresh.goto(`${browser.base}/demo/?lang=en&snapshot=../lens/not-a-snapshot.json`);
    await fresh.waitForFunction(() =>
      document
        .querySelector('#picture-snapshot .picture-status')
        ?.textContent.startsWith('The snapshot could not be opened: snapshot.format'),
    );
    await fresh.close();
  });
});
