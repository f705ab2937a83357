// "Which heads matter" and "Logit lens" on the bundled stories260K (no network), in English at
// desktop width and in Chinese at phone width: each panel computes in the compute thread, heads
// switch off by keyboard and by click with the predictions before and after side by side, the
// lens grid shows its top-k on focus and scrolls inside itself on a phone; axe finds nothing
// serious; the page's snapshot carries both and the widget draws them from it with no model.
// Screenshots in test-artifacts/.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { blockingFindings } from './axe.mjs';
import { artifact, newPage, openBrowser } from './harness.mjs';
import { lensPage, siteWithLensPages, VIOLATIONS_JS, waitForRuns } from './model-page-support.mjs';

const TEXT = 'Once upon a time, there was a little girl named Lily. She';
const LAYERS = 5; // stories260K
const HEADS = 8;
const SETUPS = [
  { lang: 'en', viewport: { width: 1200, height: 900 }, name: 'en-desktop' },
  { lang: 'zh', viewport: { width: 390, height: 844 }, name: 'zh-phone' },
];

let snapshotText = null; // the page's snapshot with both parts, for the widget

describe('the heads and logit lens panels', () => {
  let browser;
  before(async () => {
    browser = await openBrowser();
  });
  after(async () => {
    await browser?.close();
  });

  async function openModel({ lang, viewport }) {
    const page = await newPage(browser.context, { viewport });
    const link = new URLSearchParams({ lang, model: 'stories260K', text: TEXT });
    await page.goto(`${browser.base}/demo/?${link}`);
    await page.waitForSelector('#model-load, .model-status.is-ready', { timeout: 30000 });
    if (await page.$('#model-load')) await page.click('#model-load');
    await waitForRuns(page, 1);
    await page.waitForSelector('#heads-matter:not([hidden])');
    return page;
  }

  for (const setup of SETUPS) {
    it(`measures heads, switches them off, shows each layer's guess (${setup.name})`, async () => {
      const page = await openModel(setup);
      // No panel code is fetched before a panel opens.
      const fetched = () =>
        page.evaluate(() =>
          performance
            .getEntriesByType('resource')
            .map((entry) => entry.name)
            .filter((name) =>
              /(heads-panel|lens-panel|head-effects-view|logit-lens-view)\.js$/.test(name),
            ),
        );
      assert.deepEqual(await fetched(), []);

      await page.click('#heads-matter-open');
      await page.waitForFunction(
        (count) =>
          document.querySelectorAll('#heads-matter .al-effects-grid button').length === count,
        LAYERS * HEADS,
        { timeout: 30000 },
      );
      await page.waitForFunction(() =>
        /40/.test(document.querySelector('.heads-status').textContent),
      );
      const status = await page.textContent('.heads-status');
      assert.match(status, setup.lang === 'en' ? /40 heads measured in \d+ ms/ : /已测量 40 个头/);
      assert.equal(await page.locator('#heads-matter .al-ranked-list li').count(), 8);
      // The effects are numbers with a sign, the ranked list's first the most negative.
      const cells = await page.$$eval('#heads-matter .al-effects-grid button', (buttons) =>
        buttons.map((b) => Number(b.textContent.replace('−', '-').replace('±', ''))),
      );
      assert.ok(cells.every(Number.isFinite), cells.join());
      const ranked = await page.textContent('#heads-matter .al-ranked-head');
      const lowest = Math.min(...cells);
      assert.ok(ranked.replace('−', '-').includes(lowest.toFixed(2)), `${ranked} vs ${lowest}`);
      // Before anything is off, the predictions with all heads on are the page's own.
      const pageTop = await page.textContent('#predictions-body .al-prediction-token');
      const panelTop = await page.textContent('#heads-matter .al-prediction-token');
      assert.equal(panelTop, pageTop);

      // Keyboard: the grid is one tab stop; arrows move, Enter switches a head off.
      await page.focus('#heads-matter .al-effects-grid button[data-layer="0"][data-head="0"]');
      await page.keyboard.press('ArrowRight');
      await page.keyboard.press('ArrowDown');
      await page.keyboard.press('Enter');
      const switched = '#heads-matter .al-effects-grid button[data-layer="1"][data-head="1"]';
      await page.waitForSelector(`${switched}[aria-pressed="true"]`);
      assert.equal(
        await page.evaluate(
          () => document.activeElement.dataset.layer + document.activeElement.dataset.head,
        ),
        '11',
        'the focus stays on the head switched off',
      );
      // A click on the ranked list's first head switches it off too: two heads off.
      await page.click('#heads-matter .al-ranked-head');
      await page.waitForFunction(
        () =>
          document.querySelectorAll('#heads-matter .al-effects-grid [aria-pressed="true"]')
            .length === 2,
      );
      await page.waitForSelector('#heads-matter .al-before-after.comparing');
      const titles = await page.$$eval('#heads-matter .al-before-after h3', (h) =>
        h.map((x) => x.textContent),
      );
      assert.deepEqual(
        titles,
        setup.lang === 'en' ? ['All heads on', '2 heads off'] : ['所有头开启', '关闭 2 个头'],
      );
      const afterP = await page.$$eval(
        '#heads-matter .al-before-after .al-predictions:last-child .al-prediction-p',
        (p) => p.map((x) => x.textContent),
      );
      assert.ok(afterP.length > 0);
      // Mean ablation runs again with the same heads.
      await page.selectOption('#heads-mode', 'mean');
      await page.waitForSelector('#heads-matter .al-before-after.comparing');
      await page
        .locator('#heads-matter')
        .screenshot({ path: artifact(`lens-panels-heads-${setup.name}.png`) });

      // The logit lens: a row per hidden state, a column per token, one outlined cell a column.
      await page.click('#logit-lens-open');
      await page.waitForSelector('#logit-lens .al-lens-grid', { timeout: 30000 });
      const shape = await page.evaluate(() => ({
        rows: document.querySelectorAll('#logit-lens .al-lens-grid tbody tr').length,
        cols: document.querySelectorAll('#logit-lens .al-lens-grid thead th').length - 1,
        firsts: document.querySelectorAll('#logit-lens .al-lens-cell.is-first').length,
      }));
      assert.equal(shape.rows, LAYERS + 1);
      assert.ok(shape.cols > 10, `${shape.cols} positions`);
      assert.equal(shape.firsts, shape.cols);
      // Focus shows a cell's top 5.
      await page.focus('#logit-lens .al-lens-cell[data-state="2"][data-position="3"]');
      await page.keyboard.press('ArrowRight');
      const detail = await page.textContent('#logit-lens .al-lens-detail h4');
      assert.match(detail, setup.lang === 'en' ? /^layer 2 at “/ : /^第 2 层，/);
      assert.equal(await page.locator('#logit-lens .al-lens-detail li').count(), 5);
      const widths = await page.evaluate(() => ({
        page: document.documentElement.scrollWidth,
        window: window.innerWidth,
        grid: document.querySelector('#logit-lens .al-lens-scroll').scrollWidth,
        box: document.querySelector('#logit-lens .al-lens-scroll').clientWidth,
      }));
      assert.ok(
        widths.page <= widths.window,
        `the page scrolls sideways: ${JSON.stringify(widths)}`,
      );
      if (setup.viewport.width < 500)
        assert.ok(widths.grid > widths.box, 'the grid scrolls in its box');
      await page
        .locator('#logit-lens')
        .screenshot({ path: artifact(`lens-panels-lens-${setup.name}.png`) });

      assert.deepEqual(await blockingFindings(page), []);

      // The snapshot carries both panels.
      const [file] = await Promise.all([
        page.waitForEvent('download'),
        page.click('#export-snapshot'),
      ]);
      const text = await new Response((await file.createReadStream()) ?? '').text();
      const snapshot = JSON.parse(text);
      assert.deepEqual(
        snapshot.ablation.off.map(({ mode }) => mode),
        ['mean', 'mean'],
      );
      assert.equal(snapshot.logitLens.tokens.length, shape.cols);
      snapshotText ??= text;
      // "Switch all heads back on" by keyboard: none off, the focus on the grid's first head.
      await page.focus('.heads-clear');
      await page.keyboard.press('Enter');
      await page.waitForFunction(
        () => !document.querySelector('#heads-matter [aria-pressed="true"]'),
      );
      assert.equal(await page.evaluate(() => document.activeElement.className), 'al-effect');
      await page.waitForSelector('#heads-matter .al-before-after:not(.comparing)');
      // The model picker asks the Hub for the catalog's sizes; offline here, as it may be.
      const offHub = page.problems.filter((p) => !p.includes('https://huggingface.co/'));
      assert.deepEqual(offHub, []);
      await page.close();
    });
  }
});

describe('Cancel in the heads panel', () => {
  let browser;
  before(async () => {
    browser = await openBrowser();
    // stories260K measures its 40 heads faster than a click: the compute thread's module is
    // served with each layer's progress report held for 400 ms, so the click lands mid-way.
    await browser.context.route('**/demo/model/lens-compute.js', async (route) => {
      const response = await route.fetch();
      const body = (await response.text()).replace(
        'onProgress: progress,',
        'onProgress: (p) => { const until = Date.now() + 400; while (Date.now() < until); ' +
          'progress(p); },',
      );
      assert.notEqual(body, await response.text(), 'the module still reports progress');
      await route.fulfill({ response, body });
    });
  });
  after(async () => {
    await browser?.close();
  });

  it('stops a measurement by keyboard, and Measure again finishes it', async () => {
    const page = await newPage(browser.context, { viewport: { width: 1200, height: 900 } });
    const link = new URLSearchParams({ lang: 'en', model: 'stories260K', text: TEXT });
    await page.goto(`${browser.base}/demo/?${link}`);
    await page.waitForSelector('#model-load, .model-status.is-ready', { timeout: 30000 });
    if (await page.$('#model-load')) await page.click('#model-load');
    await page.waitForSelector('#heads-matter:not([hidden])');
    await page.click('#heads-matter-open');
    await page.waitForSelector('.heads-cancel', { timeout: 10000 });
    assert.match(await page.textContent('.heads-status'), /Measuring the heads… \d+ of 40/);
    await page.focus('.heads-cancel');
    await page.keyboard.press('Enter');
    await page.waitForSelector('.heads-again');
    assert.match(await page.textContent('.heads-status'), /^Cancelled/);
    assert.equal(await page.locator('#heads-matter .al-effects-grid').count(), 0);
    assert.equal(
      await page.evaluate(() => document.activeElement.className),
      'chip-button heads-again',
      'the focus moves to Measure again',
    );
    await page.keyboard.press('Enter');
    await page.waitForFunction(
      () => /40 heads measured/.test(document.querySelector('.heads-status').textContent),
      null,
      { timeout: 30000 },
    );
    assert.equal(await page.locator('#heads-matter .al-effects-grid button').count(), 40);
    await page.close();
  });
});

describe('the widget draws an ablation and a logit lens from a snapshot', () => {
  let browser, root;
  before(async () => {
    assert.ok(snapshotText, 'the page wrote a snapshot');
    root = siteWithLensPages({
      'panels.json': snapshotText,
      'violations.js': VIOLATIONS_JS,
      'panels.html': lensPage('<attn-lens id="w" snapshot="panels.json"></attn-lens>'),
      'panels-zh.html': lensPage(
        '<attn-lens id="w" snapshot="panels.json" language="zh"></attn-lens>',
      ),
    });
    browser = await openBrowser({ root });
  });
  after(async () => {
    await browser?.close();
    rmSync(root, { recursive: true, force: true });
  });

  for (const [name, viewport] of [
    ['panels.html', { width: 900, height: 1400 }],
    ['panels-zh.html', { width: 390, height: 1400 }],
  ]) {
    it(`${name} at ${viewport.width} px: no model, no compute, every part drawn`, async () => {
      const page = await newPage(browser.context, { viewport });
      await page.goto(`${browser.base}/lens/${name}`);
      await page.waitForFunction(() =>
        document.getElementById('w').shadowRoot?.querySelector('.al-lens-grid'),
      );
      const drawn = await page.evaluate(() => {
        const root = document.getElementById('w').shadowRoot;
        return {
          effects: root.querySelectorAll('.al-effects-grid td span').length,
          off: root.querySelectorAll('.al-effect.is-off').length,
          lists: root.querySelectorAll('.al-before-after .al-predictions').length,
          lensRows: root.querySelectorAll('.al-lens-grid tbody tr').length,
          title: root.querySelector('.panels h3').textContent,
          models: performance
            .getEntriesByType('resource')
            .filter((entry) => /stories260K|attnlens-models/.test(entry.name)).length,
        };
      });
      assert.deepEqual(
        { ...drawn, title: undefined },
        {
          effects: LAYERS * HEADS,
          off: 2,
          lists: 2,
          lensRows: LAYERS + 1,
          models: 0,
          title: undefined,
        },
      );
      assert.equal(drawn.title, name.includes('zh') ? '哪些头重要' : 'Which heads matter');
      assert.equal(await page.textContent('#violations'), '0');
      assert.deepEqual(await blockingFindings(page), []);
      await page.locator('#w').screenshot({ path: artifact(`lens-panels-widget-${name}.png`) });
      assert.deepEqual(page.problems, []);
      await page.close();
    });
  }
});
