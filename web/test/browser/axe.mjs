// axe-core in a page: the serious and critical findings on it as it is now, one line each (the
// rule, the elements it names and axe's own summary of what is wrong). The browser tests fail on
// any of them.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const AXE_SOURCE = readFileSync(
  createRequire(import.meta.url).resolve('axe-core/axe.min.js'),
  'utf8',
);
const BLOCKING = new Set(['serious', 'critical']);

export async function blockingFindings(page) {
  // Evaluated through the DevTools protocol: the pages' strict CSP refuses inline script tags
  // (addScriptTag), and rightly so.
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => (await window.axe.run()).violations);
  return violations
    .filter((v) => BLOCKING.has(v.impact))
    .flatMap((v) =>
      v.nodes.map(
        (n) => `${v.impact} ${v.id}: ${n.target.join(' ')} — ${n.failureSummary.split('\n')[1]}`,
      ),
    );
}
