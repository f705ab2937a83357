// The sinks plot where the BOS is not the first token (GPT-2 prepends none: in
// "a<|endoftext|>b..." it stands second), in headless Chromium, both languages: a square per
// head on the BOS beside its circle on the first token, a dashed mean, and a table column.
// Screenshots: test-artifacts/sinks-bos-{en,zh}.png.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { artifact, newPage, openBrowser, WEB_ROOT } from './harness.mjs';

async function render({ lang }) {
  const { setLanguage } = await import('/demo/i18n.js');
  const { renderSinksPlot } = await import('/demo/model/sinks-plot.js');
  const { attentionSinks } = await import('/src/interpret/sinks.js');
  const { syntheticAttention } = await import('/test/support/synthetic-attention.js');
  setLanguage(lang);
  const shape = { layers: 3, heads: 4, n: 24 };
  const { attention } = syntheticAttention(shape);
  const rows = Array.from({ length: shape.n }, (_, i) => ({
    text: i === 1 ? '<|endoftext|>' : `w${i}`,
    special: i === 1,
  }));
  const bos = rows.map((row) => row.special);
  const run = { attention, sinks: attentionSinks(attention, shape, { bos }) };
  const info = { ...shape, causal: true, bosToken: '<|endoftext|>' };
  const host = document.getElementById('sinks-plot');
  renderSinksPlot(host, { run, rows, info, words: false, onSelect: () => {} });
  return {
    circles: host.querySelectorAll('circle.sinks-dot').length,
    squares: host.querySelectorAll('rect.sinks-bos').length,
    bosMeans: host.querySelectorAll('line.sinks-mean-bos').length,
    columns: [...host.querySelectorAll('thead th')].map((th) => th.textContent),
    caption: host.querySelector('figcaption').textContent,
    bosShare: run.sinks.bos[0],
    firstShare: run.sinks.first[0],
  };
}

describe('the sinks plot with a BOS apart from the first token', () => {
  let browser, page;
  before(async () => {
    browser = await openBrowser({ root: WEB_ROOT, isolated: false });
    page = await newPage(browser.context);
    await page.goto(`${browser.base}/test/browser/model-grid.html`);
  });
  after(async () => browser?.close());

  for (const lang of ['en', 'zh']) {
    it(`shows both shares by layer (${lang})`, async () => {
      const shown = await page.evaluate(render, { lang });
      assert.equal(shown.circles, 12);
      assert.equal(shown.squares, 12);
      assert.equal(shown.bosMeans, 3);
      assert.equal(shown.columns.length, 4);
      assert.match(shown.columns[2], /<\|endoftext\|>/);
      assert.match(shown.caption, /w0/);
      assert.match(shown.caption, /<\|endoftext\|>/);
      // Head 1 of layer 1 looks at the previous token: row 2 on the BOS (key 1), none on key 0
      // but row 1's: 1 of 23 rows on the first token, 1 of 23 on the BOS.
      assert.ok(Math.abs(shown.firstShare - 1 / 23) < 1e-6);
      assert.ok(Math.abs(shown.bosShare - 1 / 23) < 1e-6);
      await page.locator('#sinks-plot').screenshot({ path: artifact(`sinks-bos-${lang}.png`) });
    });
  }
});
