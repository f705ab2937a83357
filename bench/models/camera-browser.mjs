// camera.mjs --browser: the camera benchmark in headless Chromium, its frames from Chromium's
// fake camera (a 640 x 480 test pattern at 30 frames/s), the page camera-page.js.
import { cpSync, existsSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { REPO_ROOT, openBrowser } from '../../web/scripts/chromium.mjs';
import { openBenchPage } from './bench-page.mjs';

// Where a --before tree is copied for the page to import (the repository's ignored build/).
const BEFORE = join(REPO_ROOT, 'build/camera-before-src');

export async function runInChromium({ before, frames, backend, model, seconds }) {
  rmSync(BEFORE, { recursive: true, force: true });
  if (before) {
    if (!existsSync(join(resolve(before), 'wasm'))) throw new Error(`${before}: no wasm/ in it`);
    cpSync(resolve(before), BEFORE, { recursive: true });
  }
  const browser = await openBrowser({
    root: REPO_ROOT,
    args: ['--use-fake-device-for-media-stream', '--use-fake-ui-for-media-stream'],
  });
  try {
    const page = await openBenchPage(browser, 'camera');
    await page.evaluate((options) => window.runBenchmark(options), {
      before: before ? '/build/camera-before-src/' : null,
      frames: Number(frames),
      backend,
      model,
      seconds: Number(seconds),
    });
  } finally {
    await browser.close();
    rmSync(BEFORE, { recursive: true, force: true });
  }
}
