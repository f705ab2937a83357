#!/usr/bin/env node
// analyze() latency, 64 tokens and 4 heads, in Node and in headless Chromium (numbers printed,
// never asserted; bench/analyze-latency-core.js says what each row times).
//
//   node bench/analyze-latency.mjs [--where node,chromium] [--calls 300] [--json FILE] [--label L]
//     [--commit C]
//
// --json saves the results with the label (default 'current') and the commit measured (git's
// HEAD, or --commit for a tree exported without .git), which is how docs/benchmarks.md shows a
// before/after (scripts/bench.sh saves bench/peers/results/).
// Chromium comes from web/node_modules/playwright-core and Debian's /usr/bin/chromium, through
// web/scripts/chromium.mjs (as in the browser tests: the repository served over http://127.0.0.1
// with COOP/COEP).
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    where: { type: 'string', default: 'node,chromium' },
    calls: { type: 'string', default: '300' },
    json: { type: 'string' },
    label: { type: 'string', default: 'current' },
    commit: { type: 'string' },
  },
});
const options = { calls: Number(values.calls) };

async function inChromium() {
  const { REPO_ROOT, newPage, openBrowser } = await import('../web/scripts/chromium.mjs');
  const browser = await openBrowser({ root: REPO_ROOT });
  try {
    const page = await newPage(browser.context);
    await page.goto(`${browser.base}/bench/analyze-latency.html`);
    await page.waitForFunction(() => document.body.dataset.ready === 'true');
    const result = await page.evaluate((o) => window.measureAnalyzeLatency(o), options);
    const version =
      browser.context.browser()?.version() ??
      (await page.evaluate(() => navigator.userAgent.match(/Chrome\/([\d.]+)/)?.[1]));
    if (page.problems.length) throw new Error(`page problems: ${page.problems.join('; ')}`);
    return { ...result, where: `Chromium ${version}` };
  } finally {
    await browser.close();
  }
}

async function inNode() {
  const { measureAnalyzeLatency } = await import('./analyze-latency-core.js');
  return { ...(await measureAnalyzeLatency(options)), where: `Node ${process.versions.node}` };
}

const ms = (x) => x.toFixed(3).padStart(8);
const results = [];
for (const where of values.where.split(',')) {
  const r = where === 'chromium' ? await inChromium() : await inNode();
  results.push(r);
  const { heads, queryLength } = r.shape;
  console.log(
    `\nanalyze() of ${queryLength} tokens, ${heads} heads, ${r.where} (${r.backend}), ` +
      `${r.analyze.calls} calls; milliseconds: median (p10 - p90)`,
  );
  for (const [label, s] of [
    ['analyze() total', r.analyze],
    ['  engine (multiHead)', r.engine],
    ['tokenize()', r.tokenize],
    ['embed()', r.embed],
  ]) {
    console.log(`${label.padEnd(22)}${ms(s.median)}  (${ms(s.p10)} - ${ms(s.p90)})`);
  }
  console.log(`${'first analyze()'.padEnd(22)}${ms(r.firstAnalyze)}`);
}

function commit() {
  const cwd = new URL('..', import.meta.url);
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
      cwd,
      encoding: 'utf8',
    }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], {
      cwd,
      encoding: 'utf8',
    }).trim();
    return dirty ? `${head} (with uncommitted changes)` : head;
  } catch {
    return 'unknown';
  }
}

if (values.json) {
  const saved = {
    label: values.label,
    commit: values.commit ?? commit(),
    date: new Date().toISOString(),
    results,
  };
  writeFileSync(values.json, `${JSON.stringify(saved, null, 1)}\n`);
}
