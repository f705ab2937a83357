// What the real-model browser tests share: tiny models in the Hub's layout served under the ids
// the page offers (no real checkpoint can be downloaded here; these are the fixtures of
// tests/models/, random weights in the real layouts), the page pointed at that server through
// the global a page script may set (never through the page's address), the same run in Node for
// comparison, and a site root that serves the built site plus a test page for the widget.
import { execFileSync } from 'node:child_process';
import {
  cpSync,
  readFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startHubServer } from '../support/hub-server.mjs';
import { writeTinyModel } from '../support/model-fixtures.mjs';
import { tinyModel } from '../support/tiny-models.mjs';
import { WEB_ROOT } from './harness.mjs';

export const NEO = 'roneneldan/TinyStories-1M';
export const BERT = 'bert-base-uncased';
export const BROKEN = 'attnlens/broken-gpt2';
export const SLOW = 'attnlens/slow-download';

/** A Hub root with the fixtures under the page's ids; returns { root, folder(id) }. */
export function hubFixtures() {
  const root = mkdtempSync(join(tmpdir(), 'attnlens-page-hub-'));
  const folder = (id) => join(root, ...id.split('/'), 'main');
  cpSync(tinyModel('gpt-neo'), folder(NEO), { recursive: true });
  cpSync(tinyModel('bert'), folder(BERT), { recursive: true });
  // The two models the "Things to try" cards open.
  cpSync(tinyModel('gpt2'), folder('distilgpt2'), { recursive: true });
  cpSync(tinyModel('bert'), folder('bert-base-multilingual-cased'), { recursive: true });
  cpSync(tinyModel('gpt2-nan'), folder(BROKEN), { recursive: true });
  // Large enough (~1.5 MB, 16 KiB chunks with a pause) to cancel while it downloads; its
  // config describes it (the weights would not build a model: it is never loaded to the end).
  writeTinyModel(folder(SLOW), { hidden: 1024 });
  const config = JSON.parse(readFileSync(join(folder(SLOW), 'config.json'), 'utf8'));
  writeFileSync(join(folder(SLOW), 'config.json'), JSON.stringify({ ...config, n_positions: 16 }));
  return { root, folder };
}

/** Total bytes of a fixture's files (what the page must announce before the download). */
export function folderBytes(folder) {
  return readdirSync(folder).reduce((sum, name) => sum + statSync(join(folder, name)).size, 0);
}

export async function startHub(root) {
  return startHubServer({ root, chunkDelayMs: 20 });
}

/** Points every page of `context` at the local Hub (before the page's own scripts run). */
export async function useHub(context, url) {
  await context.addInitScript((hub) => {
    globalThis.ATTNLENS_HUB_URL = hub;
  }, url);
}

/**
 * model.run() in Node on the flavour the page runs in Chromium (wasm-relaxed; Node 20 needs a
 * flag for it), as plain arrays (with options.projections: that layer's scale, q and k).
 */
export function runInNode(folder, text, options = {}) {
  const models = new URL('../../src/models/index.js', import.meta.url).href;
  const index = new URL('../../src/index.js', import.meta.url).href;
  const script = `import { createAttention } from ${JSON.stringify(index)};
    import { loadModel } from ${JSON.stringify(models)};
    const attention = await createAttention({ backend: 'wasm-relaxed', models: true });
    const model = await loadModel(${JSON.stringify(folder)}, { attention });
    const run = await model.run(${JSON.stringify(text)}, ${JSON.stringify(options)});
    const p = run.projections;
    const scores = (await model.headScores()).heads;
    console.log(JSON.stringify({ info: model.info, tokens: run.tokens, scores,
      attention: [...run.attention], predictions: run.predictions,
      projections: p && { scale: p.scale, headDim: p.headDim, q: [...p.q], k: [...p.k] } }));`;
  return JSON.parse(
    execFileSync(
      process.execPath,
      ['--experimental-wasm-relaxed-simd', '--input-type=module', '-e', script],
      {
        encoding: 'utf8',
        maxBuffer: 64 * 1024 * 1024,
      },
    ),
  );
}

/** One head's [N, N] weights of a Node run, as rows. */
export function headRows(run, layer, head) {
  const n = run.tokens.length;
  const at = (layer * run.info.heads + head) * n * n;
  return Array.from({ length: n }, (_, i) => run.attention.slice(at + i * n, at + (i + 1) * n));
}

/**
 * A site root: the built site (ATTNLENS_SITE_ROOT) linked in, and `lens/` with the test's own
 * pages for the widget (strict CSP in a <meta>, as the built pages carry it).
 */
export function siteWithLensPages(pages) {
  const site = resolve(process.env.ATTNLENS_SITE_ROOT ?? join(WEB_ROOT, 'dist'));
  const root = mkdtempSync(join(tmpdir(), 'attnlens-lens-site-'));
  for (const name of readdirSync(site)) symlinkSync(join(site, name), join(root, name));
  mkdirSync(join(root, 'lens'));
  for (const [name, text] of Object.entries(pages)) writeFileSync(join(root, 'lens', name), text);
  return root;
}

const POLICY = "script-src 'self' 'wasm-unsafe-eval'; object-src 'none'; base-uri 'self'";

/** A page with `body` and the widget under the strict CSP; violations counted into #violations. */
export function lensPage(body) {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${POLICY}">
<title>attn-lens real models</title><link rel="icon" href="data:,">
<script type="module" src="../widget/attnlens-widget.js"></script>
<script type="module" src="./violations.js"></script>
</head><body><main>${body}<p>violations: <span id="violations">0</span></p></main></body></html>`;
}

export const VIOLATIONS_JS = `let count = 0;
document.addEventListener('securitypolicyviolation', () => {
  count += 1;
  document.getElementById('violations').textContent = String(count);
});
`;

/** The screen-reader table of a widget (by id) as { rows, cols, values[r][c] | 'm' }. */
export async function widgetTable(page, id) {
  return page.evaluate((id) => {
    const table = document.getElementById(id).shadowRoot.querySelector('table');
    return {
      cols: [...table.querySelectorAll('thead th')].slice(1).map((th) => th.textContent),
      rows: [...table.querySelectorAll('tbody tr')].map((tr) => tr.querySelector('th').textContent),
      values: [...table.querySelectorAll('tbody tr')].map((tr) =>
        [...tr.querySelectorAll('td')].map((td) =>
          td.hasAttribute('data-masked') ? 'm' : Number(td.dataset.value),
        ),
      ),
    };
  }, id);
}

/** The page's table in the same form. */
export async function pageTable(page) {
  return page.evaluate(() => {
    const table = document.getElementById('weights-table');
    return {
      cols: [...table.querySelectorAll('thead th')].slice(1).map((th) => th.textContent),
      rows: [...table.querySelectorAll('tbody tr')].map((tr) => tr.querySelector('th').textContent),
      values: [...table.querySelectorAll('tbody tr')].map((tr) =>
        [...tr.querySelectorAll('td')].map((td) =>
          td.hasAttribute('data-masked') ? 'm' : Number(td.dataset.value),
        ),
      ),
    };
  });
}

/** Waits until the page has run its model `count` times in all. */
export async function waitForRuns(page, count) {
  await page.waitForFunction((n) => Number(document.body.dataset.modelRuns ?? 0) >= n, count, {
    timeout: 30000,
  });
}

export const MARIAN = 'Helsinki-NLP/opus-mt-zh-en';

/**
 * The tiny Marian of tests/models/make_tiny_marian.py (opus-mt-zh-en's files and fields, random
 * weights) under `root` as the Hub holds MARIAN; returns its folder.
 */
export function addMarian(root) {
  const made = mkdtempSync(join(tmpdir(), 'attnlens-page-marian-'));
  execFileSync('/usr/bin/python3', [
    join(WEB_ROOT, '..', 'tests/models/make_tiny_marian.py'),
    made,
  ]);
  const folder = join(root, ...MARIAN.split('/'), 'main');
  cpSync(join(made, 'marian.safetensors'), folder, { recursive: true });
  return folder;
}

/** Waits until the page has finished `count` translations in all. */
export async function waitForTranslations(page, count) {
  await page.waitForFunction((n) => Number(document.body.dataset.translations ?? 0) >= n, count, {
    timeout: 60000,
  });
}
