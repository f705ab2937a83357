// Headless Chromium for the browser tests (web/test/browser/harness.mjs) and the browser
// benchmarks (bench/*.mjs): Debian's /usr/bin/chromium through playwright-core, a folder served
// by static-server.mjs on a free port, a fresh profile per run, and a record of every console
// error, page error and failed request of each page. Dev tooling: not part of the package.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { startServer } from './static-server.mjs';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const WEB_ROOT = resolve(REPO_ROOT, 'web');

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
// No sandbox (containers), and nothing that reaches the network on its own.
export const CHROMIUM_FLAGS = [
  '--no-sandbox',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

// Serves `root` (default web/). `webgpu: true` starts Chromium with --enable-unsafe-webgpu:
// without a GPU its adapter is SwiftShader (docs/ARCHITECTURE.md, "WebGPU backend"). `args` adds
// Chromium flags. `isolated: false` serves without COOP/COEP (pages are then not cross-origin
// isolated).
export async function openBrowser({
  root = WEB_ROOT,
  webgpu = false,
  args = [],
  isolated = true,
} = {}) {
  const server = await startServer({ root, port: 0, isolated });
  const base = `http://127.0.0.1:${server.address().port}`;
  const profile = mkdtempSync(join(tmpdir(), 'attnlens-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [...CHROMIUM_FLAGS, ...(webgpu ? ['--enable-unsafe-webgpu'] : []), ...args],
    acceptDownloads: true,
    viewport: { width: 1360, height: 900 },
  });
  context.attnlensBase = base;
  return {
    base,
    context,
    async close() {
      await context.close();
      await new Promise((r) => server.close(r));
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

// A new page whose problems are collected in page.problems (console errors, uncaught
// exceptions, failed or 4xx/5xx requests).
// Requests to any other origin are problems too: the pages must work offline, without CDNs or
// telemetry.
export async function newPage(context, options = {}) {
  const page = await context.newPage();
  const origin = new URL(context.attnlensBase).origin;
  if (options.viewport) await page.setViewportSize(options.viewport);
  page.problems = [];
  page.on('console', (message) => {
    if (message.type() === 'error') page.problems.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => page.problems.push(`pageerror: ${error.message}`));
  page.on('request', (request) => {
    const url = request.url();
    if (!/^(data|blob):/.test(url) && new URL(url).origin !== origin)
      page.problems.push(`foreign request: ${url}`);
  });
  page.on('requestfailed', (request) =>
    page.problems.push(`requestfailed: ${request.url()} ${request.failure()?.errorText}`),
  );
  page.on('response', (response) => {
    if (response.status() >= 400)
      page.problems.push(`http ${response.status()}: ${response.url()}`);
  });
  return page;
}
