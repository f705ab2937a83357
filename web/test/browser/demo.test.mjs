// The demo page in headless Chromium: loads cleanly, recomputes as you type, shows the same
// numbers analyze() gives in Node, draws masks where they belong, exports, and restores its state
// from the URL.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { maskOptions, parseMask } from '../../src/mask-notation.js';
import {
  analyzeInNode,
  CHINESE,
  computedCount,
  ENGLISH,
  openDemo as open,
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

// RGB of the centre of heatmap cell (row, col) in the first heatmap, read from the canvas.
async function cellColor(page, row, col, id = 'heatmap-a') {
  return page.evaluate(
    ({ row, col, id }) => {
      const canvas = document.querySelector(`#${id} canvas`);
      const { left, top, cell } = canvas.dataset;
      const ratio = canvas.width / canvas.getBoundingClientRect().width;
      const x = Math.round((Number(left) + (col + 0.5) * Number(cell)) * ratio);
      const y = Math.round((Number(top) + (row + 0.5) * Number(cell)) * ratio);
      return Array.from(canvas.getContext('2d').getImageData(x, y, 1, 1).data.slice(0, 3));
    },
    { row, col, id },
  );
}

async function canvasDigest(page) {
  return page.evaluate(() => {
    const canvas = document.querySelector('#heatmap-a canvas');
    const data = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
    let hash = 2166136261;
    for (let i = 0; i < data.length; i += 7) hash = Math.imul(hash ^ data[i], 16777619) >>> 0;
    return `${canvas.width}x${canvas.height}:${hash}`;
  });
}

test('the demo loads with no console errors and draws the default example', async () => {
  const page = await openDemo();
  const table = await readTable(page);
  assert.ok(table.rows.length >= 10, `expected the example's tokens, got ${table.rows.length}`);
  assert.equal(table.cols.length, table.rows.length);
  for (const row of table.cells) {
    const sum = row.reduce((s, c) => s + c.value, 0);
    assert.ok(Math.abs(sum - 1) < 1e-4, `a row sums to ${sum}`);
  }
  const badge = await page.textContent('#engine-badge');
  assert.match(badge, /wasm/);
  await page.screenshot({ path: artifact('demo-desktop.png'), fullPage: true });
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('typing changes the tokens and the heatmap', async () => {
  const page = await openDemo();
  const before = await canvasDigest(page);
  const previous = await computedCount(page);
  await page.fill('#main-text', '');
  await page.type('#main-text', 'Queries meet keys', { delay: 15 });
  await page.waitForFunction(
    () => document.querySelectorAll('#token-strip .token-chip').length === 3,
    null,
    { timeout: 20000 },
  );
  await waitForRecompute(page, previous);
  const chips = await page.$$eval('#token-strip .token-chip', (nodes) =>
    nodes.map((n) => n.firstChild.textContent),
  );
  assert.deepEqual(chips, ['Queries', 'meet', 'keys']);
  assert.notEqual(await canvasDigest(page), before);
  const table = await readTable(page);
  assert.deepEqual(table.rows, ['Queries', 'meet', 'keys']);
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('the weights in the screen-reader table equal analyze() in Node', async () => {
  const settings = { heads: 2, head: 2, mask: 'causal+local:2', temperature: 0.7, score: 'cosine' };
  const search =
    `?text=${encodeURIComponent(CHINESE)}&heads=${settings.heads}&head=${settings.head}` +
    `&mask=${encodeURIComponent(settings.mask)}&t=${settings.temperature}&score=${settings.score}`;
  const page = await openDemo(search);
  const table = await readTable(page);
  const n = table.rows.length;
  const expected = analyzeInNode(
    CHINESE,
    {
      heads: settings.heads,
      headDim: 16,
      seed: 1,
      granularity: 'word',
      score: settings.score,
      temperature: settings.temperature,
      ...maskOptions(parseMask(settings.mask), n, n),
    },
    'wasm-relaxed',
  );
  assert.equal(expected.backend, 'wasm-relaxed');
  assert.match(
    await page.textContent('#cost-body .cost-facts'),
    /wasm-relaxed/,
    "the demo's backend",
  );
  assert.deepEqual(table.rows, expected.tokens);
  const weights = expected.heads[settings.head - 1].weights;
  const mask = expected.heads[settings.head - 1].mask;
  for (let r = 0; r < n; r++) {
    for (let c = 0; c < n; c++) {
      const cell = table.cells[r][c];
      const i = r * n + c;
      assert.equal(cell.masked, !mask[i], `mask at ${r},${c}`);
      if (!cell.masked) {
        assert.equal(cell.value, weights[i], `weight at ${r},${c}`);
        assert.equal(cell.text, weights[i].toFixed(3));
      }
    }
  }
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('causal attention leaves the upper triangle empty', async () => {
  const page = await openDemo('?mask=causal');
  const table = await readTable(page);
  const n = table.rows.length;
  const masked = await cellColor(page, 0, n - 1);
  for (let r = 0; r < n; r++) {
    for (let c = 0; c < n; c++) {
      assert.equal(table.cells[r][c].masked, c > r, `cell ${r},${c}`);
    }
  }
  // On the canvas: every upper cell has the masked colour, no lower cell has it.
  for (const [r, c] of [
    [0, 1],
    [2, 5],
    [n - 2, n - 1],
  ])
    assert.deepEqual(await cellColor(page, r, c), masked);
  for (const [r, c] of [
    [0, 0],
    [5, 2],
    [n - 1, 0],
  ])
    assert.notDeepEqual(await cellColor(page, r, c), masked);
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('the window slider changes the band of a local mask', async () => {
  const page = await openDemo();
  let previous = await computedCount(page);
  await page.check('input[name="pattern"][value="local"]');
  await waitForRecompute(page, previous);
  const bandOf = (table) => {
    let width = 0;
    table.cells.forEach((row, r) =>
      row.forEach((cell, c) => {
        if (!cell.masked) width = Math.max(width, Math.abs(r - c));
      }),
    );
    return width;
  };
  const initial = bandOf(await readTable(page));
  assert.equal(initial, Number(await page.inputValue('#window-input')));
  previous = await computedCount(page);
  await page.focus('#window-input');
  await page.keyboard.press('ArrowLeft');
  await waitForRecompute(page, previous);
  const narrower = await readTable(page);
  assert.equal(bandOf(narrower), initial - 1);
  narrower.cells.forEach((row, r) =>
    row.forEach((cell, c) => {
      assert.equal(cell.masked, Math.abs(r - c) > initial - 1, `cell ${r},${c}`);
    }),
  );
  await page.waitForFunction(() => new URLSearchParams(location.search).get('mask') === 'local:1');
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('exports a PNG, a valid SVG and JSON with the numbers', async () => {
  const page = await openDemo('?heads=2');
  const table = await readTable(page);
  const n = table.rows.length;
  const download = async (selector) => {
    const [file] = await Promise.all([page.waitForEvent('download'), page.click(selector)]);
    return { name: file.suggestedFilename(), bytes: readFileSync(await file.path()) };
  };
  const png = await download('#export-png');
  assert.match(png.name, /\.png$/);
  assert.deepEqual([...png.bytes.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  assert.ok(
    png.bytes.readUInt32BE(16) > 200 && png.bytes.readUInt32BE(20) > 200,
    'PNG is a real picture',
  );

  const svg = await download('#export-svg');
  assert.match(svg.name, /\.svg$/);
  const parsed = await page.evaluate((text) => {
    const doc = new DOMParser().parseFromString(text, 'image/svg+xml');
    return {
      error: Boolean(doc.querySelector('parsererror')),
      root: doc.documentElement.localName,
      cells: doc.querySelectorAll('g[shape-rendering] > rect').length,
      texts: [...doc.querySelectorAll('text')].map((t) => t.textContent),
    };
  }, svg.bytes.toString('utf8'));
  assert.equal(parsed.error, false);
  assert.equal(parsed.root, 'svg');
  assert.equal(parsed.cells, n * n);
  assert.ok(parsed.texts.includes('animal'));

  const json = JSON.parse((await download('#export-json')).bytes.toString('utf8'));
  assert.equal(json.heads.length, 2);
  assert.equal(json.queryTokens.length, n);
  assert.equal(json.heads[0].weights.length, n);
  assert.equal(json.heads[0].weights[3][4], table.cells[3][4].value);

  await page.click('#tab-lines');
  const lines = await download('#export-svg');
  const lineDoc = await page.evaluate((text) => {
    const doc = new DOMParser().parseFromString(text, 'image/svg+xml');
    return {
      error: Boolean(doc.querySelector('parsererror')),
      paths: doc.querySelectorAll('path').length,
    };
  }, lines.bytes.toString('utf8'));
  assert.equal(lineDoc.error, false);
  assert.ok(lineDoc.paths > 0);
  const linePng = await download('#export-png');
  assert.equal(linePng.bytes.readUInt32BE(0), 0x89504e47);
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('SVG exports of text with characters XML forbids are well-formed', async () => {
  const text = 'bell\u0007 back\u0008space esc\u001b[2J start\u0001 end\uffff done';
  const page = await openDemo(`?text=${encodeURIComponent(text)}`);
  await readTable(page);
  const download = async () => {
    const [file] = await Promise.all([page.waitForEvent('download'), page.click('#export-svg')]);
    return readFileSync(await file.path(), 'utf8');
  };
  const wellFormed = (svg) =>
    page.evaluate((source) => {
      const doc = new DOMParser().parseFromString(source, 'application/xml');
      return doc.querySelector('parsererror')?.textContent ?? 'ok';
    }, svg);
  const matrix = await download();
  assert.equal(await wellFormed(matrix), 'ok');
  assert.ok(!/[\u0001\u0007\u0008\u001b\uffff]/.test(matrix), 'no forbidden character is left');
  assert.ok(matrix.includes('\ufffd'), 'they are shown as U+FFFD');
  await page.click('#tab-lines');
  assert.equal(await wellFormed(await download()), 'ok');
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('a URL restores the view, and the page writes its state back to the URL', async () => {
  const search =
    `?text=${encodeURIComponent(ENGLISH)}&heads=2&head=2` +
    `&mask=${encodeURIComponent('causal+local:1')}` +
    '&t=0.5&view=lines&q=3&lang=zh&score=dot';
  const page = await openDemo(search);
  assert.equal(await page.getAttribute('html', 'lang'), 'zh-Hans');
  assert.equal(await page.isChecked('#causal-input'), true);
  assert.equal(await page.isChecked('input[name="pattern"][value="local"]'), true);
  assert.equal(await page.isChecked('input[name="score"][value="dot"]'), true);
  assert.equal(await page.inputValue('#window-input'), '1');
  assert.equal(await page.inputValue('#heads-input'), '2');
  assert.equal(await page.textContent('#temperature-output'), '0.50');
  assert.equal(
    await page.getAttribute('#head-picker [aria-checked="true"]', 'aria-label'),
    '第 2 个头',
  );
  assert.equal(await page.getAttribute('#tab-lines', 'aria-selected'), 'true');
  assert.equal(await page.isVisible('#lines svg'), true);
  assert.equal(
    await page.getAttribute('#token-strip .token-chip:nth-child(4)', 'aria-pressed'),
    'true',
  );
  assert.match(await page.textContent('#explain-body'), /第 4 个词元/);
  const restored = await readTable(page);

  // Change something through the UI; the URL follows; opening that URL gives the same table.
  const previous = await computedCount(page);
  await page.check('input[name="score"][value="scaled-dot"]');
  await waitForRecompute(page, previous);
  await page.waitForFunction(() => !location.search.includes('score=dot'));
  const changed = await readTable(page);
  assert.notDeepEqual(changed.cells, restored.cells);
  const copy = await openDemo(new URL(page.url()).search);
  assert.deepEqual(await readTable(copy), changed);
  assert.deepEqual([...page.problems, ...copy.problems], []);
  await page.close();
  await copy.close();
});

test('keyboard: arrow keys move over heatmap cells and Enter explains the row', async () => {
  const page = await openDemo();
  await page.focus('#heatmap-a canvas');
  // The explained query's row holds the focus cell at first; Ctrl+Home goes to the first cell.
  await page.keyboard.press('Control+Home');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowRight');
  const announced = await page.textContent('#heatmap-a .al-sr-only');
  assert.match(announced, /^didn't → animal: \d\.\d{3}$/);
  await page.keyboard.press('Enter');
  await page.waitForFunction(
    () => document.querySelector('#explain-body .query-token')?.textContent === "didn't",
  );
  assert.equal(
    await page.getAttribute('#token-strip .token-chip:nth-child(3)', 'aria-pressed'),
    'true',
  );
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('Chinese text on a phone-sized viewport fits the screen', async () => {
  const page = await openDemo(`?text=${encodeURIComponent(CHINESE)}&lang=zh&q=2`, {
    viewport: { width: 390, height: 844 },
  });
  const overflow = await page.evaluate(
    () => document.documentElement.scrollWidth - window.innerWidth,
  );
  assert.ok(overflow <= 0, `page is ${overflow}px wider than the phone`);
  const chips = await page.$$eval('#token-strip .token-chip', (nodes) =>
    nodes.map((n) => n.firstChild.textContent),
  );
  assert.ok(chips.includes('小猫') || chips.includes('猫'), `tokens: ${chips}`);
  await page.screenshot({ path: artifact('demo-phone-zh.png'), fullPage: true });
  const previous = await computedCount(page);
  await page.click('#tab-lines');
  await page.click('#examples button[data-example="long-chinese"]');
  await waitForRecompute(page, previous);
  assert.equal(await page.getAttribute('#lines svg', 'class'), 'al-lines-svg al-lines-horizontal');
  await page.evaluate(() => document.getElementById('stage').scrollIntoView());
  await page.screenshot({ path: artifact('demo-phone-zh-lines.png') });
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('the cost panel measures both strategies at N = 2048; a local mask skips tiles', async () => {
  const page = await openDemo('?mask=local:2&heads=2');
  const facts = await page.textContent('#cost-body .cost-facts');
  assert.match(facts, /wasm-relaxed/, 'Chromium validates relaxed SIMD: auto loads that build');
  await page.click('#cost-body .bench-controls button');
  await page.waitForSelector('#cost-body .bench-result tbody tr:nth-child(2)', { timeout: 60000 });
  const rows = await page.$$eval('#cost-body .bench-result tbody tr', (trs) =>
    trs.map((tr) => [...tr.children].map((td) => td.textContent)),
  );
  const [materialized, streaming] = rows;
  const tiles = (row) => row[3].split(' / ').map(Number);
  const [visited, total] = tiles(streaming);
  assert.ok(total > 1 && visited < total / 4, `streaming visited ${visited} of ${total} tiles`);
  const mib = (text) =>
    Number.parseFloat(text) * { KiB: 1 / 1024, MiB: 1, GiB: 1024 }[text.split(' ')[1]];
  assert.ok(
    mib(materialized[2]) > 8 * mib(streaming[2]),
    `memory ${materialized[2]} vs ${streaming[2]}`,
  );
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('top-k and LSH switches write the notation; the cost panel counts drops', async () => {
  const page = await openDemo(`?text=${encodeURIComponent(ENGLISH)}&heads=2&mask=causal`);
  let previous = await computedCount(page);
  await page.check('#top-k-switch');
  await waitForRecompute(page, previous);
  previous = await computedCount(page);
  await page.fill('#top-k-input', '2'); // a range input: fill sets its value and fires input
  await waitForRecompute(page, previous);
  assert.equal(await page.textContent('#mask-code'), 'causal+topk:2');
  const table = await readTable(page);
  const n = table.rows.length;
  // Head 1's rows each give weight to at most 2 keys, the same ones analyze() keeps in Node.
  const expected = analyzeInNode(ENGLISH, {
    heads: 2,
    headDim: 16,
    seed: 1,
    granularity: 'word',
    ...maskOptions(parseMask('causal+topk:2'), n, n),
  });
  table.cells.forEach((row, r) => {
    const kept = row.filter((cell) => !cell.masked && cell.value > 0).length;
    assert.equal(kept, Math.min(2, r + 1), `row ${r}`);
  });
  const visible = expected.heads.reduce((sum, h) => sum + h.mask.filter(Boolean).length, 0);
  const kept = expected.heads.reduce(
    (sum, h) => sum + h.weights.filter((w, i) => h.mask[i] && w > 0).length,
    0,
  );
  assert.equal(kept, 2 * (2 * n - 1), 'every row keeps min(2, visible) keys');
  assert.match(
    await page.textContent('#cost-body .cost-selection'),
    new RegExp(`kept ${kept} of the ${visible} \\(query, key\\) pairs`),
  );
  previous = await computedCount(page);
  await page.check('#lsh-switch');
  await waitForRecompute(page, previous);
  assert.equal(await page.textContent('#mask-code'), 'causal+topk:2+lsh:4:1:0');
  assert.equal(await page.isVisible('#buckets-input'), true);
  previous = await computedCount(page);
  await page.uncheck('#top-k-switch');
  await waitForRecompute(page, previous);
  assert.equal(await page.textContent('#mask-code'), 'causal+lsh:4:1:0');
  assert.equal(await page.isVisible('#top-k-input'), false);
  await page.waitForURL(/mask=causal%2Blsh%3A4%3A1%3A0/); // the URL is written back after a pause
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('empty text and text over the token cap say so instead of drawing stale weights', async () => {
  const page = await openDemo();
  let previous = await computedCount(page);
  await page.fill('#main-text', '   ');
  await waitForRecompute(page, previous);
  assert.equal(await page.isVisible('#heatmap-a canvas'), false);
  assert.match(await page.textContent('#status-line'), /Type something/);
  await page.fill('#main-text', 'word '.repeat(600));
  await page.waitForFunction(
    () => document.getElementById('status-line').classList.contains('is-error'),
    null,
    { timeout: 20000 },
  );
  assert.match(await page.textContent('#status-line'), /Cannot compute: .*512/);
  previous = await computedCount(page);
  await page.fill('#main-text', 'back to normal');
  await waitForRecompute(page, previous);
  assert.equal(await page.isVisible('#heatmap-a canvas'), true);
  assert.deepEqual((await readTable(page)).rows, ['back', 'to', 'normal']);
  assert.deepEqual(page.problems, []);
  await page.close();
});
