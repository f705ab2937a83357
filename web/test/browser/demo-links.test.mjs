// Links into the demo in headless Chromium: a value the page cannot use falls back to its default
// with a visible notice and the page keeps computing; long texts are shared through the fragment,
// which the server never sees; old ?query links keep working, however long.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { computedCount, openDemo as open, readTable, waitForRecompute } from './demo-page.mjs';
import { openBrowser } from './harness.mjs';

let browser;
before(async () => {
  browser = await openBrowser();
});
after(async () => {
  await browser?.close();
});

const openDemo = (search = '', options = {}) => open(browser, search, options);

// 500 long words: 17,500 characters, over the 16 KiB a server reads of a request's headers.
const LONG_TEXT = Array(500).fill('supercalifragilisticexpialidocious').join(' ');

test('a link with unusable values shows the defaults, says so, and keeps computing', async () => {
  const page = await openDemo('?mask=local:1e21&compare=strided:1e21&heads=2');
  const table = await readTable(page);
  assert.ok(table.rows.length > 3);
  assert.equal(await page.isVisible('#link-notice'), true);
  const notice = await page.textContent('#link-notice');
  assert.match(notice, /mask=local:1e21/);
  assert.match(notice, /compare=strided:1e21/);
  assert.doesNotMatch(notice, /heads=/, 'a usable value is not listed');
  assert.equal(
    await page.isVisible('#compare-figure'),
    false,
    'no comparison: its value was unusable',
  );
  await page.waitForFunction(() => new URLSearchParams(location.search).get('heads') === '2');
  assert.equal(new URLSearchParams(new URL(page.url()).search).get('mask'), null);

  const before = await computedCount(page);
  await page.fill('#main-text', 'typing still recomputes');
  await waitForRecompute(page, before);
  assert.deepEqual((await readTable(page)).rows, ['typing', 'still', 'recomputes']);
  assert.equal(
    await page.isVisible('#link-notice'),
    false,
    'gone once the reader changes something',
  );

  // Reloading the link it wrote shows the same view, with nothing to report.
  await page.waitForFunction(() => location.search.includes('text='));
  const again = await openDemo(new URL(page.url()).search);
  assert.deepEqual((await readTable(again)).rows, ['typing', 'still', 'recomputes']);
  assert.equal(await again.isVisible('#link-notice'), false);
  assert.deepEqual(page.problems, []);
  assert.deepEqual(again.problems, []);
  await page.close();
  await again.close();
});

test('a long text is shared in the fragment, and the link opens the same view', async () => {
  const page = await openDemo('?mask=causal');
  const before = await computedCount(page);
  await page.fill('#main-text', LONG_TEXT);
  await waitForRecompute(page, before);
  await page.waitForFunction(() => location.hash.startsWith('#text='));
  const link = new URL(page.url());
  assert.equal(link.search, '', 'nothing long goes to the server');
  assert.ok(link.hash.length > 16 * 1024, `${link.hash.length} characters in the fragment`);

  const opened = await openDemo(link.hash);
  assert.equal(await opened.inputValue('#main-text'), LONG_TEXT);
  assert.match(await opened.textContent('#status-line'), /^500 tokens/);
  assert.equal(await opened.isChecked('#causal-input'), true, 'the mask came with it');
  // Shortening the text brings the settings back into the query string.
  const count = await computedCount(opened);
  await opened.fill('#main-text', 'short again');
  await waitForRecompute(opened, count);
  await opened.waitForFunction(() => location.hash === '' && location.search.includes('text='));
  assert.deepEqual(page.problems, []);
  assert.deepEqual(opened.problems, []);
  await page.close();
  await opened.close();
});

test('old ?query links keep working, even long ones', async () => {
  const page = await openDemo(`?text=${encodeURIComponent(LONG_TEXT)}&heads=1`);
  assert.equal(await page.inputValue('#main-text'), LONG_TEXT);
  assert.match(await page.textContent('#status-line'), /^500 tokens/);
  // The page rewrites such a link into the fragment form.
  await page.waitForFunction(() => location.search === '' && location.hash.startsWith('#text='));
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('a settings fragment pasted into an open page is read as a new link', async () => {
  const page = await openDemo();
  const before = await computedCount(page);
  await page.evaluate(() => {
    location.hash = 'text=from+the+fragment&mask=tokens%3A0';
  });
  await waitForRecompute(page, before);
  assert.deepEqual((await readTable(page)).rows, ['from', 'the', 'fragment']);
  // An anchor (the skip link's) is only an anchor.
  await page.evaluate(() => {
    location.hash = 'stage';
  });
  assert.deepEqual((await readTable(page)).rows, ['from', 'the', 'fragment']);
  assert.deepEqual(page.problems, []);
  await page.close();
});
