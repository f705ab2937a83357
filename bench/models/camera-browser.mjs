// camera.mjs --browser: the camera benchmark in headless Chromium, its frames from Chromium's
// fake camera (a 640 x 480 test pattern at 30 frames/s), the page camera-page.js.
import { cpSync, existsSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { REPO_ROOT, newPage, openBrowser } from '../../web/scripts/chromium.mjs';
import { rendererCpuMs } from './renderer-cpu.mjs';

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
    const page = await newPage(browser.context);
    page.on('console', (message) => {
      if (message.type() === 'log') console.log(message.text());
    });
    page.setDefaultTimeout(0);
    await page.exposeFunction('rendererCpuMs', rendererCpuMs);
    await page.goto(`${browser.base}/bench/models/camera.html`);
    await page.waitForFunction(() => document.body.dataset.ready === 'true');
    const version = await page.evaluate(() => navigator.userAgent.match(/Chrome\/([\d.]+)/)?.[1]);
    console.log(`headless Chromium ${version}, one thread (CPU: the renderer process's)`);
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
