// Every control of the demo behaves: examples and "Things to try" cards set what they depend on
// (and Reset undoes everything), legends show the range their view draws with, small readouts
// say what is true, exports match the view, the keyboard reaches the heatmap in a few Tab
// presses, and the Chinese page is Chinese throughout.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import {
  analyzeInNode,
  CHINESE,
  computedCount,
  ENGLISH,
  openDemo as open,
  PHONE,
  readTable,
  waitForRecompute,
} from './demo-page.mjs';
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

const search = (page) => page.evaluate(() => location.search);

// Clicks `selector` and waits until the page has written its new state into the URL.
async function clickAndSettle(page, selector) {
  const before = await search(page);
  await page.click(selector);
  await page.waitForFunction((old) => location.search !== old, before, { timeout: 5000 });
  await page.waitForFunction(() => !document.querySelector('#status-line.is-error'));
  await page.waitForTimeout(350); // the URL is written 300 ms after the last change
}

test('examples and cards set everything they depend on; Reset undoes every setting', async () => {
  const page = await openDemo();
  await clickAndSettle(page, '#examples button[data-example="long-chinese"]');
  await clickAndSettle(page, '#examples button[data-example="translation"]');
  assert.equal(
    await page.textContent('#status-line'),
    'target 5 · source 5 tokens · ' + 'click a token to explain it',
  );

  const cards = [
    ['ideaScaleTitle', '?dk=64&score=dot'],
    ['ideaTempTitle', '?t=0.2'],
    ['ideaCausalTitle', '?mask=causal'],
    [
      'ideaCrossTitle',
      '?mode=cross&text=I+love+natural+language+processing&source=' +
        encodeURIComponent('我爱自然语言处理'),
    ],
    ['ideaHeadsTitle', '?heads=8&view=heads'],
  ];
  for (const [card, expected] of cards) {
    await clickAndSettle(page, `#primer button[data-idea="${card}"]`);
    assert.equal(await search(page), expected, card);
  }
  await page.click('.lang-switch button[data-lang="zh"]');
  await page.check('input[name="scale"][value="cividis"]');
  await page.check('input[name="score"][value="cosine"]');
  await clickAndSettle(page, '#reset-button');
  // Back to the defaults, the Chinese sentence included; the language and colours stay.
  assert.equal(await search(page), '?colors=cividis&lang=zh');
  assert.equal(await page.inputValue('#main-text'), CHINESE);
  // Cross-attention pairs the default sentence with its translation, not with another text.
  await clickAndSettle(page, 'label:has(input[name="mode"][value="cross"])');
  assert.equal(
    await page.inputValue('#source-text'),
    "The kitten didn't jump onto the table because it was too tired.",
  );
  assert.equal(await search(page), '?mode=cross&colors=cividis&lang=zh', 'the default pair');
  assert.deepEqual(page.problems, []);
  await page.close();
});

// The largest visible weight of a table read back by readTable().
function tableMax(table) {
  return Math.max(
    ...table.cells
      .flat()
      .filter((c) => !c.masked)
      .map((c) => c.value),
  );
}

test("each view's legend shows the range it draws with; thumbnails carry labels", async () => {
  // Heads: one range shared by every head, as in analyze().
  const page = await openDemo('?view=heads');
  const expected = analyzeInNode(ENGLISH, { heads: 4, headDim: 16, seed: 1 });
  const shared = Math.max(...expected.heads.flatMap((h) => h.weights));
  assert.equal(Number(await page.getAttribute('#legend-hi', 'data-value')), shared);
  const thumb = await page.evaluate(() => {
    const canvas = document.querySelector('#heads-grid canvas');
    const ctx = canvas.getContext('2d');
    const ratio = canvas.width / canvas.getBoundingClientRect().width;
    // Dark pixels of text left of the cells (the query labels).
    const left = Math.floor(12 * ratio);
    const strip = ctx.getImageData(0, 0, left, canvas.height).data;
    let ink = 0;
    for (let i = 0; i < strip.length; i += 4) if (strip[i + 3] > 0 && strip[i] < 120) ink++;
    return { ink };
  });
  assert.ok(thumb.ink > 20, `label ink pixels in a thumbnail: ${thumb.ink}`);
  await page.setViewportSize(PHONE);
  await page.locator('#stage').screenshot({ path: artifact('controls-heads-phone-en.png') });

  // Lines with a comparison: the legend is the line view's own head, not the other matrix.
  const lines = await openDemo('?view=lines&mask=causal&compare=global');
  const own = tableMax(await readTable(lines));
  assert.equal(Number(await lines.getAttribute('#legend-hi', 'data-value')), own);
  assert.deepEqual([...page.problems, ...lines.problems], []);
  await page.close();
  await lines.close();
});

test('the widget opens a head it shows in its grid, and goes back', async () => {
  const page = await browser.context.newPage();
  await page.goto(`${browser.base}/widget/blog.html`);
  await page.locator('#widget-cross').scrollIntoViewIfNeeded();
  await page.waitForFunction(
    () => document.getElementById('widget-cross').dataset.state === 'ready',
  );
  const root = (selector) => page.locator(`#widget-cross >> ${selector}`);
  await root('.al-head-tile[data-head="2"]').click();
  await page.waitForFunction(() =>
    document.getElementById('widget-cross').shadowRoot.querySelector('canvas.al-heatmap-canvas'),
  );
  assert.match(await root('.header').textContent(), /head 3 of 4/);
  assert.match(await root('.header').textContent(), /scaled dot · T = 0.7/);
  await root('.header .back').click();
  assert.equal(await root('.al-head-tile').count(), 4);
  await page.close();
});

test('small readouts say what is true; exports follow the view', async () => {
  const empty = await openDemo('?text=');
  assert.doesNotMatch(await empty.textContent('#engine-badge'), /undefined/);
  assert.equal(await empty.textContent('#entropy-readout'), '');
  await empty.close();

  const one = await openDemo('?text=hello&score=cosine');
  assert.match(await one.textContent('#status-line'), /^1 token ·/);
  const headers = await one.$$eval('#explain-body .explain-table th', (ths) =>
    ths.map((th) => th.textContent),
  );
  assert.equal(headers[1], 'cos(q,k)');
  await one.close();

  const page = await openDemo('?view=heads&heads=3');
  const n = (await readTable(page)).rows.length;
  const download = async (selector) => {
    const [file] = await Promise.all([page.waitForEvent('download'), page.click(selector)]);
    return { name: file.suggestedFilename(), text: readFileSync(await file.path(), 'utf8') };
  };
  const svg = await download('#export-svg');
  assert.equal(svg.name, 'attnlens-self-heads.svg');
  const grid = await page.evaluate((text) => {
    const doc = new DOMParser().parseFromString(text, 'image/svg+xml');
    return {
      heads: doc.querySelectorAll('g.head').length,
      cells: doc.querySelectorAll('g[shape-rendering] > rect').length,
      title: doc.querySelector('svg > text').textContent,
    };
  }, svg.text);
  assert.deepEqual(grid, {
    heads: 3,
    cells: 3 * n * n,
    title: 'attnlens · Self-attention · 3 heads',
  });
  const png = await download('#export-png');
  assert.equal(png.name, 'attnlens-self-heads.png');

  await page.click('#tab-lines');
  const lines = await download('#export-svg');
  const texts = await page.evaluate((text) => {
    const doc = new DOMParser().parseFromString(text, 'image/svg+xml');
    return [...doc.querySelectorAll('text')].map((t) => t.textContent);
  }, lines.text);
  assert.equal(texts[0], 'attnlens · Self-attention · head 1');
  assert.ok(texts.includes('Line width and colour: the weight'), texts.join(' | '));
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('keyboard: a tab stop per group, a stepped temperature, labels stay when zoomed', async () => {
  const tabsToHeatmap = async (page) => {
    await page.focus('#main-text');
    for (let presses = 1; presses <= 60; presses++) {
      await page.keyboard.press('Tab');
      if (await page.evaluate(() => document.activeElement.matches('#heatmap-a canvas'))) {
        return presses;
      }
    }
    return Infinity;
  };
  const page = await openDemo();
  const short = await tabsToHeatmap(page);
  assert.ok(short <= 20, `${short} Tab presses from the text to the heatmap`);
  const long = await openDemo(`?text=${encodeURIComponent('word '.repeat(40))}`);
  assert.equal(await tabsToHeatmap(long), short, 'the count does not grow with the tokens');

  // Arrow keys inside a group; the chip strip keeps one tab stop.
  await page.focus('#token-strip .token-chip[tabindex="0"]');
  await page.keyboard.press('Home');
  await page.keyboard.press('ArrowRight');
  assert.equal(await page.evaluate(() => document.activeElement.dataset.index), '1');
  assert.equal(await page.$$eval('#token-strip [tabindex="0"]', (n) => n.length), 1);

  // Every "Try it" (and every "Open in <model>") has its own name, saying which card it is on.
  const names = await page.$$eval('#primer button', (b) =>
    b.map((x) => [
      x.getAttribute('aria-label'),
      x.closest('.idea').querySelector('h3').textContent,
    ]),
  );
  assert.equal(new Set(names.map(([name]) => name)).size, names.length, names.join(' | '));
  const tries = names.filter(([name]) => name.startsWith('Try it: '));
  assert.equal(tries.length, 8);
  assert.ok(
    names.every(
      ([name, title]) => name === `Try it: ${title}` || name.startsWith(`${title}: open in `),
    ),
    names.join(' | '),
  );

  // The temperature slider moves in visible steps.
  let previous = await computedCount(page);
  await page.focus('#temperature-input');
  await page.keyboard.press('ArrowRight');
  await waitForRecompute(page, previous);
  assert.equal(await page.textContent('#temperature-output'), '1.10');
  await page.keyboard.press('ArrowLeft');
  await page.keyboard.press('ArrowLeft');
  assert.equal(await page.textContent('#temperature-output'), '0.89');

  // Zoomed and scrolled: the key labels are painted along the visible top edge, and the focus
  // ring sits on the scroll box, where it is never clipped.
  await long.focus('#heatmap-a canvas');
  for (let i = 0; i < 5; i++) await long.keyboard.press('+');
  await long.evaluate(() => {
    document.querySelector('#heatmap-a .al-heatmap-scroll').scrollTop = 300;
  });
  await long.waitForFunction(
    () => document.querySelector('#heatmap-a canvas').dataset.labelsTop === '300',
  );
  const band = await long.evaluate(() => {
    const canvas = document.querySelector('#heatmap-a canvas');
    const ratio = canvas.width / canvas.getBoundingClientRect().width;
    const { left, cell } = canvas.dataset;
    const x = Math.round((Number(left) + 2.5 * Number(cell)) * ratio);
    const pixel = canvas.getContext('2d').getImageData(x, Math.round(302 * ratio), 1, 1).data;
    const scroller = document.querySelector('#heatmap-a .al-heatmap-scroll');
    return {
      pixel: [...pixel.slice(0, 3)],
      ring: getComputedStyle(scroller).outlineStyle,
      canvasRing: getComputedStyle(canvas).outlineStyle,
    };
  });
  assert.deepEqual(band.pixel, [255, 254, 251], 'the label band is the background');
  assert.equal(band.ring, 'solid');
  assert.equal(band.canvasRing, 'none');
  await long.setViewportSize(PHONE);
  await long.evaluate(() => document.getElementById('stage').scrollIntoView());
  await long.screenshot({ path: artifact('controls-zoomed-phone-en.png') });
  assert.deepEqual([...page.problems, ...long.problems], []);
  await page.close();
  await long.close();
});

test('the Chinese page is Chinese, and a Chinese reader gets a Chinese sentence', async () => {
  const page = await openDemo('', { languages: ['zh-CN', 'zh'], viewport: PHONE });
  assert.equal(await page.getAttribute('html', 'lang'), 'zh-Hans');
  assert.equal(await page.inputValue('#main-text'), CHINESE);
  assert.equal(await search(page), '', 'the default sentence stays out of the link');
  assert.equal(
    await page.textContent('#examples button[data-example="english"]'),
    '英文：“it” 指的是谁？',
  );
  const visible = await page.evaluate(() => document.body.innerText);
  assert.doesNotMatch(visible, /\bworker\b|main thread| ms\b/);
  assert.match(await page.textContent('#engine-badge'), /后台线程/);
  assert.equal(await page.textContent('#granularity-group label:nth-child(3)'), '按子词');
  assert.match(await page.textContent('#explain-body'), /显示全部 16 维/);
  await page.screenshot({ path: artifact('controls-zh-locale-phone.png'), fullPage: true });

  const compare = await openDemo('?lang=zh&mask=causal&compare=global');
  assert.equal(await compare.getAttribute('#heatmap-b canvas', 'aria-roledescription'), '热力图');
  assert.match(await compare.getAttribute('#heatmap-b canvas', 'aria-label'), /^使用掩码 global /);
  assert.match(await compare.getAttribute('#heatmap-a canvas', 'aria-label'), /^使用掩码 causal /);

  const blog = await browser.context.newPage();
  await blog.goto(`${browser.base}/widget/blog.html`);
  await blog.waitForFunction(
    () => document.getElementById('widget-local').dataset.state === 'ready',
  );
  const header = await blog.locator('#widget-local >> .header').textContent();
  assert.match(header, /缩放点积 · T = 1/);
  assert.doesNotMatch(header, /scaled-dot/);
  assert.deepEqual([...page.problems, ...compare.problems], []);
  await page.close();
  await compare.close();
  await blog.close();
});
