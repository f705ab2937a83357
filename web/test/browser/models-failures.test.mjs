// A Hub model that cannot be fetched, on the page and in the widget: what happened in words
// (unreachable, not there or private, gated, not found), the model named, no internal prefix or
// API address; the page offers the bundled model and trying again, and the widget keeps its
// header and retries on a click.
import assert from 'node:assert/strict';
import { cpSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { artifact, newPage, openBrowser } from './harness.mjs';
import {
  hubFixtures,
  lensPage,
  NEO,
  siteWithLensPages,
  startHub,
  useHub,
  VIOLATIONS_JS,
} from './model-page-support.mjs';
import { tinyModel } from '../support/tiny-models.mjs';

const MISSING = 'attnlens/not-there';
const LATE = 'attnlens/arrives-later';

// An address where nothing listens: fetch() fails there as it does offline.
async function closedPort() {
  const server = createServer();
  await new Promise((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address();
  await new Promise((done) => server.close(done));
  return `http://127.0.0.1:${port}`;
}

describe('a Hub model that cannot be fetched', () => {
  let fixtures, hub, site, browser, nowhere;
  // Requests to the local Hub (and to the closed port) fail by design; nothing else may. (The
  // console's line for a 401 names no address.)
  const byDesign = (line) =>
    line.includes(new URL(hub.url).origin) || line.includes(nowhere) || /status of 401/.test(line);
  const problems = (p) => p.problems.filter((line) => !byDesign(line));

  before(async () => {
    fixtures = hubFixtures();
    hub = await startHub(fixtures.root);
    nowhere = await closedPort();
    site = siteWithLensPages({
      'late.html': lensPage(`<attn-lens id="late" model="${LATE}" text="Once upon a time">`),
      'violations.js': VIOLATIONS_JS,
    });
    browser = await openBrowser({ root: site });
    await useHub(browser.context, hub.url);
  });
  after(async () => {
    await browser?.close();
    await hub?.close().catch(() => {});
    rmSync(fixtures.root, { recursive: true, force: true });
    rmSync(site, { recursive: true, force: true });
  });

  // The model card's failure, once it shows.
  async function failure(page) {
    await page.waitForSelector('#model-details .model-status.is-error', { timeout: 30000 });
    return page.$eval('#model-details .model-status.is-error', (p) => ({
      text: p.textContent,
      reason: p.dataset.reason,
    }));
  }

  it('says a model the Hub will not give is missing or private, and tries again', async () => {
    const page = await newPage(browser.context);
    await page.goto(`${browser.base}/demo/?lang=en&model=${encodeURIComponent(MISSING)}`);
    const said = await failure(page);
    assert.equal(said.reason, 'denied');
    assert.equal(
      said.text,
      `The Hub would not give ${MISSING} (HTTP 401): there is no such public model. It may be ` +
        'private, gated or misspelled; attnlens reads public models only.',
    );
    assert.match(await page.textContent('#model-details .model-next'), /bundled model/);
    assert.equal(
      await page.textContent('#model-use-bundled'),
      'Use the bundled model (stories260K)',
    );
    const asked = hub.requests.length;
    await page.click('#model-retry');
    for (let i = 0; i < 100 && hub.requests.length === asked; i++) await page.waitForTimeout(100);
    assert.ok(hub.requests.length > asked, 'Try again asks the Hub again');
    assert.equal((await failure(page)).reason, 'denied');
    await page
      .locator('#model-picker')
      .screenshot({ path: artifact('model-failed-denied-en.png') });
    await page.click('#model-use-bundled');
    await page.waitForFunction(
      () => new URLSearchParams(location.search).get('model') === 'stories260K',
    );
    assert.deepEqual(problems(page), []);
    await page.close();
  });

  it('says when the Hub cannot be reached, in both languages, with no API address', async () => {
    for (const [lang, words] of [
      ['en', /^Could not reach the Hugging Face Hub for roneneldan\/TinyStories-1M: this browser/],
      ['zh', /^无法连接 Hugging Face Hub 获取 roneneldan\/TinyStories-1M/],
    ]) {
      const page = await newPage(browser.context);
      await page.addInitScript((hub) => {
        globalThis.ATTNLENS_HUB_URL = hub;
      }, nowhere);
      await page.goto(`${browser.base}/demo/?lang=${lang}&model=${encodeURIComponent(NEO)}`);
      // Offline, the size is unknown and Load still tries; the load then fails in words.
      await page.waitForSelector('#model-load', { timeout: 30000 });
      await page.click('#model-load');
      const said = await failure(page);
      assert.equal(said.reason, 'unreachable');
      assert.match(said.text, words);
      assert.doesNotMatch(said.text, /source:|https?:|api\/models|Failed to fetch/);
      assert.equal(await page.isVisible('#model-retry'), true);
      await page
        .locator('#model-picker')
        .screenshot({ path: artifact(`model-failed-offline-${lang}.png`) });
      assert.deepEqual(problems(page), []);
      await page.close();
    }
  });

  it('says a revision the Hub does not have is not found (404)', async () => {
    const page = await newPage(browser.context);
    await page.goto(`${browser.base}/demo/?lang=en&model=${encodeURIComponent(NEO)}&rev=nope`);
    const said = await failure(page);
    assert.equal(said.reason, 'not_found');
    assert.match(
      said.text,
      /^The Hub has no model roneneldan\/TinyStories-1M@nope \(not found, HTTP 404\)/,
    );
    assert.deepEqual(problems(page), []);
    await page.close();
  });

  it('a widget whose model failed keeps its header, says why and loads on Try again', async () => {
    const page = await newPage(browser.context);
    await page.goto(`${browser.base}/lens/late.html`);
    const state = (s) =>
      page.waitForFunction((s) => document.getElementById('late').dataset.state === s, s, {
        timeout: 30000,
      });
    await state('waiting-load');
    await page.locator('#late >> .load-model').click();
    await state('error');
    const shown = await page.evaluate(() => {
      const root = document.getElementById('late').shadowRoot;
      return {
        header: root.querySelector('.header').textContent,
        status: root.querySelector('.status').textContent,
        reason: root.querySelector('.status').dataset.reason,
        button: root.querySelector('.load-model')?.textContent,
      };
    });
    assert.deepEqual(shown, {
      header: LATE,
      status:
        `The Hub would not give ${LATE} (HTTP 401): there is no such public model. It may be ` +
        'private, gated or misspelled; attnlens reads public models only.',
      reason: 'denied',
      button: 'Try again',
    });
    await page.locator('#late').screenshot({ path: artifact('widget-model-failed.png') });
    // The model appears on the Hub; Try again loads it.
    cpSync(tinyModel('gpt-neo'), fixtures.folder(LATE), { recursive: true });
    await page.locator('#late >> .load-model').click();
    await state('ready');
    assert.equal(await page.textContent('#violations'), '0');
    assert.deepEqual(problems(page), []);
    await page.close();
  });
});
