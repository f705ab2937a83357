// The Translate mode with a tiny Marian served as Helsinki-NLP/opus-mt-zh-en in the Hub's layout
// (model-page-support.mjs): the translation streams token by token and the alignment grows with
// it (matrix rows and the lines view's target tokens counted at every step), a head and the
// averages can be picked from the keyboard, the head labels score the example's dictionary,
// English and Chinese, phone width, axe-core; screenshots into test-artifacts/.
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { loadModel } from '../../src/models/index.js';
import { readSnapshot } from '../../src/snapshot/read.js';
import { blockingFindings } from './axe.mjs';
import { artifact, newPage, openBrowser } from './harness.mjs';
import {
  addMarian,
  hubFixtures,
  MARIAN,
  startHub,
  useHub,
  waitForTranslations,
} from './model-page-support.mjs';

const TEXT = '我爱自然语言处理';

describe('Translate mode (Marian)', () => {
  let fixtures, hub, browser, marianFolder;
  const problems = (page) => page.problems.filter((p) => !p.includes(new URL(hub.url).origin));

  before(async () => {
    fixtures = hubFixtures();
    marianFolder = addMarian(fixtures.root);
    hub = await startHub(fixtures.root);
    browser = await openBrowser();
    await useHub(browser.context, hub.url);
    // Every streamed step as the page drew it: how many target tokens the lines view and the
    // matrix showed at that moment.
    await browser.context.addInitScript(() => {
      if (typeof document === 'undefined') return;
      globalThis.translateSeen = [];
      new MutationObserver(() => {
        const steps = document.body.dataset.translateSteps;
        if (steps === undefined) return;
        globalThis.translateSeen.push({
          steps: Number(steps),
          lines: document.querySelectorAll('#translate-lines .al-lines-keys .al-token').length,
          output: document.getElementById('translate-output')?.textContent ?? '',
        });
      }).observe(document, {
        attributes: true,
        subtree: true,
        attributeFilter: ['data-translate-steps'],
      });
    });
  });
  after(async () => {
    await browser?.close();
    await hub?.close();
    rmSync(fixtures.root, { recursive: true, force: true });
  });

  async function openTranslate(lang, viewport) {
    const page = await newPage(browser.context, { viewport });
    const link = new URLSearchParams({ lang, model: MARIAN, text: TEXT });
    await page.goto(`${browser.base}/demo/?${link}`);
    await page.waitForSelector('#model-load, .model-status.is-ready', { timeout: 30000 });
    if (await page.$('#model-load')) await page.click('#model-load');
    await waitForTranslations(page, 1);
    return page;
  }

  for (const lang of ['en', 'zh']) {
    it(`streams the translation and grows the alignment (${lang})`, async () => {
      const page = await openTranslate(lang, { width: 1280, height: 900 });
      const seen = await page.evaluate(() => globalThis.translateSeen);
      const steps = Number(await page.evaluate(() => document.body.dataset.translateSteps));
      assert.ok(steps >= 2, `${steps} steps`);
      // One drawing per token, in order, each with as many target tokens as steps so far.
      assert.deepEqual(
        seen.map((s) => s.steps),
        Array.from({ length: steps }, (_, i) => i + 1),
      );
      for (const s of seen) assert.equal(s.lines, s.steps);
      assert.ok(seen.at(-1).output.startsWith(seen[0].output));
      assert.equal(await page.isHidden('#stage'), true);
      // The lines view: source tokens above, translation below, a line per pair.
      const sources = await page.$$eval(
        '#translate-lines .al-lines-querys .al-token',
        (n) => n.length,
      );
      assert.ok(sources >= 2);
      assert.ok((await page.$$('#translate-lines .al-lines-layer > *')).length > 0);
      const title = await page.textContent('#translate-title');
      assert.equal(title, lang === 'en' ? 'Translation, token by token' : '逐个词元的翻译');
      // The example's dictionary scores every decoder head.
      const heads = await page.$$eval('#translate-heads .translate-head', (b) =>
        b.map((x) => x.textContent),
      );
      assert.equal(heads.length, 2 * 4);
      await page.locator('#translate').screenshot({ path: artifact(`translate-${lang}.png`) });
      // Keyboard: a head from the list, then one layer from the select.
      await page.focus('#translate-heads [data-lh="1:2"]');
      await page.keyboard.press('Enter');
      assert.equal(await page.inputValue('#translate-layer'), '1');
      assert.equal(await page.inputValue('#translate-head'), '2');
      assert.equal(
        await page.getAttribute('#translate-heads [data-lh="1:2"]', 'aria-pressed'),
        'true',
      );
      await page.focus('#translate-head');
      await page.selectOption('#translate-head', '-1');
      // The whole translation as a snapshot, read back as any file from elsewhere.
      const [download] = await Promise.all([
        page.waitForEvent('download'),
        page.click('#translate-export-snapshot'),
      ]);
      const snapshot = readSnapshot(readFileSync(await download.path(), 'utf8'));
      assert.equal(snapshot.text, TEXT);
      assert.equal(snapshot.model.id, MARIAN);
      assert.equal(snapshot.translation.target.length, steps);
      assert.equal(snapshot.translation.text, seen.at(-1).output);
      assert.match(await page.getAttribute('#translate-matrix canvas', 'aria-label'), /·/);
      // Surgery: "one fixed vector" (only the last source token, </s>, can be seen). Every
      // row of the exported alignment then sits on it, and the full translation stays beside.
      const done = Number(await page.evaluate(() => document.body.dataset.translations));
      await page.selectOption('#translate-cross-mask', 'last');
      await waitForTranslations(page, done + 1);
      assert.equal(
        await page.textContent('#translate-compare'),
        (lang === 'en' ? 'With full attention: ' : '完整注意力下：') + seen.at(-1).output,
      );
      const [json] = await Promise.all([
        page.waitForEvent('download'),
        page.click('#translate-export-json'),
      ]);
      const alignment = JSON.parse(readFileSync(await json.path(), 'utf8'));
      const last = alignment.sourceTokens.length - 1;
      assert.equal(alignment.sourceTokens[last].text, '</s>');
      for (const row of alignment.weights) assert.deepEqual(row.slice(last), [1]);
      assert.ok(alignment.weights.every((row) => row.slice(0, last).every((w) => w === 0)));
      assert.deepEqual(await blockingFindings(page), []);
      assert.deepEqual(problems(page), []);
      await page.close();
    });
  }

  it("decodes with the model's beam search when asked, as translate() does in Node", async () => {
    const page = await openTranslate('en', { width: 1280, height: 900 });
    const done = Number(await page.evaluate(() => document.body.dataset.translations));
    await page.focus('#translate-decoding');
    await page.selectOption('#translate-decoding', 'beams');
    await waitForTranslations(page, done + 1);
    const model = await loadModel(marianFolder);
    const node = await model.translate(TEXT, { maxTokens: model.info.maxPositions - 1 });
    model.dispose();
    assert.ok(node.beams > 1);
    const status = await page.textContent('#translate-status');
    assert.ok(status.endsWith(`the best of ${node.beams} beams`), status);
    assert.equal(await page.textContent('#translate-output'), node.text);
    // The lines view holds the kept hypothesis' tokens, </s> included, no replaced leader's.
    const targets = await page.$$eval('#translate-lines .al-lines-keys .al-token', (n) => n.length);
    assert.equal(targets, node.ids.length - 1);
    await page.locator('#translate').screenshot({ path: artifact('translate-beams-en.png') });
    assert.deepEqual(problems(page), []);
    await page.close();
  });

  it('fits a phone and translates a new text as it is typed', async () => {
    const page = await openTranslate('en', { width: 390, height: 844 });
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(width <= 390, `page is ${width}px wide`);
    await page.fill('#main-text', '我爱我的猫。');
    await waitForTranslations(page, 2);
    assert.notEqual(await page.textContent('#translate-status'), '');
    await page.locator('#translate').screenshot({ path: artifact('translate-phone.png') });
    assert.deepEqual(problems(page), []);
    await page.close();
  });

  // A long translation's lines are wider than any panel: they take the card's width under the
  // matrix and scroll sideways, and every token can be scrolled (or arrowed) into view.
  for (const width of [1280, 390]) {
    it(`keeps every token of a long translation's lines in reach (${width}px)`, async () => {
      const page = await newPage(browser.context, { viewport: { width, height: 900 } });
      const text = '我爱自然语言处理。我爱我的猫。我们都喜欢学习新的语言和文化，每天读书写字。';
      await page.goto(`${browser.base}/demo/?${new URLSearchParams({ model: MARIAN, text })}`);
      await page.waitForSelector('#model-load, .model-status.is-ready', { timeout: 30000 });
      if (await page.$('#model-load')) await page.click('#model-load');
      await waitForTranslations(page, 1);
      const steps = Number(await page.evaluate(() => document.body.dataset.translateSteps));
      assert.ok(steps >= 20, `${steps} steps`);
      const fit = await page.evaluate(() => {
        const views = document.querySelector('.translate-views');
        const scroller = document.querySelector('#translate-lines .al-lines-scroll');
        const box = (e) => e.getBoundingClientRect();
        const lines = box(document.getElementById('translate-lines'));
        const right = Math.max(
          ...[...scroller.querySelectorAll('.al-token')].map((t) => box(t).right),
        );
        return {
          page: document.documentElement.scrollWidth,
          stacked: views.classList.contains('is-stacked'),
          linesWidth: lines.width,
          viewsWidth: box(views).width,
          tokensRight: right - box(scroller).left + scroller.scrollLeft,
          scrollWidth: scroller.scrollWidth,
          clientWidth: scroller.clientWidth,
          tabIndex: scroller.tabIndex,
          hint: document.getElementById('translate-lines-hint').hidden,
        };
      });
      assert.ok(fit.page <= width, `page is ${fit.page}px wide`);
      assert.equal(fit.stacked, true);
      assert.ok(Math.abs(fit.linesWidth - fit.viewsWidth) < 1, JSON.stringify(fit));
      // Sideways scrolling reaches the last token; the strip takes focus, and says so.
      assert.ok(fit.scrollWidth > fit.clientWidth && fit.tokensRight <= fit.scrollWidth);
      assert.equal(fit.tabIndex, 0);
      assert.equal(fit.hint, false);
      await page.focus('#translate-lines .al-lines-scroll');
      for (let i = 0; i < 40; i++) await page.keyboard.press('ArrowRight');
      // Arrow-key scrolling is animated: wait until it has come to the end.
      await page.waitForFunction(() => {
        const scroller = document.querySelector('#translate-lines .al-lines-scroll');
        return scroller.scrollLeft + scroller.clientWidth >= scroller.scrollWidth - 1;
      });
      const last = await page.evaluate(() => {
        const scroller = document.querySelector('#translate-lines .al-lines-scroll');
        const keys = scroller.querySelectorAll('.al-lines-keys .al-token');
        const token = keys[keys.length - 1].getBoundingClientRect();
        const frame = scroller.getBoundingClientRect();
        return { token: [token.left, token.right], frame: [frame.left, frame.right] };
      });
      assert.ok(
        last.token[0] >= last.frame[0] && last.token[1] <= last.frame[1] + 1,
        JSON.stringify(last),
      );
      await page
        .locator('#translate')
        .screenshot({ path: artifact(`translate-long-${width}.png`) });
      assert.deepEqual(await blockingFindings(page), []);
      assert.deepEqual(problems(page), []);
      await page.close();
    });
  }
});
