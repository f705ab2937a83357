// The Continue bar of a causal model, with the tiny GPT-2 served as distilgpt2 in the Hub's
// layout (model-page-support.mjs): Continue (from the keyboard) streams new tokens into the
// token strip and the matrix grows by one row per token (every drawing counted), the text kept
// is run whole; Stop and Escape cancel mid-stream and keep what came; English and Chinese, phone
// width, axe-core; screenshots into test-artifacts/.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { blockingFindings } from './axe.mjs';
import { artifact, newPage, openBrowser } from './harness.mjs';
import { hubFixtures, startHub, useHub, waitForRuns } from './model-page-support.mjs';

const MODEL = 'distilgpt2';
const TEXT = 'Once upon a time';
// The tiny GPT-2's 32 positions leave 22 new tokens after the prompt's 10.
const PROMPT_TOKENS = 10;
const ROOM = 32 - PROMPT_TOKENS;
const STRINGS = {
  en: { title: 'Let the model write on', done: `${ROOM} new tokens, kept in the text` },
  zh: { title: '让模型接着写', done: `${ROOM} 个新词元，已写入文本` },
};

describe('Continue (a causal model writes on)', () => {
  let fixtures, hub, browser;
  const problems = (page) => page.problems.filter((p) => !p.includes(new URL(hub.url).origin));

  before(async () => {
    fixtures = hubFixtures();
    hub = await startHub(fixtures.root);
    browser = await openBrowser();
    await useHub(browser.context, hub.url);
    // Every drawing of a continuation: the rows it gave, and what the token strip and the
    // matrix's table showed at that moment. `stopAt`: rows at which a test presses Stop, or
    // Escape in the bar.
    await browser.context.addInitScript(() => {
      if (typeof document === 'undefined') return;
      globalThis.continueSeen = [];
      globalThis.stopAt = null;
      new MutationObserver(() => {
        const rows = Number(document.body.dataset.continueRows);
        globalThis.continueSeen.push({
          rows,
          chips: document.querySelectorAll('#token-strip .token-chip').length,
          columns: document.querySelectorAll('#weights-table thead th').length - 1,
          status: document.getElementById('continue-status')?.textContent ?? '',
        });
        const stop = globalThis.stopAt;
        if (stop && rows === stop.rows) {
          if (stop.how === 'click') document.getElementById('continue-stop').click();
          else {
            document.activeElement.dispatchEvent(
              new KeyboardEvent('keydown', { key: 'Escape', bubbles: true }),
            );
          }
        }
      }).observe(document, {
        attributes: true,
        subtree: true,
        attributeFilter: ['data-continue-rows'],
      });
    });
  });
  after(async () => {
    await browser?.close();
    await hub?.close();
    rmSync(fixtures.root, { recursive: true, force: true });
  });

  async function openModel(lang, viewport) {
    const page = await newPage(browser.context, { viewport });
    const link = new URLSearchParams({ lang, model: MODEL, text: TEXT });
    await page.goto(`${browser.base}/demo/?${link}`);
    await page.waitForSelector('#model-load, .model-status.is-ready', { timeout: 30000 });
    if (await page.$('#model-load')) await page.click('#model-load');
    await waitForRuns(page, 1);
    await page.waitForSelector('#continue-run');
    return page;
  }

  const continuations = (page, n) =>
    page.waitForFunction((n) => Number(document.body.dataset.continuations ?? 0) >= n, n, {
      timeout: 60000,
    });
  const runs = (page) => page.evaluate(() => Number(document.body.dataset.modelRuns));

  for (const lang of ['en', 'zh']) {
    it(`streams new tokens and grows the matrix a row at a time (${lang})`, async () => {
      const page = await openModel(lang, { width: 1280, height: 900 });
      assert.equal(await page.textContent('#continue-title'), STRINGS[lang].title);
      assert.equal(await page.isDisabled('#continue-stop'), true);
      assert.equal(await page.isDisabled('#continue-seed'), true, 'greedy: no seed');
      const before = await runs(page);
      // From the keyboard: the button takes focus and Enter presses it.
      await page.focus('#continue-run');
      await page.keyboard.press('Enter');
      await continuations(page, 1);
      const seen = await page.evaluate(() => globalThis.continueSeen);
      // One drawing per token, each with one row more, the strip and the table with it; the
      // last again with the continuation's end.
      assert.equal(seen.at(-1).rows, seen.at(-2).rows);
      assert.deepEqual(
        seen.slice(0, -1).map((s) => s.rows),
        Array.from({ length: ROOM }, (_, i) => PROMPT_TOKENS + i + 1),
      );
      for (const s of seen) {
        assert.equal(s.chips, s.rows);
        assert.equal(s.columns, s.rows);
      }
      const going = {
        en: `writing… 1 of ${ROOM} new tokens`,
        zh: `续写中…… 已有 1 / ${ROOM} 个新词元`,
      };
      assert.equal(seen[0].status, going[lang]);
      assert.equal(await page.textContent('#continue-status'), STRINGS[lang].done);
      await page.locator('.composer').screenshot({ path: artifact(`continue-${lang}.png`) });
      await page.locator('#stage').screenshot({ path: artifact(`continue-stage-${lang}.png`) });
      // The text kept is the page's text now, and runs whole as a typed one does.
      const kept = await page.inputValue('#main-text');
      assert.ok(kept.startsWith(TEXT) && kept.length > TEXT.length, JSON.stringify(kept));
      await waitForRuns(page, before + 1);
      assert.ok((await page.$$('#token-strip .token-chip')).length > PROMPT_TOKENS);
      assert.equal(await page.isDisabled('#continue-stop'), true);
      assert.deepEqual(await blockingFindings(page), []);
      assert.deepEqual(problems(page), []);
      await page.close();
    });
  }

  it('stops mid-stream (Stop, then Escape) and keeps what came', async () => {
    const page = await openModel('en', { width: 1280, height: 900 });
    await page.fill('#continue-tokens', '20');
    await page.fill('#continue-temperature', '0.8');
    assert.equal(await page.isDisabled('#continue-seed'), false);
    await page.fill('#continue-seed', '7');
    await page.evaluate((rows) => (globalThis.stopAt = { rows, how: 'click' }), PROMPT_TOKENS + 3);
    await page.click('#continue-run');
    await continuations(page, 1);
    let seen = await page.evaluate(() => globalThis.continueSeen);
    const stopped = seen.length;
    // The page answers each drawing before the next token comes: Stop lands within a token.
    assert.ok(stopped >= 3 && stopped <= 4, `${stopped} tokens drawn`);
    assert.equal(
      await page.textContent('#continue-status'),
      `stopped after ${stopped} new tokens, kept in the text`,
    );
    const kept = await page.inputValue('#main-text');
    assert.ok(kept.startsWith(TEXT) && kept.length > TEXT.length);
    // Escape in the bar stops the next one; it continues from the kept text.
    await waitForRuns(page, 2);
    const rows = await page.$$eval('#token-strip .token-chip', (c) => c.length);
    await page.evaluate((rows) => {
      globalThis.continueSeen = [];
      globalThis.stopAt = { rows, how: 'escape' };
    }, rows + 2);
    await page.focus('#continue-run');
    await page.keyboard.press('Enter');
    await continuations(page, 2);
    seen = await page.evaluate(() => globalThis.continueSeen);
    assert.equal(seen[0].rows, rows + 1);
    assert.ok(seen.length >= 2 && seen.length <= 3, `${seen.length} tokens drawn`);
    assert.match(await page.textContent('#continue-status'), /^stopped after [23] new tokens/);
    assert.ok((await page.inputValue('#main-text')).startsWith(kept));
    assert.deepEqual(problems(page), []);
    await page.close();
  });

  it('fits a phone', async () => {
    const page = await openModel('zh', { width: 390, height: 844 });
    await page.click('#continue-run');
    await continuations(page, 1);
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(width <= 390, `page is ${width}px wide`);
    const bar = await page.locator('#continue').boundingBox();
    assert.ok(bar.x >= 0 && bar.x + bar.width <= 390, JSON.stringify(bar));
    await page.locator('.composer').screenshot({ path: artifact('continue-phone-zh.png') });
    assert.deepEqual(problems(page), []);
    await page.close();
  });
});
