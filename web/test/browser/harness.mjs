// Shared setup of the browser tests: headless Chromium and the static server from
// web/scripts/chromium.mjs (which the browser benchmarks use too), serving web/ or
// ATTNLENS_SITE_ROOT (e.g. web/dist after the production build), and screenshots under
// test-artifacts/.
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { openBrowser as openChromium, REPO_ROOT, WEB_ROOT } from '../../scripts/chromium.mjs';

export { newPage, REPO_ROOT, WEB_ROOT } from '../../scripts/chromium.mjs';
export const ARTIFACTS = resolve(REPO_ROOT, 'test-artifacts');

// Serves `root`, else ATTNLENS_SITE_ROOT, else web/; other options as web/scripts/chromium.mjs.
export async function openBrowser({ root, ...options } = {}) {
  const served =
    root ?? (process.env.ATTNLENS_SITE_ROOT ? resolve(process.env.ATTNLENS_SITE_ROOT) : WEB_ROOT);
  const browser = await openChromium({ root: served, ...options });
  mkdirSync(ARTIFACTS, { recursive: true });
  return browser;
}

export function artifact(name) {
  return join(ARTIFACTS, name);
}
