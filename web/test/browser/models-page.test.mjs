// Real models on the demo page and in the widget, in headless Chromium against a local server in
// the Hub's layout (tiny fixtures under the ids the page offers; see model-page-support.mjs):
// sizes before anything downloads, progress, cancel, a readable error for broken files, the page's
// weights equal to model.run() in Node, mask surgery changing the predictions, words, a snapshot
// drawn the same by the widget, the widget's Load button, and a second visit offline that
// restores model, layer and head from the link. The steps build on each other, in order.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { headMeasures } from '../../src/interpret/head-labels.js';
import { aggregateGroups, wordGroups } from '../../src/interpret/words.js';
import { tokenize } from '../../src/text/tokenize.js';
import { readSnapshot } from '../../src/snapshot/read.js';
import { formatBytes } from '../../src/views/dom.js';
import { artifact, newPage, openBrowser } from './harness.mjs';
import {
  BROKEN,
  folderBytes,
  headRows,
  hubFixtures,
  lensPage,
  NEO,
  pageTable,
  runInNode,
  siteWithLensPages,
  SLOW,
  startHub,
  useHub,
  VIOLATIONS_JS,
  waitForRuns,
  widgetTable,
} from './model-page-support.mjs';

const TEXT = 'Once upon a time there was a cat';
const close = (actual, expected, label) =>
  expected.forEach((row, i) =>
    row.forEach((value, j) => {
      const got = actual[i][j];
      if (value === 0 && got === 'm') return; // masked: weight 0
      assert.ok(Math.abs(got - value) <= 1e-6, `${label} [${i}][${j}]: ${got} vs ${value}`);
    }),
  );

describe('real models on the page and in the widget', () => {
  let fixtures, hub, site, browser, page, node;
  const hubOrigin = () => new URL(hub.url).origin;
  // Requests to the Hub server are the design; everything else must be clean.
  const problems = (p) => p.problems.filter((line) => !line.includes(hubOrigin()));
  // Downloads of a large file (the Hub redirects them to its CDN, as huggingface.co does).
  const downloads = (file) =>
    hub.requests.filter((r) => r.startsWith('GET /cdn/') && r.endsWith(`/${file}`)).length;

  before(async () => {
    fixtures = hubFixtures();
    hub = await startHub(fixtures.root);
    const snapshotBody = '<attn-lens id="snap" snapshot="snapshot.json"></attn-lens>';
    const modelBody =
      `<attn-lens id="live" model="${NEO}" text="${TEXT}" layer="2" head="2">` + '</attn-lens>';
    site = siteWithLensPages({
      'snapshot.html': lensPage(snapshotBody),
      'model.html': lensPage(modelBody),
      'bundled.html': lensPage(
        '<attn-lens id="story" model="stories260K" layer="5" view="heads"' +
          ' text="Once upon a time, there was a little girl named Lily."></attn-lens>',
      ),
      'violations.js': VIOLATIONS_JS,
    });
    browser = await openBrowser({ root: site });
    await useHub(browser.context, hub.url);
    page = await newPage(browser.context);
    node = runInNode(fixtures.folder(NEO), TEXT);
  });
  after(async () => {
    await browser?.close();
    await hub?.close().catch(() => {});
    rmSync(fixtures.root, { recursive: true, force: true });
    rmSync(site, { recursive: true, force: true });
  });

  it('shows sizes from the listing before any download, then loads with progress', async () => {
    await page.goto(`${browser.base}/demo/?lang=en`);
    await page.waitForFunction(() => Number(document.body.dataset.computed) >= 1);
    await page.fill('#main-text', TEXT);
    await page.click('label:has(input[name="model-kind"][value="real"])');
    // "Real model" picks the bundled stories260K first, which runs at once (nothing to
    // download); the reader then chooses another model.
    await waitForRuns(page, 1);
    assert.equal(
      await page.getAttribute('#model-list [aria-checked="true"]', 'data-model'),
      'stories260K',
    );
    await page.click('#model-change');
    await page.click(`#model-list [data-model="${NEO}"]`);
    const bundledRuns = Number(await page.evaluate(() => document.body.dataset.modelRuns));
    const size = formatBytes(folderBytes(fixtures.folder(NEO)));
    const option = page.locator(`#model-list [data-model="${NEO}"] .model-size`);
    await page.waitForFunction(
      ([id, size]) =>
        document.querySelector(`#model-list [data-model="${id}"] .model-size`)?.textContent ===
        size,
      [NEO, size],
    );
    assert.equal(await option.textContent(), size);
    assert.equal(await page.textContent('#model-load'), `Load model (${size})`);
    assert.match(await page.textContent('.model-memory'), /^Memory: [\d.]+ KiB of weights \(f32\)/);
    assert.equal(downloads('model.safetensors'), 0, 'nothing large before Load');
    // A model the Hub does not have is marked so, not given a size.
    assert.equal(
      await page.textContent('#model-list [data-model="gpt2"] .model-size'),
      'not available',
    );
    await page.evaluate(() => {
      window.progressSeen = [];
      new MutationObserver(() => {
        const bar = document.getElementById('model-progress-total');
        if (bar) window.progressSeen.push(Number(bar.value) / Number(bar.max));
      }).observe(document.getElementById('model-details'), { childList: true, subtree: true });
    });
    await page.click('#model-load');
    await waitForRuns(page, bundledRuns + 1);
    const seen = await page.evaluate(() => window.progressSeen);
    assert.ok(seen.length >= 2 && seen.some((f) => f > 0 && f < 1), `progress ${seen}`);
    assert.match(await page.textContent('.model-status.is-ready'), /^Loaded: gpt_neo · 3 layers/);
    assert.equal(downloads('model.safetensors'), 1);
  });

  it('draws every head with the weights model.run() gives in Node', async () => {
    await page.click('#tab-model');
    const cells = await page.locator('#model-grid .al-model-cell').count();
    assert.equal(cells, node.info.layers * node.info.heads);
    // Each cell names its label and, on hover, the measure behind it, from that head's weights.
    const weights = headRows(node, 1, 1).flat();
    const n = node.tokens.length;
    const { label, measures } = headMeasures(weights, {
      n,
      mask: weights.map((w) => (w > 0 ? 1 : 0)), // masked cells, and only they, weigh 0
    });
    // Half a row on token 0, but only the first rows of this local layer can see it: broad.
    assert.ok(measures.first > 0.5, `first ${measures.first}`);
    assert.equal(label, 'broad');
    // The probe's scores (none passes the threshold in this random model), then this text's;
    // they arrive after the first run.
    const score = node.scores[1 * node.info.heads + 1];
    await page.waitForFunction(
      () => !document.querySelector('#model-grid [data-cell="1:1"]')?.title.includes('measuring'),
    );
    assert.equal(score.label, null);
    assert.equal(
      await page.getAttribute('#model-grid [data-cell="1:1"]', 'title'),
      `layer 2, head 2: broad · on random tokens repeated twice: induction ` +
        `${score.induction.toFixed(2)} (the token after the first occurrence), previous token ` +
        `${score.previousToken.toFixed(2)}, sink ${score.sink.toFixed(2)} (first and special ` +
        `tokens) · on this text: broad, rows spread out: entropy ${measures.broad.toFixed(2)} ` +
        'of the most it could be',
    );
    for (const [layer, head] of [
      [0, 1],
      [1, 0],
      [2, 1],
    ]) {
      await page.click(`#model-grid [data-cell="${layer}:${head}"]`);
      await page.waitForFunction(() => !document.getElementById('panel-matrix').hidden);
      const table = await pageTable(page);
      assert.deepEqual(
        table.rows.length,
        node.tokens.length,
        `layer ${layer + 1} head ${head + 1}: rows`,
      );
      close(table.values, headRows(node, layer, head), `layer ${layer + 1} head ${head + 1}`);
      await page.click('#tab-model');
    }
    assert.deepEqual(problems(page), []);
  });

  it("explains a real head: its q·k, scale and weights, as Node's projections give", async () => {
    const [layer, head, query] = [1, 1, 5];
    const { projections } = runInNode(fixtures.folder(NEO), TEXT, { projections: layer });
    await page.click(`#model-grid [data-cell="${layer}:${head}"]`);
    await page.click(`#token-strip .token-chip[data-index="${query}"]`);
    const n = node.tokens.length;
    // The layer's q and k come from the worker; until then the panel says it is waiting.
    await page.waitForFunction(
      ([n, meta]) =>
        document.querySelector('#explain-body .explain-head')?.textContent.includes(meta) &&
        document.querySelectorAll('#explain-body .explain-table tbody tr').length === n,
      [n, `token ${query + 1} · layer ${layer + 1} · head ${head + 1}`],
    );
    const rows = await page.$$eval('#explain-body .explain-table tbody tr', (trs) =>
      trs.map((tr) => [...tr.cells].map((td) => td.textContent.replace('−', '-'))),
    );
    const { headDim: d, scale, q, k } = projections;
    const weights = headRows(node, layer, head)[query];
    rows.forEach(([, score, logit, weight], j) => {
      let dot = 0;
      for (let c = 0; c < d; c++) dot += q[(head * n + query) * d + c] * k[(head * n + j) * d + c];
      const near = (shown, value, what) =>
        assert.ok(Math.abs(Number(shown) - value) <= 5e-4 + 1e-3 * Math.abs(value), `${what} ${j}`);
      near(score, dot, 'q·k of key');
      if (weights[j] === 0) return assert.equal(logit, '-∞', `masked key ${j}`);
      near(logit, dot * scale, 'logit of key');
      near(weight, weights[j], 'weight of key');
    });
  });

  it('mask surgery changes the predictions, as Node computes them with these masks', async () => {
    await page.click('#tab-matrix');
    const runs = Number(await page.evaluate(() => document.body.dataset.modelRuns));
    await page.check('#surgery-input');
    await waitForRuns(page, runs + 1);
    // The token ids of each list of predictions shown (before and after the surgery).
    const predictionLists = () =>
      page.$$eval('#predictions-body .al-prediction-list', (lists) =>
        lists.map((list) =>
          [...list.querySelectorAll('.al-prediction')].map((item) => Number(item.dataset.id)),
        ),
      );
    const lists = await predictionLists();
    assert.equal(lists.length, 2, 'before and after side by side');
    const masks = 'causal+local:2';
    const surgery = runInNode(fixtures.folder(NEO), TEXT, { masks });
    assert.deepEqual(
      lists[0],
      node.predictions.map((p) => p.id),
    );
    assert.deepEqual(
      lists[1],
      surgery.predictions.map((p) => p.id),
    );
    assert.notDeepEqual(lists[0], lists[1], 'the surgery changed what the model predicts');
    assert.match(await page.textContent('#matrix-caption-b'), /causal\+local:2/);
    // On one layer only: the others keep the model's own masks.
    await page.selectOption('#surgery-layer-select', '2');
    await waitForRuns(page, runs + 2);
    const oneLayer = runInNode(fixtures.folder(NEO), TEXT, {
      masks: node.info.layerMasks.map((own, l) => (l === 2 ? masks : own)),
    });
    const [, after] = await predictionLists();
    assert.deepEqual(
      after,
      oneLayer.predictions.map((p) => p.id),
    );
    assert.notDeepEqual(after, lists[1], 'one layer is not every layer');
    await page.selectOption('#surgery-layer-select', '-1');
    await waitForRuns(page, runs + 3);
    // The heatmap after the surgery is the surgery's own run.
    await page.uncheck('#surgery-input');
    await waitForRuns(page, runs + 4);
  });

  it("the mask sliders edit the surgery's own mask (summary within its stride)", async () => {
    const runs = Number(await page.evaluate(() => document.body.dataset.modelRuns));
    await page.check('#surgery-input');
    await waitForRuns(page, runs + 1);
    await page.check('input[name="pattern"][value="fixed"]');
    await page.fill('#stride-input', '8');
    await page.fill('#summary-input', '6');
    // The untrained layer's mask still has summary 1: the clamp must read the surgery's 6.
    await page.fill('#stride-input', '4');
    await page.waitForFunction(() =>
      /fixed:4:4/.test(document.querySelector('#matrix-caption-b')?.textContent ?? ''),
    );
    await page.uncheck('#surgery-input');
    await page.waitForFunction(
      (count) => Number(document.body.dataset.modelRuns) > count,
      runs + 1,
    );
  });

  it('reads subword pieces as words: sums over key pieces, means over query pieces', async () => {
    const runs = Number(await page.evaluate(() => document.body.dataset.modelRuns));
    await page.selectOption('#layer-select', '1');
    await page.selectOption('#model-head-select', '0');
    await page.check('#words-input');
    await waitForRuns(page, runs + 1);
    const table = await pageTable(page);
    const groups = wordGroups(node.tokens, [tokenize(TEXT, { granularity: 'word' })]);
    const n = node.tokens.length;
    const members = groups.map((g) => g.tokens);
    const flat = Float32Array.from(headRows(node, 1, 0).flat());
    const { weights } = aggregateGroups(flat, { rowGroups: members, colGroups: members, cols: n });
    const g = groups.length;
    assert.deepEqual(table.rows, ['Once', 'upon', 'a', 'time', 'there', 'was', 'a', 'cat']);
    close(
      table.values,
      Array.from({ length: g }, (_, i) => [...weights.slice(i * g, (i + 1) * g)]),
      'words',
    );
    const title = await page.getAttribute('#token-strip .token-chip[data-index="1"]', 'title');
    assert.ok(title.startsWith('upon: '), `the pieces on hover: ${title}`);
    await page.uncheck('#words-input');
    await waitForRuns(page, runs + 2);
  });

  it('exports a snapshot the widget draws the same, with no model and no compute', async () => {
    await page.selectOption('#layer-select', '2');
    await page.selectOption('#model-head-select', '1');
    await page.click('#tab-matrix');
    const shown = await pageTable(page);
    await page.selectOption('#snapshot-scope', 'layer');
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.click('#export-snapshot'),
    ]);
    const text = readFileSync(await download.path(), 'utf8');
    writeFileSync(join(site, 'lens', 'snapshot.json'), text);
    const snapshot = JSON.parse(text);
    assert.deepEqual([snapshot.model.id, snapshot.layers, snapshot.heads], [NEO, [2], [0, 1]]);
    assert.deepEqual(snapshot.selected, { layer: 2, head: 1 });
    // It carries the rollout of every token over all layers (the read checks each row sums to 1).
    assert.equal(readSnapshot(text).rollout.length, shown.rows.length ** 2);
    // The view's own exports name the model, layer and head too.
    const exported = async (button) => {
      const [file] = await Promise.all([page.waitForEvent('download'), page.click(button)]);
      return { name: file.suggestedFilename(), text: readFileSync(await file.path(), 'utf8') };
    };
    const json = await exported('#export-json');
    assert.equal(json.name, 'attnlens-layer3-head2.json');
    const numbers = JSON.parse(json.text);
    assert.deepEqual([numbers.model.id, numbers.layer, numbers.head], [NEO, 2, 1]);
    assert.deepEqual(
      numbers.heads[1].weights,
      shown.values.map((row) => row.map((v) => (v === 'm' ? 0 : v))),
    );
    const svg = await exported('#export-svg');
    assert.ok(svg.text.includes(`attnlens · ${NEO} · layer 3 · head 2`), svg.text.slice(0, 400));

    const lens = await newPage(browser.context);
    const wasm = [];
    lens.on('request', (r) => /\.wasm|\/resolve\//.test(r.url()) && wasm.push(r.url()));
    await lens.goto(`${browser.base}/lens/snapshot.html`);
    await lens.waitForFunction(() => document.getElementById('snap').dataset.state === 'ready');
    await lens.locator('#snap').screenshot({ path: artifact('widget-snapshot.png') });
    const drawn = await widgetTable(lens, 'snap');
    assert.deepEqual(drawn.rows, shown.rows);
    assert.deepEqual(drawn.values, shown.values);
    assert.deepEqual(wasm, [], 'no engine and no model were fetched');
    assert.equal(await lens.textContent('#violations'), '0');
    assert.deepEqual(problems(lens), []);
    await lens.close();
  });

  it('a widget with model="stories260K" runs the bundled model at once: no click', async () => {
    const lens = await newPage(browser.context);
    const hubRequests = hub.requests.length;
    await lens.goto(`${browser.base}/lens/bundled.html`);
    await lens.waitForFunction(
      () => document.getElementById('story').dataset.state === 'ready',
      null,
      { timeout: 30000 },
    );
    assert.equal(await lens.locator('#story >> .load-model').count(), 0, 'no Load button');
    assert.equal(hub.requests.length, hubRequests, 'nothing asked of the Hub');
    // Layer 5's eight heads, drawn from the trained model.
    const shown = await lens.evaluate(
      () => document.getElementById('story').shadowRoot.textContent,
    );
    assert.match(shown, /stories260K|llama/);
    assert.equal(await lens.locator('#story >> [data-head]').count(), 8);
    await lens.locator('#story').screenshot({ path: artifact('widget-stories260K.png') });
    assert.equal(await lens.textContent('#violations'), '0');
    assert.deepEqual(problems(lens), []);
    await lens.close();
  });

  it('a widget with a model computes only after a click on "Load model (size)"', async () => {
    const lens = await newPage(browser.context);
    const before = downloads('model.safetensors');
    await lens.goto(`${browser.base}/lens/model.html`);
    await lens.waitForFunction(
      () => document.getElementById('live').dataset.state === 'waiting-load',
    );
    const button = lens.locator('#live >> .load-model');
    const size = formatBytes(folderBytes(fixtures.folder(NEO)));
    await lens.waitForFunction(
      (label) =>
        document.getElementById('live').shadowRoot.querySelector('.load-model')?.textContent ===
        label,
      `Load model (${size})`,
    );
    assert.equal(downloads('model.safetensors'), before, 'nothing downloaded on page load');
    await lens.locator('#live').screenshot({ path: artifact('widget-load-model.png') });
    await button.click();
    await lens.waitForFunction(
      () => document.getElementById('live').dataset.state === 'ready',
      null,
      {
        timeout: 30000,
      },
    );
    const drawn = await widgetTable(lens, 'live');
    close(drawn.values, headRows(node, 1, 1), 'widget layer 2 head 2');
    assert.equal(await lens.textContent('#violations'), '0');
    assert.deepEqual(problems(lens), []);
    await lens.close();
  });

  it('runs files dropped on the page, and keeps them out of the link', async () => {
    await page.click('#model-change');
    const folder = fixtures.folder(NEO);
    const files = readdirSync(folder).map((name) => ({
      name,
      bytes: [...readFileSync(join(folder, name))],
    }));
    const dataTransfer = await page.evaluateHandle((files) => {
      const transfer = new DataTransfer();
      for (const { name, bytes } of files)
        transfer.items.add(new File([new Uint8Array(bytes)], name));
      return transfer;
    }, files);
    const runs = Number(await page.evaluate(() => document.body.dataset.modelRuns));
    const served = hub.requests.length;
    await page.dispatchEvent('#model-drop', 'drop', { dataTransfer });
    await page.click('#model-load');
    await waitForRuns(page, runs + 1);
    assert.match(await page.textContent('.model-status.is-ready'), /^Loaded: gpt_neo · 3 layers/);
    assert.equal(await page.textContent('.model-title'), `Your files (${files.length})`);
    close((await pageTable(page)).values, headRows(node, 0, 0), 'dropped files, layer 1 head 1');
    // The link is written a moment after the last change: it names neither model nor layer.
    await page.waitForFunction(() => new URLSearchParams(location.search).has('text'));
    await page.waitForFunction(() => !/[?&](model|layer)=/.test(location.search));
    assert.deepEqual(hub.requests.slice(served), [], 'nothing asked of the Hub');
  });

  it('says what is wrong with broken model files, and cancels a download', async () => {
    await page.click('#model-change');
    await page.fill('#model-hub-id', BROKEN);
    await page.click('#model-hub-form button[type="submit"]');
    await page.waitForSelector('#model-load');
    await page.click('#model-load');
    const alert = page.locator('#model-details [role="alert"]');
    await alert.waitFor();
    assert.match(
      await alert.textContent(),
      /^Could not load attnlens\/broken-gpt2: transformer\.h\.1\.attn\.c_proj\.weight: .*NaN/,
    );

    await page.fill('#model-hub-id', SLOW);
    await page.click('#model-hub-form button[type="submit"]');
    await page.waitForSelector('#model-load');
    await page.click('#model-load');
    await page.waitForSelector('#model-progress-file');
    await page.click('#model-cancel');
    await page.waitForFunction(() =>
      document.getElementById('model-details').textContent.includes('Cancelled'),
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.ok(hub.aborted.includes('model.safetensors'), 'the server saw the download stop');
    const cached = await page.evaluate(async () =>
      (await (await caches.open('attnlens-models')).keys()).map((r) => r.url),
    );
    assert.ok(!cached.some((url) => url.includes('slow-download') && url.endsWith('.safetensors')));
  });

  it('loads again from the cache with the server stopped; the link restores the view', async () => {
    await hub.close();
    const again = await newPage(browser.context);
    const link = new URLSearchParams({ lang: 'en', model: NEO, text: TEXT, layer: 3, head: 2 });
    await again.goto(`${browser.base}/demo/?${link}`);
    await waitForRuns(again, 1);
    assert.match(
      await again.textContent('.model-status.is-ready'),
      /^Loaded from this browser’s cache, no network needed/,
    );
    assert.equal(await again.inputValue('#layer-select'), '2');
    assert.equal(await again.inputValue('#model-head-select'), '1');
    assert.match(await again.textContent('#view-caption'), /^layer 3 · head 2 of 2/);
    close((await pageTable(again)).values, headRows(node, 2, 1), 'offline layer 3 head 2');
    await again.close();
  });
});
