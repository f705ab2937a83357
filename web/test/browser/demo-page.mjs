// Helpers shared by the demo page's browser tests: open the demo and wait for its first result,
// follow its recomputations, and read back the screen-reader table of weights.
import { newPage } from './harness.mjs';

export async function openDemo(browser, search = '', options = {}) {
  const page = await newPage(browser.context, options);
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

// The screen-reader table as { rows, cols, cells[r][c] = { masked, value, text } }.
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
        value: td.hasAttribute('data-masked') ? null : Number(td.dataset.value),
        text: td.textContent,
      })),
    );
    return { rows, cols, cells };
  });
}
