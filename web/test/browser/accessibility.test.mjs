// axe-core over every view of the demo (matrix, lines, heads, numbers, with the explain and cost
// panels on the page; self- and cross-attention), in English and Chinese, over the real-model
// views that read a whole run (rollout and flow, attention sinks) and two models side by side on
// the bundled stories260K, and over the widget's sample blog post (the Picture mode of vision
// models is checked on its Hub fixture in models-picture.test.mjs). A serious or critical finding
// fails the test with its rule, the elements it names and axe's own summary of what is wrong.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { blockingFindings } from './axe.mjs';
import { computedCount, openDemo, waitForRecompute } from './demo-page.mjs';
import { newPage, openBrowser } from './harness.mjs';
import { addMarian, MARIAN, startHub, useHub, waitForTranslations } from './model-page-support.mjs';

const VIEWS = ['matrix', 'lines', 'heads', 'numbers'];
// A mask in each mode, so masked cells (and their text in the Numbers view) are checked too.
const MASKS = { self: 'causal', cross: 'align:1+pad:0' };

let browser;
before(async () => {
  browser = await openBrowser();
});
after(async () => {
  await browser?.close();
});

for (const lang of ['en', 'zh']) {
  for (const mode of ['self', 'cross']) {
    test(`axe finds nothing serious in any view (${lang}, ${mode}-attention)`, async () => {
      const page = await openDemo(browser, `?lang=${lang}&mode=${mode}&mask=${MASKS[mode]}`);
      const findings = [];
      for (const view of VIEWS) {
        await page.click(`#tab-${view}`);
        await page.waitForFunction(
          (view) => !document.getElementById(`panel-${view}`).hidden,
          view,
        );
        // A query picked, so the explain panel and the views show their selected states too.
        if (view === 'matrix') {
          const previous = await computedCount(page);
          await page.click('#token-strip .token-chip:nth-child(2)');
          await page.waitForFunction(() => document.querySelector('#explain-body .steps'));
          if ((await computedCount(page)) !== previous) await waitForRecompute(page, previous);
        }
        findings.push(...(await blockingFindings(page)).map((f) => `[${view}] ${f}`));
      }
      assert.deepEqual(findings, []);
      assert.deepEqual(page.problems, []);
      await page.close();
    });
  }
}

// The other real-model views are checked on Hub fixtures in models-views.test.mjs.
for (const lang of ['en', 'zh']) {
  test(`axe finds nothing serious in rollout and flow, attention sinks (${lang})`, async () => {
    const page = await newPage(browser.context, { viewport: { width: 1100, height: 800 } });
    const link = new URLSearchParams({ lang, model: 'stories260K', text: 'Once upon a time' });
    await page.goto(`${browser.base}/demo/?${link}&view=rollout`);
    await page.waitForSelector('#model-load, .model-status.is-ready', { timeout: 30000 });
    if (await page.$('#model-load')) await page.click('#model-load');
    const findings = [];
    for (const [view, drawn] of [
      ['rollout', '#rollout-view table'],
      ['sinks', '#sinks-plot svg'],
    ]) {
      await page.click(`#tab-${view}`);
      await page.waitForSelector(drawn, { timeout: 30000 });
      findings.push(...(await blockingFindings(page)).map((f) => `[${view}] ${f}`));
    }
    assert.deepEqual(findings, []);
    await page.close();
  });
}

// "Compare two models", opened by its link: stories260K beside itself (bundled, no network).
for (const lang of ['en', 'zh']) {
  test(`axe finds nothing serious in two models side by side (${lang})`, async () => {
    const page = await newPage(browser.context, { viewport: { width: 1100, height: 800 } });
    const link = new URLSearchParams({
      lang,
      model: 'stories260K',
      second: 'stories260K',
      text: 'Once upon a time',
      view: 'model',
    });
    await page.goto(`${browser.base}/demo/?${link}`);
    await page.waitForSelector('.compare-column[data-side="1"] .al-model-cell', { timeout: 30000 });
    assert.deepEqual(await blockingFindings(page), []);
    await page.close();
  });
}

test('axe finds nothing serious on the widget sample post', async () => {
  const page = await newPage(browser.context, { viewport: { width: 1100, height: 800 } });
  await page.goto(`${browser.base}/widget/blog.html`);
  for (const id of ['widget-local', 'widget-causal', 'widget-cross']) {
    await page.locator(`#${id}`).scrollIntoViewIfNeeded();
    await page.waitForFunction((id) => document.getElementById(id).dataset.state === 'ready', id, {
      timeout: 20000,
    });
  }
  assert.deepEqual(await blockingFindings(page), []);
  assert.deepEqual(page.problems, []);
  await page.close();
});

// The Translate mode (a tiny Marian served as the Hub holds opus-mt-zh-en), once translated.
test('axe finds nothing serious in the Translate mode (en, zh)', async () => {
  const root = mkdtempSync(join(tmpdir(), 'attnlens-axe-hub-'));
  addMarian(root);
  const hub = await startHub(root);
  try {
    // Last in this file: every later page of the shared context would ask this Hub.
    await useHub(browser.context, hub.url);
    for (const lang of ['en', 'zh']) {
      const page = await newPage(browser.context);
      const link = new URLSearchParams({ lang, model: MARIAN, text: '我爱自然语言处理' });
      await page.goto(`${browser.base}/demo/?${link}`);
      await page.waitForSelector('#model-load, .model-status.is-ready', { timeout: 30000 });
      if (await page.$('#model-load')) await page.click('#model-load');
      await waitForTranslations(page, 1);
      assert.deepEqual(await blockingFindings(page), [], lang);
      await page.close();
    }
  } finally {
    await hub.close();
    rmSync(root, { recursive: true, force: true });
  }
});
