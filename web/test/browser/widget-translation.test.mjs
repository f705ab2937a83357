// <attn-lens> and translations: a snapshot of the tiny Marian's translation (written in Node
// from its real translate()) draws its alignment with no model, no wasm and no Hub request; and
// model="Helsinki-NLP/opus-mt-zh-en" (the tiny Marian served in the Hub's layout) offers a Load
// button with the download size, then shows the translation and its cross-attention.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadModel } from '../../src/models/index.js';
import { translationRun, writeSnapshot } from '../../src/snapshot/write.js';
import { formatBytes } from '../../src/views/dom.js';
import { artifact, newPage, openBrowser } from './harness.mjs';
import {
  addMarian,
  folderBytes,
  lensPage,
  MARIAN,
  siteWithLensPages,
  startHub,
  useHub,
  VIOLATIONS_JS,
} from './model-page-support.mjs';

const TEXT = '我爱自然语言处理';

describe('<attn-lens> with a translation', () => {
  let root, folder, hub, site, browser, expected;
  const problems = (page) => page.problems.filter((p) => !p.includes(new URL(hub.url).origin));

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'attnlens-widget-marian-'));
    folder = addMarian(root);
    const model = await loadModel(folder);
    const result = await model.translate(TEXT);
    const eos = model.tokenizer.special.eos;
    expected = {
      text: result.text,
      source: result.source.tokens.length,
      target: result.steps.length,
    };
    const all = (n) => Array.from({ length: n }, (_, i) => i);
    const snapshot = writeSnapshot(
      translationRun({
        model: { id: MARIAN, revision: 'main', ...model.info },
        text: TEXT,
        source: result.source.tokens,
        encoderAttention: result.encoderAttention,
        steps: result.steps.map((s) => ({
          ...s,
          text: s.id === eos.id ? eos.text : s.text,
          special: s.id === eos.id,
        })),
        translation: result.text,
      }),
      { layers: all(model.info.encoderLayers), heads: all(model.info.heads) },
    );
    model.dispose();
    hub = await startHub(root);
    site = siteWithLensPages({
      'translation.html': lensPage(
        '<attn-lens id="snap" snapshot="translation.json" view="lines"></attn-lens>',
      ),
      'marian.html': lensPage(`<attn-lens id="live" model="${MARIAN}" text="${TEXT}"></attn-lens>`),
      'translation.json': JSON.stringify(snapshot),
      'violations.js': VIOLATIONS_JS,
    });
    browser = await openBrowser({ root: site });
    await useHub(browser.context, hub.url);
  });
  after(async () => {
    await browser?.close();
    await hub?.close();
    rmSync(root, { recursive: true, force: true });
    rmSync(site, { recursive: true, force: true });
  });

  const shadowText = (page, id, selector) =>
    page.evaluate(
      ([id, selector]) =>
        document.getElementById(id).shadowRoot.querySelector(selector)?.textContent ?? null,
      [id, selector],
    );

  it('draws a snapshot of a translation with no download', async () => {
    const page = await newPage(browser.context);
    const fetched = [];
    page.on('request', (r) => /\.wasm|\/resolve\/|\/api\//.test(r.url()) && fetched.push(r.url()));
    await page.goto(`${browser.base}/lens/translation.html`);
    await page.waitForFunction(() => document.getElementById('snap').dataset.state === 'ready');
    assert.equal(await shadowText(page, 'snap', '.translation'), expected.text);
    const count = (selector) =>
      page.evaluate(
        (selector) => document.getElementById('snap').shadowRoot.querySelectorAll(selector).length,
        selector,
      );
    // The lines view: the translation's tokens (queries) and the source's (keys).
    assert.equal(await count('.al-lines-querys .al-token'), expected.target);
    assert.equal(await count('.al-lines-keys .al-token'), expected.source);
    await page.locator('#snap').screenshot({ path: artifact('widget-translation-snapshot.png') });
    assert.deepEqual(fetched, []);
    assert.equal(await page.textContent('#violations'), '0');
    assert.deepEqual(problems(page), []);
    await page.close();
  });

  it('translates a Hub model after the Load click, which names the size', async () => {
    const page = await newPage(browser.context);
    await page.goto(`${browser.base}/lens/marian.html`);
    const size = formatBytes(folderBytes(folder));
    await page.waitForFunction(
      (size) =>
        document.getElementById('live').shadowRoot.querySelector('.load-model')?.textContent ===
        `Load model (${size})`,
      size,
    );
    assert.equal(
      await page.evaluate(() => document.getElementById('live').dataset.state),
      'waiting-load',
    );
    await page.evaluate(() =>
      document.getElementById('live').shadowRoot.querySelector('.load-model').click(),
    );
    await page.waitForFunction(() => document.getElementById('live').dataset.state === 'ready', {
      timeout: 60000,
    });
    assert.equal(await shadowText(page, 'live', '.translation'), expected.text);
    // Without a layer attribute, the decoder's last layer.
    assert.equal(
      await page.evaluate(
        () => document.getElementById('live').shadowRoot.querySelector('select').value,
      ),
      '1',
    );
    await page.locator('#live').screenshot({ path: artifact('widget-translation-model.png') });
    assert.deepEqual(problems(page), []);
    await page.close();
  });
});
