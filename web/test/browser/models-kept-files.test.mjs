// The reader's own model files are kept in this browser, as the page says: on the next visit they
// are offered again (the link never names them), they load and run without the Hub, and
// "Forget these files" deletes them so the next visit does not find them.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { artifact, newPage, openBrowser } from './harness.mjs';
import { hubFixtures, NEO, startHub, useHub, waitForRuns } from './model-page-support.mjs';

describe('your own files, kept in this browser', () => {
  let fixtures, hub, browser, page;
  // The catalog's listings on the local Hub answer 401 for the ids it lacks: by design.
  const problems = (p) => p.problems.filter((line) => !line.includes(new URL(hub.url).origin));
  before(async () => {
    fixtures = hubFixtures();
    // The catalog's sizes come from the local Hub; the files themselves never do.
    hub = await startHub(fixtures.root);
    browser = await openBrowser();
    await useHub(browser.context, hub.url);
    page = await newPage(browser.context);
  });
  after(async () => {
    await browser?.close();
    await hub?.close().catch(() => {});
    rmSync(fixtures.root, { recursive: true, force: true });
  });

  // The next visit: the same address in a new tab of the same browser profile.
  async function visitAgain() {
    assert.deepEqual(problems(page), []);
    const url = page.url();
    await page.close();
    page = await newPage(browser.context);
    await page.goto(url);
  }

  it('keeps dropped files for the next visit, runs them, and forgets them on request', async () => {
    await page.goto(`${browser.base}/demo/?lang=en`);
    await page.waitForFunction(() => Number(document.body.dataset.computed) >= 1);
    await page.click('label:has(input[name="model-kind"][value="real"])');
    const folder = fixtures.folder(NEO);
    const names = readdirSync(folder);
    const files = names.map((name) => ({ name, bytes: [...readFileSync(join(folder, name))] }));
    const dataTransfer = await page.evaluateHandle((files) => {
      const transfer = new DataTransfer();
      for (const { name, bytes } of files) {
        transfer.items.add(new File([new Uint8Array(bytes)], name));
      }
      return transfer;
    }, files);
    await page.dispatchEvent('#model-drop', 'drop', { dataTransfer });
    await page.waitForSelector('.model-kept[data-kept="kept"]');
    assert.match(await page.textContent('.model-kept'), /^Kept in this browser for next time/);
    // The link cannot carry the files and names no model (models-page.test.mjs); the page writes
    // it a moment after each change, so wait for it: the next visit comes by that link.
    await page.waitForFunction(() => {
      const params = new URLSearchParams(location.search);
      return params.has('text') && !params.has('model');
    });

    // On the next visit the page opens as the link says (the untrained layer). Turned to a real
    // model it runs the bundled one, and the model list (folded once a model runs) offers the
    // files again beside the drop box, as this browser keeps them.
    await visitAgain();
    await page.click('label:has(input[name="model-kind"][value="real"])');
    await waitForRuns(page, 1);
    await page.click('#model-change');
    await page.waitForSelector('#model-use-kept');
    const offer = await page.textContent('#model-kept-files');
    for (const name of names) assert.ok(offer.includes(name), `${name} in "${offer}"`);
    await page.locator('#model-picker').screenshot({ path: artifact('model-kept-files-en.png') });
    await page.click('#model-use-kept');
    await page.waitForSelector('.model-kept[data-kept="kept"]');
    assert.equal(await page.textContent('.model-title'), `Your files (${names.length})`);
    assert.equal(await page.isHidden('#model-kept-files'), true);
    const runs = Number(await page.evaluate(() => document.body.dataset.modelRuns ?? 0));
    await page.click('#model-load');
    await waitForRuns(page, runs + 1);
    assert.match(await page.textContent('.model-status.is-ready'), /^Loaded: gpt_neo · 3 layers/);
    // (The catalog's sizes ask for config.json; no weights come from the Hub.)
    const weights = hub.requests.filter((r) => /\.(safetensors|bin)$/.test(r));
    assert.deepEqual(weights, [], 'no weights from the Hub');

    await page.click('#model-forget-files');
    await page.waitForFunction(() =>
      document.getElementById('model-details').textContent.includes('Pick or drop'),
    );
    // The next visit finds nothing kept: the store is empty and nothing is offered.
    await visitAgain();
    const keys = await page.evaluate(
      () =>
        new Promise((resolve) => {
          const open = indexedDB.open('attnlens-files', 1);
          open.onsuccess = () => {
            const get = open.result.transaction('files').objectStore('files').getAllKeys();
            get.onsuccess = () => resolve(get.result);
          };
        }),
    );
    assert.deepEqual(keys, []);
    await page.click('label:has(input[name="model-kind"][value="real"])');
    await page.waitForSelector('#model-drop');
    assert.equal(await page.isHidden('#model-kept-files'), true);
    assert.deepEqual(problems(page), []);
  });
});
