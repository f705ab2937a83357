// Helpers shared by the demo page's browser tests: open the demo and wait for its first result,
// follow its recomputations, read back the screen-reader table of weights, and compute the same
// analysis in Node.
import { execFileSync } from 'node:child_process';
import { newPage } from './harness.mjs';

// The phone viewport and the example sentences the page tests share.
export const PHONE = { width: 390, height: 844 };
export const ENGLISH = "The animal didn't cross the street because it was too tired.";
export const CHINESE = '小猫没有跳上桌子，因为它太累了。';

// options: newPage()'s, and `languages`: the browser's preferred languages (navigator.languages).
export async function openDemo(browser, search = '', options = {}) {
  const page = await newPage(browser.context, options);
  if (options.languages) {
    await page.addInitScript((languages) => {
      Object.defineProperty(navigator, 'languages', { get: () => languages });
    }, options.languages);
  }
  await page.goto(`${browser.base}/demo/${search}`);
  await page.waitForFunction(() => Number(document.body.dataset.computed) >= 1, null, {
    timeout: 20000,
  });
  return page;
}

export async function computedCount(page) {
  return page.evaluate(() => Number(document.body.dataset.computed));
}

export async function waitForRecompute(page, previous) {
  await page.waitForFunction((n) => Number(document.body.dataset.computed) > n, previous, {
    timeout: 20000,
  });
}

// The screen-reader table as { rows, cols, cells[r][c] = { masked, leftOut, value, text } }.
export async function readTable(page) {
  return page.evaluate(() => {
    const table = document.getElementById('weights-table');
    const cols = [...table.querySelectorAll('thead th')].slice(1).map((th) => th.textContent);
    const rows = [...table.querySelectorAll('tbody tr')].map(
      (tr) => tr.querySelector('th').textContent,
    );
    const cells = [...table.querySelectorAll('tbody tr')].map((tr) =>
      [...tr.querySelectorAll('td')].map((td) => ({
        masked: td.hasAttribute('data-masked'),
        leftOut: td.hasAttribute('data-left-out'), // top-k or LSH dropped a visible key
        value: 'value' in td.dataset ? Number(td.dataset.value) : null,
        text: td.textContent,
      })),
    );
    return { rows, cols, cells };
  });
}

// analyze() in a Node process on the wasm flavour the demo's 'auto' loads in Chromium
// ('wasm-relaxed'): Node 20 validates relaxed SIMD only behind its flag. Same flavour, same V8
// lowering of the fused multiply-add: the same bits.
export function analyzeInNode(text, options, backend = 'wasm-relaxed') {
  const index = new URL('../../src/index.js', import.meta.url).href;
  const script = `import { analyze, createAttention } from ${JSON.stringify(index)};
    const attention = await createAttention({ backend: ${JSON.stringify(backend)} });
    const r = await analyze(${JSON.stringify(text)}, { ...${JSON.stringify(options)}, attention });
    console.log(JSON.stringify({ backend: r.backend, tokens: r.tokens.map((t) => t.text),
      heads: r.heads.map((h) => ({ weights: [...h.weights], mask: [...h.mask] })) }));`;
  return JSON.parse(
    execFileSync(
      process.execPath,
      ['--experimental-wasm-relaxed-simd', '--input-type=module', '-e', script],
      { encoding: 'utf8' },
    ),
  );
}
