// The real-model views as a reader sees them, in English and Chinese and at phone width: axe-core
// over the model view, the head view, token focus, the matrix with mask surgery and the
// predictions (GPT and BERT), and screenshots of each into test-artifacts/ to look at. Tiny
// fixtures under the page's ids (model-page-support.mjs); the first load of each model downloads,
// later ones come from the cache.
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { blockingFindings } from './axe.mjs';
import { artifact, newPage, openBrowser } from './harness.mjs';
import {
  BERT,
  hubFixtures,
  NEO,
  runInNode,
  startHub,
  useHub,
  waitForRuns,
} from './model-page-support.mjs';

const STORIES = 'stories260K';
const TEXTS = {
  en: {
    [NEO]: 'Once upon a time there was a cat',
    [BERT]: 'the cat [MASK] on the mat',
    [STORIES]: 'Once upon a time, there was a little girl named Lily.',
  },
  zh: { [NEO]: 'Once upon a time there was a cat', [BERT]: 'the cat [MASK] on the mat' },
};

describe('real-model views: accessibility and screenshots', () => {
  let fixtures, hub, browser;
  const problems = (page) => page.problems.filter((p) => !p.includes(new URL(hub.url).origin));

  before(async () => {
    fixtures = hubFixtures();
    hub = await startHub(fixtures.root);
    browser = await openBrowser();
    await useHub(browser.context, hub.url);
  });
  after(async () => {
    await browser?.close();
    await hub?.close();
    rmSync(fixtures.root, { recursive: true, force: true });
  });

  // The demo with `model` loaded (the Load button pressed unless it loads from the cache).
  async function openModel(lang, model, { viewport, view = 'model' } = {}) {
    const page = await newPage(browser.context, { viewport });
    const link = new URLSearchParams({ lang, model, text: TEXTS[lang][model], view });
    await page.goto(`${browser.base}/demo/?${link}`);
    await page.waitForSelector('#model-load, .model-status.is-ready', { timeout: 30000 });
    if (await page.$('#model-load')) await page.click('#model-load');
    await waitForRuns(page, 1);
    await page.waitForFunction(() => document.querySelector('#explain-body .steps'));
    return page;
  }

  async function view(page, name) {
    await page.click(`#tab-${name}`);
    await page.waitForFunction((name) => !document.getElementById(`panel-${name}`).hidden, name);
  }

  it('the "Who is it?" and cross cards open a real model; arrows move in the grid', async () => {
    const page = await newPage(browser.context);
    await page.goto(`${browser.base}/demo/?lang=en`);
    await page.waitForFunction(() => Number(document.body.dataset.computed) >= 1);
    await page.click('[data-idea-real="ideaPronounTitle"]');
    await page.waitForSelector('#model-load');
    assert.equal(
      await page.getAttribute('#model-list [data-model="distilgpt2"]', 'aria-checked'),
      'true',
    );
    assert.equal(await page.getAttribute('#tab-focus', 'aria-selected'), 'true');
    await page.click('#model-load');
    await waitForRuns(page, 1);
    assert.match(await page.textContent('#focus-table caption'), /^Where “/);
    // The model view's grid: one tab stop, arrows move across heads and down layers.
    await page.click('#tab-model');
    await page.focus('#model-grid [data-cell="0:0"]');
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowDown');
    assert.equal(await page.evaluate(() => document.activeElement.dataset.cell), '1:1');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => !document.getElementById('panel-matrix').hidden);
    assert.match(await page.textContent('#view-caption'), /^layer 2 · head 2 of 3/);

    await page.goto(`${browser.base}/demo/?lang=en`);
    await page.waitForFunction(() => Number(document.body.dataset.computed) >= 1);
    await page.click('[data-idea-real="ideaCrossTitle"]');
    await page.waitForSelector('#model-load');
    assert.equal(await page.inputValue('#pair-text'), 'I love natural language processing');
    await page.click('#model-load');
    await waitForRuns(page, 1);
    assert.equal(await page.isChecked('#block-input'), true);
    assert.match(await page.textContent('#view-caption'), /the first sentence’s rows/);
    assert.deepEqual(problems(page), []);
    await page.close();
  });

  it('refuses a model the device reports too little memory for, and says why', async () => {
    const page = await newPage(browser.context);
    await page.addInitScript(() =>
      Object.defineProperty(navigator, 'deviceMemory', { get: () => 0.0001 }),
    );
    await page.goto(`${browser.base}/demo/?lang=en&model=${encodeURIComponent(BERT)}`);
    const alert = page.locator('#model-details [role="alert"]');
    await alert.waitFor();
    assert.match(await alert.textContent(), /^Will not fit: while it loads it needs about .* GB/);
    assert.equal(await page.$('#model-load'), null);
    await page.close();
  });

  // After the memory check: a model once loaded comes from the cache without it.
  it('the grid says each head’s probe scores and text label, on hover and focus', async () => {
    for (const model of [NEO, BERT]) {
      const node = runInNode(fixtures.folder(model), TEXTS.en[model]);
      const page = await openModel('en', model);
      await page.waitForFunction(
        () => !document.querySelector('#model-grid .al-model-cell')?.title.includes('measuring'),
      );
      const cells = await page.$$eval('#model-grid .al-model-cell', (list) =>
        list.map((cell) => ({
          cell: cell.dataset.cell,
          label: cell.dataset.label,
          probe: cell.dataset.probe,
          title: cell.title,
          name: cell.getAttribute('aria-label'),
        })),
      );
      assert.equal(cells.length, node.info.layers * node.info.heads);
      cells.forEach((cell, k) => {
        const score = node.scores[k];
        const scores =
          `on random tokens repeated twice: induction ${score.induction.toFixed(2)} (the token ` +
          `after the first occurrence), previous token ${score.previousToken.toFixed(2)}, sink ` +
          `${score.sink.toFixed(2)} (first and special tokens)`;
        const head = `layer ${score.layer + 1}, head ${score.head + 1}: `;
        assert.ok(cell.title.startsWith(head), cell.title);
        assert.ok(cell.title.includes(` · ${scores} · on this text: `), cell.title);
        assert.equal(cell.name, cell.title, 'the button is named by the same words');
        // The probe's label when the head earns one, else this text's.
        if (score.label) assert.equal(cell.label, score.label);
        assert.equal(cell.probe, String(Boolean(score.label)));
      });
      const detail = () => page.textContent('#model-grid .al-model-detail');
      const title = (cell) => page.getAttribute(`#model-grid [data-cell="${cell}"]`, 'title');
      assert.equal(await detail(), await title('0:0'), 'the selected head before any hover');
      await page.hover('#model-grid [data-cell="1:1"]');
      assert.equal(await detail(), await title('1:1'), 'hover');
      await page.focus('#model-grid [data-cell="0:0"]');
      await page.mouse.move(0, 0);
      await page.keyboard.press('ArrowRight');
      assert.equal(await detail(), await title('0:1'), 'keyboard focus');
      await page
        .locator('#stage')
        .screenshot({ path: artifact(`model-view-scores-${model.replace(/\W+/g, '-')}.png`) });
      assert.deepEqual(problems(page), []);
      await page.close();
    }
  });

  // A llama2.c checkpoint inside a Hub repo, typed into "Another Hub id" as loadModel() and the
  // CLI take it (karpathy/tinyllamas/stories15M.bin is one): the box takes it, the model loads
  // from the Hub with the tokenizer beside it, and the link names it.
  it('"Another Hub id" takes a llama2.c checkpoint path inside a Hub repo', async () => {
    const repo = 'attnlens/llama2c-stories';
    const bundled = new URL('../../src/models/bundled/stories260K/', import.meta.url);
    mkdirSync(join(fixtures.folder(repo), 'out'), { recursive: true });
    for (const name of ['stories260K.bin', 'tok512.bin']) {
      copyFileSync(new URL(name, bundled), join(fixtures.folder(repo), 'out', name));
    }
    const path = `${repo}/out/stories260K.bin`;
    const page = await newPage(browser.context);
    await page.goto(`${browser.base}/demo/?lang=en`);
    await page.waitForFunction(() => Number(document.body.dataset.computed) >= 1);
    await page.click('label:has(input[name="model-kind"][value="real"])');
    await waitForRuns(page, 1); // the bundled model, picked first
    await page.click('#model-change');
    // What loadModel() refuses, the box refuses too, saying why.
    await page.fill('#model-hub-id', `${repo}/out/config.json`);
    await page.click('#model-hub-form button[type="submit"]');
    assert.match(await page.textContent('#model-hub-error'), /is not a Hugging Face model id/);
    await page.fill('#model-hub-id', `${repo}/../stories260K.bin`);
    await page.click('#model-hub-form button[type="submit"]');
    assert.match(await page.textContent('#model-hub-error'), /a bad file path/);
    await page.fill('#model-hub-id', path);
    await page.click('#model-hub-form button[type="submit"]');
    assert.equal(await page.textContent('#model-hub-error'), '');
    await page.waitForSelector('#model-load');
    await page.click('#model-load');
    await waitForRuns(page, 2);
    assert.match(await page.textContent('.model-status.is-ready'), /^Loaded: llama · 5 layers/);
    await page.waitForFunction(
      (path) => new URLSearchParams(location.search).get('model') === path,
      path,
    );
    assert.deepEqual(problems(page), []);
    await page.close();
  });

  // A trained model earns labels on the probe: stories260K's previous-token heads (layers and
  // heads counted from 1 as the page does: L2H4, L2H7, L3H1, L4H7), from Node's own scores.
  it('the bundled stories260K shows the previous-token heads its probe scores earn', async () => {
    const node = runInNode(STORIES, TEXTS.en[STORIES]);
    const earned = node.scores.filter((score) => score.label).map((s) => `${s.layer}:${s.head}`);
    assert.deepEqual(earned, ['1:3', '1:6', '2:0', '3:6']);
    assert.ok(node.scores.every((score) => score.label !== 'induction'));
    const page = await openModel('en', STORIES);
    await page.waitForFunction(
      () => !document.querySelector('#model-grid .al-model-cell')?.title.includes('measuring'),
    );
    const cells = await page.$$eval('#model-grid .al-model-cell', (list) =>
      list.map((cell) => ({
        cell: cell.dataset.cell,
        label: cell.dataset.label,
        probe: cell.dataset.probe,
        tag: cell.querySelector('.al-model-tag')?.textContent,
        title: cell.title,
      })),
    );
    assert.equal(cells.length, node.info.layers * node.info.heads);
    const probeLabelled = cells.filter((cell) => cell.probe === 'true');
    assert.deepEqual(
      probeLabelled.map((cell) => cell.cell),
      earned,
    );
    for (const cell of probeLabelled) {
      const score = node.scores.find((s) => `${s.layer}:${s.head}` === cell.cell);
      assert.equal(cell.label, 'previous-token');
      assert.equal(cell.tag, 'previous token', cell.cell);
      assert.ok(
        cell.title.includes(`previous token ${score.previousToken.toFixed(2)}`),
        cell.title,
      );
    }
    assert.ok(cells.every((cell) => cell.label !== 'induction'));
    await page
      .locator('#stage')
      .screenshot({ path: artifact('model-view-scores-stories260K.png') });
    assert.deepEqual(problems(page), []);
    await page.close();
  });

  for (const lang of ['en', 'zh']) {
    it(`model view, head view, token focus, surgery and predictions (${lang})`, async () => {
      const page = await openModel(lang, NEO);
      const findings = [];
      const check = async (what) =>
        findings.push(...(await blockingFindings(page)).map((f) => `[${what}] ${f}`));
      await check('model');
      await page.locator('#stage').screenshot({ path: artifact(`model-view-${lang}.png`) });
      await view(page, 'overlay');
      await check('overlay');
      await page.locator('#stage').screenshot({ path: artifact(`head-view-${lang}.png`) });
      await page.click('#token-strip .token-chip[data-index="3"]');
      await view(page, 'focus');
      await check('focus');
      await page.locator('#stage').screenshot({ path: artifact(`token-focus-${lang}.png`) });
      await view(page, 'matrix');
      await page.check('#surgery-input');
      await waitForRuns(page, 2);
      await check('surgery');
      await page.locator('#stage').screenshot({ path: artifact(`mask-surgery-${lang}.png`) });
      await page.locator('#predictions').screenshot({ path: artifact(`predictions-${lang}.png`) });
      await page
        .locator('#explain')
        .screenshot({ path: artifact(`explain-real-head-${lang}.png`) });
      await page.locator('.model-bar').screenshot({ path: artifact(`model-picker-${lang}.png`) });
      assert.deepEqual(findings, []);
      assert.deepEqual(problems(page), []);
      await page.close();
    });

    it(`BERT fills in [MASK], with the button that puts it in (${lang})`, async () => {
      const page = await openModel(lang, BERT, { view: 'matrix' });
      assert.equal(await page.isVisible('#insert-mask'), true);
      assert.equal(await page.locator('#predictions-body .al-prediction-list').count(), 1);
      // The button puts a second [MASK] at the cursor (after "cat"); both get their fillers.
      await page.focus('#main-text');
      await page.evaluate(() => document.getElementById('main-text').setSelectionRange(7, 7));
      await page.click('#insert-mask');
      await waitForRuns(page, 2);
      assert.equal(await page.inputValue('#main-text'), 'the cat[MASK] [MASK] on the mat');
      await page.waitForFunction(
        () => document.querySelectorAll('#predictions-body .al-prediction-list').length === 2,
      );
      await page
        .locator('#predictions')
        .screenshot({ path: artifact(`predictions-bert-${lang}.png`) });
      assert.deepEqual(await blockingFindings(page), []);
      assert.deepEqual(problems(page), []);
      await page.close();
    });

    it(`at phone width, 390 x 844 (${lang})`, async () => {
      const page = await openModel(lang, NEO, { viewport: { width: 390, height: 844 } });
      await page.screenshot({ path: artifact(`phone-model-${lang}.png`), fullPage: true });
      const overflow = await page.evaluate(
        () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
      );
      assert.equal(overflow, 0, 'nothing wider than the phone');
      assert.deepEqual(await blockingFindings(page), []);
      await page.close();
    });
  }
});
