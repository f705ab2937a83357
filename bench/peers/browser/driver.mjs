// Runs benchmark cases in headless Chromium: the repository served by web/scripts/static-server.mjs (with
// COOP/COEP, so pages are cross-origin isolated and libraries may use threads), one fresh page
// per case so every case starts in a new renderer process, and that renderer's memory read from
// /proc (its peak resident set, VmHWM, is the page's peak memory: workers are threads of it).

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { startServer } from '../../../web/scripts/static-server.mjs';
// The browser tests' executable and flags (scripts/bench.sh installs web/'s dependencies too).
import { CHROMIUM_FLAGS, CHROMIUM_PATH } from '../../../web/scripts/chromium.mjs';

const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** { rss, peakRss } in bytes of one process, from /proc/PID/status; null once it has exited. */
function processMemory(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kib = (field) =>
      Number(status.match(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm'))?.[1]) * 1024;
    return { rss: kib('VmRSS'), peakRss: kib('VmHWM') };
  } catch {
    return null;
  }
}

export async function openChromium({ args = [] } = {}) {
  const server = await startServer({ root: REPO_ROOT, port: 0 });
  const base = `http://127.0.0.1:${server.address().port}`;
  const browser = await chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [...CHROMIUM_FLAGS, ...args],
  });
  const cdp = await browser.newBrowserCDPSession();
  const renderers = async () =>
    (await cdp.send('SystemInfo.getProcessInfo')).processInfo.filter((p) => p.type === 'renderer');

  async function openPage(log) {
    const context = await browser.newContext();
    const page = await context.newPage();
    page.on('console', (message) => {
      if (message.type() === 'error') log?.(`[page] ${message.text()}`);
    });
    // Snapshots of every renderer's memory and CPU time; which renderer is this page's is only
    // known afterwards (the one that spent the CPU time), so all are kept.
    const snapshots = [];
    await page.exposeFunction('rendererMemory', async () => {
      const snapshot = new Map();
      for (const { id, cpuTime } of await renderers())
        snapshot.set(id, { cpuTime, ...processMemory(id) });
      snapshots.push(snapshot);
      return { snapshot: snapshots.length - 1 };
    });
    await page.goto(`${base}/bench/peers/browser/page.html`);
    await page.waitForFunction(() => document.body.dataset.ready === 'true');
    return { context, page, snapshots };
  }

  // Replaces the page's snapshot references with the memory of the renderer that ran the case.
  function resolveMemory(memory, snapshots) {
    if (!memory?.before || !memory?.after) return memory;
    const first = snapshots[memory.before.snapshot];
    const last = snapshots[memory.after.snapshot];
    let pid = null;
    let busiest = -1;
    for (const [id, end] of last) {
      const spent = end.cpuTime - (first.get(id)?.cpuTime ?? 0);
      if (spent > busiest) [pid, busiest] = [id, spent];
    }
    return { ...memory, before: first.get(pid), after: last.get(pid), rendererPid: pid };
  }

  return {
    version: browser.version(),
    async runCase(spec, { log, timeoutMs } = {}) {
      const { context, page, snapshots } = await openPage(log);
      let timer;
      const timeout = new Promise((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`timed out after ${timeoutMs / 1000} s`)),
          timeoutMs,
        );
      });
      try {
        const result = await Promise.race([page.evaluate((s) => window.runCase(s), spec), timeout]);
        return {
          ...result,
          memory: resolveMemory(result.memory, snapshots),
          crossOriginIsolated: await page.evaluate(() => self.crossOriginIsolated),
        };
      } catch (error) {
        return { ...spec, status: 'failed', error: `page: ${String(error.message).slice(0, 400)}` };
      } finally {
        clearTimeout(timer);
        await context.close();
      }
    },
    async measurePeak() {
      const { context, page } = await openPage();
      try {
        return await page.evaluate(() => window.measurePeak());
      } finally {
        await context.close();
      }
    },
    async close() {
      await browser.close();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
