// Top-k and LSH on the demo page: the keys they leave out are named "left out" (not 0.000, not
// "masked") in the Numbers view and the explain table, hatched in the heatmap, and the explain
// panel says which keys they kept and why (the K largest logits against the lowest one kept; the
// bucket the query and each key fell in; the softmax over the kept keys only). The page's reading
// of the choice is checked against the engine's own weights from analyze() in Node: a dropped
// key's weight is exactly 0.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { maskOptions, parseMask } from '../../src/mask-notation.js';
import { analyzeInNode, ENGLISH, openDemo as open, PHONE, readTable } from './demo-page.mjs';
import { artifact, openBrowser } from './harness.mjs';

let browser;
before(async () => {
  browser = await openBrowser();
});
after(async () => {
  await browser?.close();
});

const TEXT = `text=${encodeURIComponent(ENGLISH)}&heads=2`;

function openDemo(search, options = {}) {
  return open(browser, search, options);
}

// Head 1's weights from the engine in Node, with the page's defaults (d_k 16, seed 1, words).
function engineWeights(mask, n) {
  const options = { heads: 2, headDim: 16, seed: 1, granularity: 'word' };
  return analyzeInNode(ENGLISH, { ...options, ...maskOptions(parseMask(mask), n, n) }).heads[0]
    .weights;
}

// Each step of the explain panel: its paragraphs and every formula.
async function explainSteps(page) {
  return page.$$eval('#explain-body .step', (steps) =>
    steps.map((step) => ({
      text: [...step.querySelectorAll('p')].map((p) => p.textContent).join(' '),
      formulas: [...step.querySelectorAll('.formula')].map((f) => f.textContent),
    })),
  );
}

// The explain table's rows: each cell's text, and whether the row is masked or left out.
async function explainRows(page) {
  return page.$$eval('#explain-body .explain-table tbody tr', (rows) =>
    rows.map((row) => ({
      key: Number(row.dataset.key),
      cells: [...row.children].map((td) => td.textContent),
      leftOut: row.classList.contains('is-left-out'),
    })),
  );
}

// Every cell of the Numbers table is left out exactly where the engine gave weight 0.
function assertLeftOutIsEngineZero(table, weights, word) {
  const n = table.cols.length;
  table.cells.forEach((row, r) =>
    row.forEach((cell, c) => {
      const zero = weights[r * n + c] === 0;
      assert.equal(cell.leftOut, zero && !cell.masked, `(${r}, ${c})`);
      if (cell.leftOut) assert.equal(cell.text, word, `(${r}, ${c})`);
      else if (!cell.masked) assert.ok(cell.value > 0, `(${r}, ${c}) kept with weight 0`);
    }),
  );
}

test('top-k names the keys it leaves out and explains its choice', async () => {
  const page = await openDemo(`?${TEXT}&mask=topk:3&view=numbers&q=7`);
  const table = await readTable(page);
  const n = table.cols.length;
  assertLeftOutIsEngineZero(table, engineWeights('topk:3', n), 'left out');
  for (const row of table.cells) assert.equal(row.filter((cell) => !cell.leftOut).length, 3);

  const [, , mask, softmax] = await explainSteps(page);
  assert.match(mask.text, /Nothing is masked: this query may look at all 12 keys\./);
  const kth = new RegExp(
    'Top-k keeps the 3 largest logits of the 12 keys still in; the lowest of those kept is ' +
      'x\\((.+?)\\) = (−?\\d+\\.\\d{3})\\. The other 9 are left out',
  ).exec(mask.text);
  assert.ok(kth, mask.text);
  const rows = await explainRows(page);
  const kept = rows.filter((row) => !row.leftOut);
  assert.equal(kept.length, 3);
  // Columns: key, score, logit, weight, key mean. The lowest kept logit is the one named.
  const logits = kept.map((row) => Number(row.cells[2].replace('−', '-')));
  assert.equal(Math.min(...logits), Number(kth[2].replace('−', '-')));
  for (const row of rows.filter((r) => r.leftOut)) {
    assert.equal(row.cells[2], '−∞');
    assert.equal(row.cells[3], 'left out');
  }
  assert.match(softmax.text, /runs over the 3 keys left in, not all 12 visible ones/);
  assert.match(softmax.formulas[0], /^w\(.+\) = exp\(−?\d+\.\d{3}\) \/ Σ′ exp\(x\) = 0\.\d{4}$/);
  assert.match(mask.formulas[1], /^x\(.+\) = −?\d+\.\d{3} ≥ x\(.+\) = −?\d+\.\d{3}: .+ is one of/);

  // A key top-k left out, picked in the table: why it is out, and its weight of exactly 0.
  const out = rows.find((row) => row.leftOut);
  await page.click(`#explain-body .explain-table tr[data-key="${out.key}"]`);
  await page.waitForFunction(
    (key) => document.querySelector(`#explain-body tr[data-key="${key}"]`)?.ariaSelected === 'true',
    out.key,
  );
  const [, , maskOut, softmaxOut] = await explainSteps(page);
  assert.match(
    maskOut.formulas[1],
    /is not among the 3 largest \(the lowest kept is .+\): .+ is left out/,
  );
  assert.match(softmaxOut.formulas[0], /^w\(.+\) = exp\(−∞\) \/ Σ′ exp\(x\) = 0$/);
  await page.locator('#explain').screenshot({ path: artifact('selection-topk-explain-en.png') });
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('LSH names the bucket of the query and of each key; the matrix hatches the rest', async () => {
  const page = await openDemo(`?${TEXT}&mask=lsh:4:1:0&q=7`);
  const table = await readTable(page);
  assertLeftOutIsEngineZero(table, engineWeights('lsh:4:1:0', table.cols.length), 'left out');
  const [, , mask] = await explainSteps(page);
  const own = /put this query in bucket (\d)/.exec(mask.text);
  assert.ok(own, mask.text);
  const headers = await page.$$eval('#explain-body .explain-table thead th', (ths) =>
    ths.map((th) => th.textContent),
  );
  assert.deepEqual(headers, ['key', 'q·k', 'logit', 'bucket', 'weight', 'key mean']);
  const rows = await explainRows(page);
  for (const row of rows) {
    assert.equal(row.leftOut, row.cells[3] !== own[1], `key ${row.key} in ${row.cells[3]}`);
    assert.equal(row.cells[4] === 'left out', row.leftOut);
  }
  assert.match(
    await page.textContent('.legend-masked'),
    /hatched: masked, or left out by top-k \/ hashing/,
  );
  await page.locator('#stage').screenshot({ path: artifact('selection-lsh-matrix-en.png') });
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('a global token under top-k still chooses among its keys, and the page says so', async () => {
  const notation = encodeURIComponent('local:1+tokens:0+topk:2');
  const page = await openDemo(`?${TEXT}&mask=${notation}&q=0&lang=zh`, { viewport: PHONE });
  const table = await readTable(page);
  // The global query may see all 12 keys (no hatching by the mask); top-k keeps 2 of them.
  assert.equal(table.cells[0].filter((cell) => cell.masked).length, 0);
  assert.equal(table.cells[0].filter((cell) => cell.leftOut).length, 10);
  assert.ok(table.cells[0].some((cell) => cell.text === '已舍弃'));
  const [, , mask] = await explainSteps(page);
  assert.match(mask.text, /全局 token 属于掩码/);
  assert.match(mask.text, /Top-k 在仍保留的 12 个键中只留 logit 最大的 2 个/);
  await page.locator('#explain').screenshot({ path: artifact('selection-global-phone-zh.png') });

  assert.deepEqual(page.problems, []);
  await page.close();

  // Without top-k the global token sees every key again: nothing is left out.
  const plain = await openDemo(`?${TEXT}&mask=${encodeURIComponent('local:1+tokens:0')}&q=0`);
  const all = await readTable(plain);
  assert.ok(all.cells.flat().every((cell) => !cell.leftOut));
  assert.ok(all.cells[0].every((cell) => cell.value > 0));
  assert.deepEqual(plain.problems, []);
  await plain.close();
});

test('a query LSH leaves no key has zero weights, and the panel says so', async () => {
  const page = await openDemo(`?${TEXT}&mask=lsh:16:1:0&view=numbers`);
  const table = await readTable(page);
  const row = table.cells.findIndex((cells) => cells.every((cell) => cell.leftOut));
  assert.ok(row >= 0, 'with 16 buckets some query shares a bucket with no key');
  await page.close();
  const alone = await openDemo(`?${TEXT}&mask=lsh:16:1:0&q=${row}`);
  const [, , mask, softmax, sum] = await explainSteps(alone);
  assert.match(mask.text, /0 of the 12 visible keys share its bucket/);
  assert.match(softmax.text, /^Hashing left this query no key/);
  assert.match(sum.text, /^No key is left/);
  assert.deepEqual(alone.problems, []);
  await alone.close();
});
