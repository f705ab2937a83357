// The demo and the sample blog post under their Content-Security-Policy, in headless Chromium:
// the server sends it, the pages carry it, it is in force (an inline script is refused), and the
// pages still do everything they do (the demo's module worker, wasm in the worker and on the
// page, WebGPU detection, exports) without a single violation.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { CONTENT_SECURITY_POLICY } from '../../scripts/static-server.mjs';
import { readTable } from './demo-page.mjs';
import { newPage, openBrowser } from './harness.mjs';

let browser;
before(async () => {
  browser = await openBrowser();
});
after(async () => {
  await browser?.close();
});

// A page that records every policy violation from its first script on.
async function openPage(path) {
  const page = await newPage(browser.context);
  await page.addInitScript(() => {
    window.__violations = [];
    document.addEventListener('securitypolicyviolation', (event) =>
      window.__violations.push(`${event.violatedDirective}: ${event.blockedURI || 'inline'}`),
    );
  });
  const response = await page.goto(`${browser.base}${path}`);
  return { page, response };
}

// True when an inline script added now runs: it must not.
const inlineScriptRuns = (page) =>
  page.evaluate(async () => {
    const script = document.createElement('script');
    script.textContent = 'window.__inlineProbe = true';
    document.head.append(script);
    await new Promise((resolve) => setTimeout(resolve, 50));
    return window.__inlineProbe === true;
  });

test('the demo runs under the policy: worker, wasm and all', async () => {
  const { page, response } = await openPage('/demo/');
  assert.equal(response.headers()['content-security-policy'], CONTENT_SECURITY_POLICY);
  assert.equal(
    await page.getAttribute('meta[http-equiv="Content-Security-Policy"]', 'content'),
    CONTENT_SECURITY_POLICY,
  );
  await page.waitForFunction(() => Number(document.body.dataset.computed) >= 1, null, {
    timeout: 20000,
  });
  assert.ok((await readTable(page)).rows.length > 3);
  await page.waitForFunction(() => document.body.dataset.engine !== undefined);
  assert.equal(
    await page.evaluate(() => document.body.dataset.engine),
    'worker',
    'the module worker started and computes',
  );
  const worker = await page.evaluate(async () => {
    const response = await fetch('./compute-worker.js');
    return response.headers.get('content-security-policy');
  });
  assert.equal(worker, CONTENT_SECURITY_POLICY, "the worker's script carries the policy too");
  // Exports and the cost panel's live timing run under it as well.
  await Promise.all([page.waitForEvent('download'), page.click('#export-svg')]);
  await Promise.all([page.waitForEvent('download'), page.click('#export-png')]);
  assert.deepEqual(await page.evaluate(() => window.__violations), []);
  assert.deepEqual(page.problems, []);
  assert.equal(await inlineScriptRuns(page), false, 'the policy is in force');
  // One report per policy in force (the header's and the <meta>'s), each for the probe.
  const violations = await page.evaluate(() => window.__violations);
  assert.ok(violations.length >= 1, 'the probe was refused');
  for (const violation of violations) assert.match(violation, /^script-src/);
  await page.close();
});

test('the blog sample runs under the policy', async () => {
  const { page, response } = await openPage('/widget/blog.html');
  assert.equal(response.headers()['content-security-policy'], CONTENT_SECURITY_POLICY);
  assert.equal(
    await page.getAttribute('meta[http-equiv="Content-Security-Policy"]', 'content'),
    CONTENT_SECURITY_POLICY,
  );
  await page.waitForFunction(
    () => document.getElementById('widget-local').dataset.state === 'ready',
    null,
    { timeout: 20000 },
  );
  assert.deepEqual(await page.evaluate(() => window.__violations), []);
  assert.deepEqual(page.problems, []);
  assert.equal(await inlineScriptRuns(page), false, 'the policy is in force');
  await page.close();
});
