// The demo page tells the truth: the cards say the layer is untrained and the page shows column
// stripes (each key's mean weight) beside the row entropies; the explain arithmetic scales before
// it masks and says what an empty row means; cross-attention offers only the masks that apply
// between two texts and names the active one; d_k is a control wired through the compute thread,
// with the spread of raw scores at every d_k; the cost panel's sentence matches its numbers.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  analyzeInNode,
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

// The five steps' formulas and paragraphs of the explain panel, as text.
async function explainSteps(page) {
  return page.$$eval('#explain-body .step', (steps) =>
    steps.map((step) => ({
      text: [...step.querySelectorAll('p')].map((p) => p.textContent).join(' '),
      formula: step.querySelector('.formula')?.textContent ?? '',
    })),
  );
}

// The Numbers table's footer: each key's mean weight as shown.
async function keyMeans(page) {
  return page.$$eval('#weights-table tfoot td', (cells) => cells.map((td) => td.textContent));
}

test('the "it" card says the layer is untrained and shows the stripe behind "animal"', async () => {
  const page = await openDemo('', { viewport: PHONE });
  // Each card's own text (the paragraph after its title; the real-model note follows it).
  const cards = await page.$$eval('#primer .idea h3 + p', (ps) => ps.map((p) => p.textContent));
  assert.match(cards[0], /untrained/, 'Who is "it"?');
  assert.match(cards[6], /untrained/, 'Cross-attention and alignment');
  const previous = await computedCount(page);
  await page.click('#primer button[data-idea="ideaPronounTitle"]');
  await waitForRecompute(page, previous);
  await page.waitForFunction(
    () => document.querySelector('#explain-body .query-token')?.textContent === 'it',
  );
  const note = await page.textContent('#explain-body .stripe-note');
  assert.match(note, /animal/);
  assert.match(note, /column stripe/);
  assert.equal(
    await page.getAttribute('#head-picker [aria-checked="true"]', 'aria-label'),
    'head 4',
  );

  // The key means under the matrix (and in the Numbers table) are each column's mean over the
  // queries that may see it: a stripe is a key whose mean is high.
  const table = await readTable(page);
  const expected = table.cols.map((_, c) => {
    const seen = table.cells.map((row) => row[c]).filter((cell) => !cell.masked);
    return (seen.reduce((sum, cell) => sum + cell.value, 0) / seen.length).toFixed(3);
  });
  assert.deepEqual(await keyMeans(page), expected);
  const animal = table.cols.indexOf('animal');
  assert.ok(Number(expected[animal]) > 0.4, `animal's key mean ${expected[animal]}`);
  const explainMeans = await page.$$eval('#explain-body .explain-table tbody tr', (rows) =>
    rows.map((row) => row.lastElementChild.textContent),
  );
  assert.deepEqual(explainMeans, expected);
  await page.locator('#explain').screenshot({ path: artifact('truth-stripe-phone-en.png') });
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('explain scales every score, then masks; an empty row is zero by definition', async () => {
  const page = await openDemo('?mask=causal&q=0&k=5');
  const [, scale, mask, softmax] = await explainSteps(page);
  assert.match(scale.formula, /^x\(street\) = −?\d+\.\d{3} × 0\.250 ÷ 1\.00 = −?\d+\.\d{3}$/);
  assert.match(mask.formula, /^street is masked: x\(street\) = −?\d+\.\d{3} becomes −∞$/);
  assert.equal(softmax.formula, 'w(street) = exp(−∞) / Σ exp(x) = 0');

  // Every source key padded (a source of 5 words): no query sees anything.
  const source = encodeURIComponent('我爱自然语言处理');
  const empty = await openDemo(`?mode=cross&source=${source}&mask=pad:0,1,2,3,4&lang=zh`, {
    viewport: PHONE,
  });
  const steps = await explainSteps(empty);
  assert.match(steps[2].text, /全部 5 个键都被掩码/);
  assert.match(steps[3].text, /没有可归一化的东西/);
  assert.equal(steps[3].formula, '');
  assert.match(steps[4].text, /零向量/);
  assert.ok((await readTable(empty)).cells.flat().every((cell) => cell.masked));
  await empty.locator('#explain').screenshot({ path: artifact('truth-empty-row-phone-zh.png') });
  assert.deepEqual([...page.problems, ...empty.problems], []);
  await page.close();
  await empty.close();
});

test('cross-attention offers an alignment window and padding, and names the mask', async () => {
  // A link asking for position masks between two texts gets the mask that applies: none.
  const page = await openDemo('?mode=cross&mask=causal%2Blocal:2%2Btokens:0&compare=strided:3');
  assert.equal(await page.textContent('#mask-code'), 'global');
  assert.match(await page.textContent('#view-caption'), /mask global$/);
  assert.ok((await readTable(page)).cells.flat().every((cell) => !cell.masked));
  const shown = await page.$$eval('input[name="pattern"]', (inputs) =>
    inputs.filter((input) => input.checkVisibility()).map((input) => input.value),
  );
  assert.deepEqual(shown, ['global', 'align']);
  assert.equal(await page.isVisible('#causal-input'), false);
  assert.equal(await page.isVisible('#padded-keys'), true);
  assert.equal(await page.isVisible('#global-tokens'), false);
  const options = await page.$$eval('#compare-select option', (all) =>
    all.filter((o) => !o.hidden).map((o) => o.value),
  );
  assert.deepEqual(options, ['', 'global', 'align:0', 'align:1', 'pad:0']);

  // The alignment window: target i sees the source keys within 1 of round(i (Ns-1)/(Nt-1)).
  let previous = await computedCount(page);
  await page.check('input[name="pattern"][value="align"]');
  await waitForRecompute(page, previous);
  previous = await computedCount(page);
  await page.focus('#window-input');
  await page.keyboard.press('ArrowLeft');
  await waitForRecompute(page, previous);
  assert.match(await page.textContent('#view-caption'), /mask align:1$/);
  const table = await readTable(page);
  const [rows, cols] = [table.rows.length, table.cols.length];
  table.cells.forEach((row, r) =>
    row.forEach((cell, c) => {
      const aligned = Math.round((r * (cols - 1)) / (rows - 1));
      assert.equal(cell.masked, Math.abs(c - aligned) > 1, `cell ${r},${c}`);
    }),
  );
  // Padding a source key hides it from every target query.
  previous = await computedCount(page);
  await page.click('#padded-keys button[data-index="2"]');
  await waitForRecompute(page, previous);
  assert.equal(await page.textContent('#mask-code'), 'align:1+pad:2');
  assert.ok((await readTable(page)).cells.every((row) => row[2].masked));

  // Back to self-attention and into cross again: causal is dropped on the way in.
  await page.check('input[name="mode"][value="self"]');
  await page.check('#causal-input');
  previous = await computedCount(page);
  await page.check('input[name="mode"][value="cross"]');
  await waitForRecompute(page, previous);
  assert.equal(await page.textContent('#mask-code'), 'pad:2');
  await page.click('.lang-switch button[data-lang="zh"]');
  await page.setViewportSize(PHONE);
  await page.locator('.controls summary').click();
  await page.screenshot({ path: artifact('truth-cross-phone-zh.png'), fullPage: true });
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('d_k is a setting: weights equal analyze() at that d_k, and the spread grows', async () => {
  const page = await openDemo('?dk=64&heads=2&score=dot');
  const table = await readTable(page);
  const expected = analyzeInNode(ENGLISH, { heads: 2, headDim: 64, seed: 1, score: 'dot' });
  const n = table.rows.length;
  for (let r = 0; r < n; r++) {
    for (let c = 0; c < n; c++)
      assert.equal(table.cells[r][c].value, expected.heads[0].weights[r * n + c]);
  }
  assert.match(await page.textContent('#explain-body .explain-head'), /d_k = 64/);
  assert.equal(
    await page.textContent('#model-dim-readout'),
    'd_model = heads × d_k = 2 × 64 = 128',
  );
  assert.match(await page.textContent('#cost-body'), /d = 64/);

  // The spread of raw q·k at every d_k: growing about as sqrt(d_k), flat once divided.
  await page.waitForSelector('#explain-body .spread-table');
  const spread = await page.$$eval('#explain-body .spread-table tbody tr', (rows) =>
    rows.map((row) => [...row.children].map((cell) => Number(cell.textContent))),
  );
  const [dks, raw, scaled] = [0, 1, 2].map((i) => spread.map((row) => row[i]));
  assert.deepEqual(dks, [2, 4, 8, 16, 32, 64, 128]);
  for (let i = 1; i < raw.length; i++) assert.ok(raw[i] > raw[i - 1], `raw spread ${raw}`);
  assert.ok(raw.at(-1) / raw[0] > 5, `raw spread ${raw}`);
  assert.ok(Math.max(...scaled) / Math.min(...scaled) < 1.5, `scaled spread ${scaled}`);
  assert.equal(
    await page.textContent('#explain-body .spread-table tr.is-current th'),
    '64',
    'the current d_k is marked',
  );

  // The slider steps through the sizes and recomputes.
  const previous = await computedCount(page);
  await page.focus('#dk-input');
  await page.keyboard.press('ArrowLeft');
  await waitForRecompute(page, previous);
  await page.waitForFunction(() => new URLSearchParams(location.search).get('dk') === '32');
  assert.match(await page.textContent('#explain-body .explain-head'), /d_k = 32/);
  assert.deepEqual(page.problems, []);
  await page.close();
});

test('the cost panel says what its memory figure is and why a pattern skips no tile', async () => {
  const page = await openDemo('?mask=strided:3&heads=1&lang=zh');
  assert.match(await page.textContent('#cost-body'), /一次处理一个头/);
  await page.click('#cost-body .bench-controls button');
  await page.waitForSelector('#cost-body .bench-tiles-note', { timeout: 60000 });
  const rows = await page.$$eval('#cost-body .bench-result tbody tr', (trs) =>
    trs.map((tr) => [...tr.children].map((td) => td.textContent)),
  );
  const [visited, total] = rows[1][3].split(' / ').map(Number);
  assert.equal(visited, total, 'strided keys land in every tile');
  assert.match(await page.textContent('#cost-body .bench-tiles-note'), /一个也跳不过/);
  assert.match(rows[0][1], /^\d+\.\d 毫秒$/);
  assert.deepEqual(page.problems, []);
  await page.close();

  const english = await openDemo();
  assert.match(await english.textContent('#cost-body'), /N² scores of a head .*one head at a/);
  assert.deepEqual(english.problems, []);
  await english.close();
});
