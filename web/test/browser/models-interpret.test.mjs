// The "Rollout and flow" and "Attention sinks" views on the bundled stories260K (no network), as
// a reader sees them: the numbers against attnlens/models' functions on the same attention run
// in Node, the picked token followed, the head buttons opening the matrix by keyboard, English
// and Chinese, phone width, and screenshots of each into test-artifacts/ to look at. axe-core
// runs over both views in accessibility.test.mjs.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { attentionFlow, attentionRollout, attentionSinks } from '../../src/models/index.js';
import { artifact, newPage, openBrowser } from './harness.mjs';
import { runInNode, waitForRuns } from './model-page-support.mjs';

const TEXT = 'Once upon a time, there was a little girl named Lily.';

describe('rollout, flow and attention sinks on the page', () => {
  let browser;
  let node;
  before(async () => {
    browser = await openBrowser();
    node = runInNode('stories260K', TEXT);
  });
  after(async () => {
    await browser?.close();
  });

  async function openStories(lang, view, viewport) {
    const page = await newPage(browser.context, { viewport });
    const link = new URLSearchParams({ lang, model: 'stories260K', text: TEXT, view });
    await page.goto(`${browser.base}/demo/?${link}`);
    await page.waitForSelector('#model-load, .model-status.is-ready', { timeout: 30000 });
    if (await page.$('#model-load')) await page.click('#model-load');
    await waitForRuns(page, 1);
    return page;
  }

  // The page's catalog asks the Hub about its other models; this machine cannot reach it, and
  // these views never need it (stories260K is bundled).
  const problems = (page) => page.problems.filter((p) => !p.includes('https://huggingface.co/'));
  const shape = () => ({ layers: node.info.layers, heads: node.info.heads, n: node.tokens.length });
  const percent = (share) => `${(100 * share).toFixed(1)}%`;

  it('rollout and flow of the picked token equal the package’s, to the shown digit', async () => {
    const page = await openStories('en', 'rollout');
    const workers = [];
    page.on('worker', (worker) => workers.push(worker.url()));
    const attention = Float32Array.from(node.attention);
    for (const position of [5, 12]) {
      await page.click(`#token-strip .token-chip[data-index="${position}"]`);
      // The flow arrives from its worker: the table is busy until then.
      await page.waitForFunction(
        (p) =>
          document.querySelector('#rollout-view tr.is-query')?.dataset.token === String(p) &&
          document.querySelector('#rollout-view table').getAttribute('aria-busy') === 'false',
        position,
      );
      const rows = await page.$$eval('#rollout-view tbody tr', (list) =>
        list.map((row) => [...row.querySelectorAll('.rollout-value')].map((v) => v.textContent)),
      );
      // Causal: the picked token and those before it.
      assert.equal(rows.length, position + 1);
      const rollout = attentionRollout(attention, shape(), { rows: [position] });
      const flow = attentionFlow(attention, shape(), { position });
      rows.forEach(([r, f], j) => {
        assert.equal(r, percent(rollout[j]), `rollout of token ${j}`);
        assert.equal(f, percent(flow[j]), `flow of token ${j}`);
      });
    }
    assert.match(
      await page.textContent('#rollout-view caption'),
      /^Where “.*” draws from, through all 5 layers$/,
    );
    assert.match(
      await page.textContent('#rollout-view .rollout-notes'),
      /mixes linearly.*pipe capacities/s,
    );
    assert.match(await page.textContent('#rollout-view'), /Later tokens are not listed/);
    // The flow came from its own worker, not from the page's thread. The worker may have started
    // while the view opened, before the listener above: the page's live workers count too.
    const urls = [...workers, ...page.workers().map((worker) => worker.url())];
    assert.ok(
      urls.some((url) => url.endsWith('/demo/model/flow-worker.js')),
      urls.join(),
    );
    await page.locator('#stage').screenshot({ path: artifact('rollout-flow-en.png') });
    assert.deepEqual(problems(page), []);
    await page.close();
  });

  it('the sinks plot: a dot per head, the table’s means, a head opened by keyboard', async () => {
    const page = await openStories('en', 'sinks');
    await page.waitForSelector('#sinks-plot svg');
    const { layers, heads } = node.info;
    assert.equal(await page.locator('#sinks-plot circle.sinks-dot').count(), layers * heads);
    const sinks = attentionSinks(Float32Array.from(node.attention), shape());
    const means = await page.$$eval('#sinks-plot tbody tr td:nth-child(2)', (cells) =>
      cells.map((cell) => cell.textContent),
    );
    assert.equal(means.length, layers);
    means.forEach((text, l) => {
      const shares = sinks.first.subarray(l * heads, (l + 1) * heads);
      const mean = shares.reduce((a, b) => a + b, 0) / heads;
      assert.equal(text, `${(100 * mean).toFixed(0)}%`, `layer ${l + 1}`);
    });
    assert.match(
      await page.textContent('#sinks-plot figcaption'),
      new RegExp(`first token “<s>”.*mean over ${node.tokens.length - 1} rows`),
    );
    await page.locator('#stage').screenshot({ path: artifact('attention-sinks-en.png') });
    // The head most on the first token in layer 2, opened from the keyboard.
    const second = sinks.first.subarray(heads, 2 * heads);
    const top = second.indexOf(Math.max(...second));
    await page.focus('#sinks-plot tbody tr:nth-child(2) button');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => !document.getElementById('panel-matrix').hidden);
    assert.match(
      await page.textContent('#view-caption'),
      new RegExp(`^layer 2 · head ${top + 1} of`),
    );
    assert.deepEqual(problems(page), []);
    await page.close();
  });

  it('both views in Chinese and at phone width, 390 x 844', async () => {
    for (const lang of ['zh', 'en']) {
      const page = await openStories(lang, 'rollout', { width: 390, height: 844 });
      await page.waitForSelector('#rollout-view table');
      if (lang === 'zh') {
        assert.equal(await page.textContent('#tab-rollout'), '展开与流');
        assert.match(await page.textContent('#rollout-view caption'), /经过全部 5 层/);
      }
      const overflow = () =>
        page.evaluate(
          () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
        );
      assert.equal(await overflow(), 0, 'rollout: nothing wider than the phone');
      await page.locator('#stage').screenshot({ path: artifact(`phone-rollout-${lang}.png`) });
      await page.click('#tab-sinks');
      await page.waitForSelector('#sinks-plot svg');
      if (lang === 'zh')
        assert.match(await page.textContent('#sinks-plot figcaption'), /第一个词元/);
      assert.equal(await overflow(), 0, 'sinks: nothing wider than the phone');
      await page.locator('#stage').screenshot({ path: artifact(`phone-sinks-${lang}.png`) });
      assert.deepEqual(problems(page), []);
      await page.close();
    }
  });
});
