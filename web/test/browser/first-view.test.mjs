// What a first-time visitor of the demo sees: the default example whole on screen (matrix and
// settings unclipped), an explanation already open, a hint instead of a flat-looking map for
// cosine and additive scores, and honest timings. Saves the English and Chinese screenshots at
// desktop and phone sizes that the other tests do not.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { computedCount, openDemo as open, PHONE, waitForRecompute } from './demo-page.mjs';
import { artifact, openBrowser } from './harness.mjs';

let browser;
before(async () => {
  browser = await openBrowser();
});
after(async () => {
  await browser?.close();
});

function openDemo(search = '', options = {}) {
  return open(browser, search, options);
}

// Scroll and client sizes of the first heatmap's scroll box, and its cell size in CSS pixels.
async function heatmapBox(page) {
  return page.evaluate(() => {
    const scroller = document.querySelector('#heatmap-a .al-heatmap-scroll');
    return {
      scrollHeight: scroller.scrollHeight,
      clientHeight: scroller.clientHeight,
      scrollWidth: scroller.scrollWidth,
      clientWidth: scroller.clientWidth,
      cell: Number(scroller.querySelector('canvas').dataset.cell),
    };
  });
}

async function explainedQuery(page) {
  return page.textContent('#explain-body .query-token');
}

async function meanEntropy(page) {
  const text = await page.textContent('#entropy-readout');
  return Number(/([\d.]+)/.exec(text)[1]);
}

async function setText(page, text) {
  const previous = await computedCount(page);
  await page.fill('#main-text', text);
  await waitForRecompute(page, previous);
}

test('at 1360x900 the default example shows whole: every matrix row and setting', async () => {
  const page = await openDemo();
  const box = await heatmapBox(page);
  assert.ok(
    box.scrollHeight <= box.clientHeight,
    `matrix ${box.scrollHeight}px in a ${box.clientHeight}px box`,
  );
  assert.ok(
    box.scrollWidth <= box.clientWidth,
    `matrix ${box.scrollWidth}px wide in a ${box.clientWidth}px box`,
  );
  const settings = await page.evaluate(() => {
    const controls = document.querySelector('.controls');
    const bottom = controls.getBoundingClientRect().bottom;
    const cut = [...controls.querySelectorAll('fieldset')].filter(
      (f) => f.getBoundingClientRect().bottom > bottom + 0.5,
    );
    return {
      scrollHeight: controls.scrollHeight,
      clientHeight: controls.clientHeight,
      cut: cut.map((f) => f.querySelector('legend').textContent),
    };
  });
  assert.ok(
    settings.scrollHeight <= settings.clientHeight + 1,
    `settings ${settings.scrollHeight}px in a ${settings.clientHeight}px box`,
  );
  assert.deepEqual(settings.cut, []);
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('a text that fits at legible cells shows whole; a long one scrolls and zooms', async () => {
  const page = await openDemo();
  const words = (n) => Array.from({ length: n }, (_, i) => `w${i}`).join(' ');
  await setText(page, words(30));
  const medium = await heatmapBox(page);
  assert.ok(
    medium.scrollHeight <= medium.clientHeight,
    `30 rows: ${medium.scrollHeight}px in ${medium.clientHeight}px`,
  );
  assert.ok(medium.cell >= 14, `30 rows keep a label each: ${medium.cell}px cells`);

  await setText(page, words(120));
  const long = await heatmapBox(page);
  assert.ok(
    long.scrollHeight > long.clientHeight,
    'a 120-token matrix scrolls instead of shrinking to dots',
  );
  await page.click('#zoom-in');
  await page.waitForFunction(
    (cell) => Number(document.querySelector('#heatmap-a canvas').dataset.cell) > cell,
    long.cell,
  );
  await page.click('#zoom-reset');
  await page.waitForFunction(
    (cell) => Number(document.querySelector('#heatmap-a canvas').dataset.cell) === cell,
    long.cell,
  );
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('explain opens on a default query, which a click overrides and the URL keeps', async () => {
  const page = await openDemo();
  assert.equal(await explainedQuery(page), 'it');
  assert.equal(
    await page.getAttribute('#token-strip .token-chip:nth-child(8)', 'aria-pressed'),
    'true',
  );
  assert.equal(
    new URL(page.url()).searchParams.has('q'),
    false,
    'a default is not written into the link',
  );

  await page.click('#token-strip .token-chip:nth-child(2)');
  await page.waitForFunction(
    () => document.querySelector('#explain-body .query-token')?.textContent === 'animal',
  );
  await page.waitForFunction(() => new URLSearchParams(location.search).get('q') === '1');
  const reopened = await openDemo(new URL(page.url()).search);
  assert.equal(await explainedQuery(reopened), 'animal');

  const previous = await computedCount(page);
  await page.click('#examples button[data-example="chinese"]');
  await waitForRecompute(page, previous);
  assert.equal(await explainedQuery(page), '它', 'an example resets the pick to its own default');
  await setText(page, 'Queries meet keys.');
  assert.equal(await explainedQuery(page), 'keys', 'other text: the last word, not the full stop');
  assert.deepEqual([...page.problems, ...reopened.problems], []);
  await page.close();
  await reopened.close();
});

test('cosine and additive: the flat softmax explained, T = 0.1 offered, not imposed', async () => {
  const page = await openDemo();
  assert.equal(await page.textContent('#score-hint'), '');
  let previous = await computedCount(page);
  await page.check('input[name="score"][value="cosine"]');
  await waitForRecompute(page, previous);
  assert.match(await page.textContent('#score-hint p'), /between −1 and 1/);
  assert.equal(
    await page.textContent('#temperature-output'),
    '1.00',
    'choosing a score leaves T alone',
  );
  const flat = await meanEntropy(page);

  previous = await computedCount(page);
  await page.click('#score-hint button');
  await waitForRecompute(page, previous);
  assert.equal(await page.textContent('#temperature-output'), '0.10');
  await page.waitForFunction(() => new URLSearchParams(location.search).get('t') === '0.1');
  const sharp = await meanEntropy(page);
  assert.ok(sharp < flat - 1, `entropy ${flat} bits at T = 1, ${sharp} at T = 0.1`);
  assert.equal(await page.$('#score-hint button'), null, 'no offer once T is at its lowest');

  await page.check('input[name="score"][value="additive"]');
  await page.click('.lang-switch button[data-lang="zh"]');
  assert.match(await page.textContent('#score-hint p'), /加性分数/);
  await page.check('input[name="score"][value="scaled-dot"]');
  assert.equal(await page.textContent('#score-hint'), '');
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('the cost panel shows kernel and total time of a warmed-up engine', async () => {
  const page = await openDemo();
  const timing = await page.evaluate(() => {
    const kernel = document.querySelector('#cost-body .kernel-time');
    const total = document.querySelector('#cost-body .total-time');
    return {
      warm: kernel.dataset.warm,
      kernel: kernel.textContent,
      total: total.firstChild.textContent,
    };
  });
  assert.equal(timing.warm, 'true', 'the first run shown came after the warm-up');
  assert.match(timing.kernel, /^\d+\.\d\d ms$/);
  assert.ok(
    Number.parseFloat(timing.total) >= Number.parseFloat(timing.kernel),
    `total ${timing.total}, kernels ${timing.kernel}`,
  );
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('screenshots: Chinese at desktop size, English on a phone', async () => {
  const desktop = await openDemo(
    '?lang=zh&text=' + encodeURIComponent('小猫没有跳上桌子，因为它太累了。'),
  );
  assert.equal(await explainedQuery(desktop), '它');
  const box = await heatmapBox(desktop);
  assert.ok(box.scrollHeight <= box.clientHeight);
  await desktop.screenshot({ path: artifact('demo-desktop-zh.png'), fullPage: true });
  // Scrolled to the end of the settings, the stage has stayed in view beside them.
  await desktop.evaluate(() =>
    document.querySelector('.controls fieldset:last-of-type').scrollIntoView({ block: 'end' }),
  );
  const stageTop = await desktop.evaluate(
    () => document.getElementById('stage').getBoundingClientRect().top,
  );
  assert.ok(stageTop >= 0, `the stage scrolled away (top ${stageTop}px)`);
  await desktop.screenshot({ path: artifact('demo-desktop-zh-scrolled.png') });

  const phone = await openDemo('', { viewport: PHONE });
  const overflow = await phone.evaluate(
    () => document.documentElement.scrollWidth - window.innerWidth,
  );
  assert.ok(overflow <= 0, `page is ${overflow}px wider than the phone`);
  const phoneBox = await heatmapBox(phone);
  assert.ok(
    phoneBox.scrollHeight <= phoneBox.clientHeight && phoneBox.scrollWidth <= phoneBox.clientWidth,
  );
  await phone.screenshot({ path: artifact('demo-phone-en.png'), fullPage: true });
  assert.deepEqual([...desktop.problems, ...phone.problems], []);
  await desktop.close();
  await phone.close();
});
