// "Compare two models" as a reader uses it: stories260K (bundled) beside a tiny GPT-Neo in the
// Hub's layout served by the test (no network). What both take in memory shows before the
// second downloads; each column's tokens, head labels and predictions equal that model's own run
// in Node; a head picked in one grid is picked in the other; a pair too large is refused in
// words; Remove frees the second model; phones stack the columns. Screenshots go to
// test-artifacts/. axe-core runs over the panel in accessibility.test.mjs.
import assert from 'node:assert/strict';
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createAttention } from '../../src/index.js';
import { labelHeads } from '../../src/interpret/head-labels.js';
import { layerVisibility } from '../../src/interpret/layer-masks.js';
import { describeModel } from '../../src/models/index.js';
import { tinyModel } from '../support/tiny-models.mjs';
import { artifact, newPage, openBrowser } from './harness.mjs';
import {
  addMarian,
  hubFixtures,
  MARIAN,
  NEO,
  runInNode,
  SLOW,
  startHub,
  useHub,
  waitForRuns,
} from './model-page-support.mjs';

const TEXT = 'Once upon a time, there was a little girl named Lily.';
const HUGE = 'attnlens/huge-gpt2';

/** What the page's worker labels each head with, from a Node run's attention. */
async function nodeLabels(run) {
  const engine = await createAttention({ backend: 'wasm' });
  try {
    const n = run.tokens.length;
    const masks = await layerVisibility(engine, run.info.layerMasks, n);
    const special = run.tokens.map((token) => token.special);
    return labelHeads(Float32Array.from(run.attention), { ...run.info, n, masks, special });
  } finally {
    engine.dispose();
  }
}

describe('two models side by side', () => {
  let fixtures, hub, browser, stories, neo;
  const problems = (page) =>
    page.problems.filter(
      (p) => !p.includes(new URL(hub.url).origin) && !p.includes('https://huggingface.co/'),
    );

  before(async () => {
    fixtures = hubFixtures();
    // A config whose weights would need far more than the 2 GiB of wasm memory (never loaded).
    cpSync(tinyModel('gpt2'), fixtures.folder(HUGE), { recursive: true });
    const config = join(fixtures.folder(HUGE), 'config.json');
    const huge = {
      ...JSON.parse(readFileSync(config, 'utf8')),
      n_embd: 4096,
      n_head: 32,
      n_layer: 48,
    };
    writeFileSync(config, JSON.stringify(huge));
    addMarian(fixtures.root);
    hub = await startHub(fixtures.root);
    browser = await openBrowser();
    await useHub(browser.context, hub.url);
    stories = runInNode('stories260K', TEXT);
    neo = runInNode(fixtures.folder(NEO), TEXT);
  });
  after(async () => {
    await browser?.close();
    await hub?.close();
    rmSync(fixtures.root, { recursive: true, force: true });
  });

  async function openStories(lang, viewport) {
    const page = await newPage(browser.context, { viewport });
    const link = new URLSearchParams({ lang, model: 'stories260K', text: TEXT, view: 'model' });
    await page.goto(`${browser.base}/demo/?${link}`);
    await waitForRuns(page, 1);
    await page.click('#compare-open');
    await page.waitForSelector('#compare-source');
    return page;
  }

  const compareRuns = (page, count) =>
    page.waitForFunction((n) => Number(document.body.dataset.compareRuns ?? 0) >= n, count, {
      timeout: 30000,
    });

  async function pickSecond(page, id) {
    await page.selectOption('#compare-source', id);
    await page.waitForSelector('.compare-memory, #compare-body .is-error', { timeout: 30000 });
  }

  it('shows the memory both take first, then both models on the same text', async () => {
    const page = await openStories('en');
    // Opened from the keyboard or the pointer, the list of models takes focus.
    assert.equal(await page.evaluate(() => document.activeElement.id), 'compare-source');
    await pickSecond(page, NEO);
    const about = await describeModel(fixtures.folder(NEO));
    const total = stories.info.bytes + about.memoryBytes + about.loadScratchBytes;
    assert.equal(await page.getAttribute('.compare-memory', 'data-total'), String(total));
    assert.equal(await page.getAttribute('.compare-memory', 'data-fits'), 'true');
    assert.match(
      await page.textContent('.compare-memory'),
      new RegExp(`^stories260K holds .* ${NEO} would add .* together, of the 2\\.0 GiB`),
    );
    // The link names the second model (written a moment after each change).
    await page.waitForFunction(() => location.search.includes('second=roneneldan%2FTinyStories'));
    await page.click('#compare-load');
    await compareRuns(page, 1);
    for (const [side, name, run] of [
      [0, 'stories260K', stories],
      [1, NEO, neo],
    ]) {
      const column = `.compare-column[data-side="${side}"]`;
      assert.match(await page.textContent(`${column} .compare-title`), new RegExp(`^${name} · `));
      const tokens = await page.$$eval(`${column} .compare-tokens li`, (items) => items.length);
      assert.equal(tokens, run.tokens.length, `${name}: its own tokens`);
      const cells = await page.$$eval(`${column} .al-model-cell`, (list) =>
        list.map((cell) => cell.dataset.label),
      );
      const labels = (await nodeLabels(run)).flat().map((head) => head.label ?? '');
      assert.deepEqual(cells, labels, `${name}: each head's label on this text`);
      const predicted = await page.$$eval(`${column} .al-prediction`, (items) =>
        items.map((item) => Number(item.dataset.id)),
      );
      assert.deepEqual(
        predicted,
        run.predictions.map((p) => p.id),
        `${name}: its predictions`,
      );
    }
    // The two tokenizers differ (llama2.c's 512 pieces, the fixture's byte-level BPE): said.
    assert.equal(await page.getAttribute('.compare-tokens-note', 'data-differ'), 'true');
    assert.match(await page.textContent('.compare-tokens-note'), /split this text differently/);
    await page.locator('#compare').screenshot({ path: artifact('models-compare-en.png') });
    assert.deepEqual(problems(page), []);
    await page.close();
  });

  it('a head picked in one grid is picked in the other, by pointer and by keyboard', async () => {
    const page = await openStories('en');
    await pickSecond(page, NEO);
    await page.click('#compare-load');
    await compareRuns(page, 1);
    const pressed = (side) =>
      page.$$eval(`.compare-column[data-side="${side}"] .al-model-cell[aria-pressed="true"]`, (l) =>
        l.map((cell) => cell.dataset.cell),
      );
    await page.click('.compare-column[data-side="1"] [data-cell="1:1"]');
    assert.deepEqual(await pressed(0), ['1:1']);
    assert.deepEqual(await pressed(1), ['1:1']);
    // Keyboard: the grid is one tab stop; arrows move, Enter picks.
    await page.focus('.compare-column[data-side="0"] [data-cell="1:1"]');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    assert.deepEqual(await pressed(0), ['2:1']);
    // A head only the larger model has: the other column says so and picks none.
    const last = `${stories.info.layers - 1}:${stories.info.heads - 1}`;
    if (stories.info.layers > neo.info.layers || stories.info.heads > neo.info.heads) {
      await page.click(`.compare-column[data-side="0"] [data-cell="${last}"]`);
      assert.deepEqual(await pressed(1), []);
      assert.match(
        await page.textContent('.compare-column[data-side="1"] .compare-missing'),
        /has no layer/,
      );
    }
    // A new text runs both again.
    const runs = Number(await page.evaluate(() => document.body.dataset.compareRuns));
    await page.fill('#main-text', 'The cat sat on the mat.');
    await compareRuns(page, runs + 1);
    assert.deepEqual(problems(page), []);
    await page.close();
  });

  it('refuses a pair that would not fit, in words, with nothing downloaded', async () => {
    const page = await openStories('en');
    await page.fill('#compare-hub-id', HUGE);
    await page.click('#compare-body .model-hub-form button[type="submit"]');
    await page.waitForSelector('.compare-refused', { timeout: 30000 });
    assert.equal(await page.getAttribute('.compare-memory', 'data-fits'), 'false');
    assert.match(
      await page.textContent('.compare-refused'),
      /^Not loaded: together the two models would need .* more than the 2\.0 GiB/,
    );
    assert.equal(await page.$('#compare-load'), null);
    await page.close();
  });

  it('refuses a model that translates, in words, with nothing downloaded', async () => {
    const page = await openStories('en');
    await page.fill('#compare-hub-id', MARIAN);
    await page.click('#compare-body .model-hub-form button[type="submit"]');
    await page.waitForSelector('.compare-refused', { timeout: 30000 });
    assert.match(await page.textContent('.compare-refused'), /^Not loaded: .* translates, so/);
    assert.equal(await page.$('#compare-load'), null);
    assert.deepEqual(problems(page), []);
    await page.close();
  });

  it('a download under way can be cancelled, back to the Load button', async () => {
    const page = await openStories('en');
    await page.fill('#compare-hub-id', SLOW);
    await page.click('#compare-body .model-hub-form button[type="submit"]');
    await page.waitForSelector('#compare-load', { timeout: 30000 });
    await page.click('#compare-load');
    await page.waitForSelector('#compare-cancel');
    await page.click('#compare-cancel');
    await page.waitForSelector('#compare-load');
    assert.equal(await page.$('.compare-column'), null);
    assert.deepEqual(problems(page), []);
    await page.close();
  });

  it('Remove frees the second model and closes the comparison', async () => {
    const page = await openStories('zh');
    await pickSecond(page, NEO);
    await page.click('#compare-load');
    await compareRuns(page, 1);
    await page.click('#compare-remove');
    await page.waitForFunction(() => document.body.dataset.compareReleased === 'true');
    assert.equal(await page.isHidden('#compare-body'), true);
    // The keyboard lands on the button that opens a comparison again.
    assert.equal(await page.evaluate(() => document.activeElement.id), 'compare-open');
    assert.equal(await page.isVisible('#compare-open'), true);
    await page.waitForFunction(() => !location.search.includes('second='));
    assert.equal(await page.$('.compare-column'), null);
    // The page's own model still runs.
    await page.fill('#main-text', 'Lily had a dog.');
    await waitForRuns(page, 2);
    assert.deepEqual(problems(page), []);
    await page.close();
  });

  it('puts the model trained in "Watch it learn" beside the page’s', async () => {
    const page = await newPage(browser.context);
    const link = new URLSearchParams({ lang: 'en', model: 'stories260K', text: TEXT });
    await page.goto(`${browser.base}/demo/?${link}`);
    await waitForRuns(page, 1);
    await page.click('#learn-step');
    await page.waitForFunction(() => document.body.dataset.learnSteps === '1', null, {
      timeout: 60000,
    });
    await page.click('#compare-open');
    await page.waitForSelector('#compare-source option[value="trained"]', { state: 'attached' });
    assert.equal(
      await page.textContent('#compare-source option[value="trained"]'),
      'The model trained in “Watch it learn”, at step 1',
    );
    await page.selectOption('#compare-source', 'trained');
    await page.waitForSelector('#compare-load', { timeout: 30000 });
    // Files of the page's own: never in the link.
    assert.doesNotMatch(page.url(), /second=/);
    await page.click('#compare-load');
    await compareRuns(page, 1);
    assert.match(
      await page.textContent('.compare-column[data-side="1"] .compare-title'),
      /^Trained here \(step 1\) · gpt2, /,
    );
    assert.deepEqual(problems(page), []);
    await page.close();
  });

  it('phones stack the two columns', async () => {
    const page = await openStories('zh', { width: 390, height: 844 });
    await pickSecond(page, NEO);
    await page.click('#compare-load');
    await compareRuns(page, 1);
    const [a, b] = await page.$$eval('.compare-column', (list) =>
      list.map((column) => column.getBoundingClientRect().toJSON()),
    );
    assert.ok(b.top >= a.bottom, 'the second column under the first');
    const overflow = await page.evaluate(
      () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
    );
    assert.ok(overflow <= 0, `no sideways scrolling (${overflow}px)`);
    await page.locator('#compare').screenshot({ path: artifact('models-compare-zh-phone.png') });
    await page.close();
  });
});
