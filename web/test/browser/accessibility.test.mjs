// axe-core over every view of the demo (matrix, lines, heads, numbers, with the explain and cost
// panels on the page; self- and cross-attention), in English and Chinese, and over the widget's
// sample blog post. A serious or critical finding fails the test with its rule, the elements it
// names and axe's own summary of what is wrong.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { after, before, test } from 'node:test';
import { computedCount, openDemo, waitForRecompute } from './demo-page.mjs';
import { newPage, openBrowser } from './harness.mjs';

// axe's source, evaluated through the DevTools protocol: the pages' Content-Security-Policy
// (script-src 'self') refuses an injected <script>, and the test must not loosen it.
const AXE_SOURCE = readFileSync(
  createRequire(import.meta.url).resolve('axe-core/axe.min.js'),
  'utf8',
);
const BLOCKING = new Set(['serious', 'critical']);
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

// The serious and critical findings of axe on the page as it is now, one line each.
async function blockingFindings(page) {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => (await window.axe.run()).violations);
  return violations
    .filter((v) => BLOCKING.has(v.impact))
    .flatMap((v) =>
      v.nodes.map(
        (n) => `${v.impact} ${v.id}: ${n.target.join(' ')} — ${n.failureSummary.split('\n')[1]}`,
      ),
    );
}

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
