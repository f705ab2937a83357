// At phone width (390 x 844) a visualisation is on the first screen and nothing scrolls the page
// sideways: the untrained layer in every view and both languages, and a loaded real model in
// every view. Screenshots of the first screens land in test-artifacts/.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { artifact, newPage, openBrowser } from './harness.mjs';
import { openDemo, PHONE } from './demo-page.mjs';
import { hubFixtures, NEO, startHub, useHub, waitForRuns } from './model-page-support.mjs';

// The page's sideways overflow, and where `selector` starts on the page (CSS pixels from the top).
async function layout(page, selector) {
  return page.evaluate((selector) => {
    const root = document.scrollingElement;
    const shown = [...document.querySelectorAll(selector)].find((e) => e.getClientRects().length);
    return {
      scrollWidth: root.scrollWidth,
      clientWidth: root.clientWidth,
      top: shown ? shown.getBoundingClientRect().top + window.scrollY : null,
    };
  }, selector);
}

function assertFits({ scrollWidth, clientWidth, top }, what) {
  assert.ok(
    scrollWidth <= clientWidth,
    `${what}: the page is ${scrollWidth}px wide in ${clientWidth}`,
  );
  // At least 100 px of it on the first screen: a heatmap's first rows, a row of the model grid.
  assert.ok(
    top !== null && top <= PHONE.height - 100,
    `${what}: the visualisation starts at ${top}px`,
  );
}

// The view tabs the page shows now.
async function tabs(page) {
  return page.$$eval('#view-tabs [role="tab"]', (all) =>
    all.filter((t) => !t.hidden).map((t) => t.id),
  );
}

describe('the page on a phone', () => {
  let fixtures, hub, browser;
  before(async () => {
    fixtures = hubFixtures();
    hub = await startHub(fixtures.root);
    browser = await openBrowser();
    await useHub(browser.context, hub.url);
  });
  after(async () => {
    await browser?.close();
    await hub?.close().catch(() => {});
    rmSync(fixtures.root, { recursive: true, force: true });
  });

  it('shows the untrained layer first, in every view and both languages', async () => {
    for (const lang of ['en', 'zh']) {
      const page = await openDemo(browser, `?lang=${lang}`, { viewport: PHONE });
      assertFits(await layout(page, '#heatmap-a canvas'), `${lang} matrix`);
      await page.screenshot({ path: artifact(`phone-first-screen-${lang}.png`) });
      for (const tab of await tabs(page)) {
        await page.click(`#${tab}`);
        const panel = await page.getAttribute(`#${tab}`, 'aria-controls');
        await page.waitForFunction((id) => !document.getElementById(id).hidden, panel);
        assertFits(await layout(page, `#${panel}`), `${lang} ${tab}`);
      }
      assert.deepEqual(page.problems, []);
      await page.close();
    }
  });

  it('shows a loaded model on the first screen, and no view scrolls sideways', async () => {
    const page = await newPage(browser.context, { viewport: PHONE });
    await page.goto(`${browser.base}/demo/?lang=en&model=${encodeURIComponent(NEO)}`);
    await page.waitForSelector('#model-load', { timeout: 30000 });
    await page.click('#model-load');
    await waitForRuns(page, 1);
    await page.click('#tab-model');
    await page.waitForSelector('#model-grid .al-model-cell');
    await page.evaluate(() => window.scrollTo(0, 0));
    assertFits(await layout(page, '#model-grid .al-model-cell'), 'model grid');
    await page.screenshot({ path: artifact('phone-first-screen-model.png') });
    for (const tab of await tabs(page)) {
      await page.click(`#${tab}`);
      const panel = await page.getAttribute(`#${tab}`, 'aria-controls');
      await page.waitForFunction((id) => !document.getElementById(id).hidden, panel);
      assertFits(await layout(page, `#${panel}`), `model ${tab}`);
      await page.screenshot({ path: artifact(`phone-model-${tab}.png`), fullPage: true });
    }
    const hubOrigin = new URL(hub.url).origin;
    assert.deepEqual(
      page.problems.filter((line) => !line.includes(hubOrigin)),
      [],
    );
    await page.close();
  });
});
