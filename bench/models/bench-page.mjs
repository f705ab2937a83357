// What the vision and camera benchmarks (vision.mjs, camera.mjs) share: the processor and the
// load average they print before and after, and with --browser their page opened in headless
// Chromium.
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { rendererCpuMs } from './renderer-cpu.mjs';

/** The 1, 5 and 15 minute load averages, as printed. */
export const loadAverage = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');

/**
 * The processor, as printed: its name, and on Linux its family and model numbers (a name such as
 * "AMD EPYC" covers several generations, and the engines' speed ratio differs between them:
 * bench/models/README.md), and the number of CPUs.
 */
export function processor() {
  const all = cpus();
  let generation = '';
  try {
    const info = readFileSync('/proc/cpuinfo', 'utf8');
    const field = (name) => info.match(new RegExp(`^${name}\\s*: (.*)$`, 'm'))?.[1];
    if (field('cpu family')) generation = `, family ${field('cpu family')} model ${field('model')}`;
  } catch {
    // Not Linux: the name alone.
  }
  return `${all[0]?.model?.trim() ?? 'unknown processor'}${generation}, ${all.length} CPUs`;
}

/**
 * Opens bench/models/`name`.html in `browser` (web/scripts/chromium.mjs's openBrowser) with the
 * page's log lines printed here, no timeouts, and window.rendererCpuMs (the renderer's CPU time)
 * for it to call; waits until the page is ready and prints the Chromium version. Playwright is
 * loaded here, only when a benchmark runs in Chromium.
 */
export async function openBenchPage(browser, name) {
  const { newPage } = await import('../../web/scripts/chromium.mjs');
  const page = await newPage(browser.context);
  page.on('console', (message) => {
    if (message.type() === 'log') console.log(message.text());
  });
  page.setDefaultTimeout(0);
  await page.exposeFunction('rendererCpuMs', rendererCpuMs);
  await page.goto(`${browser.base}/bench/models/${name}.html`);
  await page.waitForFunction(() => document.body.dataset.ready === 'true');
  const version = await page.evaluate(() => navigator.userAgent.match(/Chrome\/([\d.]+)/)?.[1]);
  console.log(`headless Chromium ${version}, one thread (CPU: the renderer process's)`);
  return page;
}
