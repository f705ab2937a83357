// One benchmark case, run the same way in a Node process and in a Chromium page: open the
// library, build the seeded inputs, call once and check the output against the float64
// reference, then time it. A library whose output is wrong is reported, never timed.

import { RUNNERS } from '../libraries/index.js';
import { checkOutput } from './reference.js';
import { openSpeedProbe } from './peak.js';
import { TIMING, timeRuns } from './timing.js';
import { denseFlops, makeInputs } from './workload.js';

/**
 * @param {{ runner: string, n: number, mask: string, threads: number, quick?: boolean }} spec
 * @param {{ name: string, sharedMemory: boolean, loadModel: Function, memory: () => object | Promise<object>,
 *   cpuMs?: () => number, ortWasmPaths?: string, tfjsWasmPaths?: string }} platform what differs
 *   between Node and a page
 * @returns {Promise<object>} the spec plus `status` ('ok' | 'wrong' | 'unavailable' | 'failed')
 *   and, when timed, ms (median of the calls made at full speed, see timing.js), minMs, runs,
 *   allRuns, allMedianMs, probes, counted, gflops, check, memory, version, detail
 */
export async function runCase(spec, platform) {
  const entry = RUNNERS[spec.runner];
  if (!entry) return { ...spec, status: 'failed', error: `unknown runner '${spec.runner}'` };
  const result = { ...spec, library: entry.library };
  try {
    const adapter = await entry.load();
    const library = await adapter.open({ ...entry.options, threads: spec.threads, platform });
    if (library.unavailable)
      return { ...result, status: 'unavailable', reason: library.unavailable };
    Object.assign(result, { version: library.version, detail: library.detail });

    const inputs = makeInputs(spec.n);
    const prepared = await library.prepare(inputs, spec.mask);
    if (prepared.detail) result.detail += `, ${prepared.detail}`;
    const before = await platform.memory();

    const started = performance.now();
    const output = await prepared.call();
    const firstMs = performance.now() - started;
    result.check = checkOutput(prepared.headMajor(output), inputs, spec.mask);
    if (!result.check.passed) return { ...result, status: 'wrong', firstMs };

    // Two-thread cases probe both cores at once (peak.js): a call counts only while two were there.
    const probeThreads = spec.threads > 1 && platform.sharedMemory ? 2 : 1;
    const probe = await openSpeedProbe({ threads: probeThreads });
    const cpuBefore = platform.cpuMs?.();
    const timedStart = performance.now();
    let timing;
    try {
      timing = await timeRuns(
        prepared.call,
        spec.quick ? TIMING.quick : TIMING.full,
        firstMs,
        probe,
        spec.fullRate ?? 0,
      );
    } finally {
      probe?.close();
    }
    const timedMs = performance.now() - timedStart;
    const after = await platform.memory();
    prepared.dispose?.();
    return {
      ...result,
      status: 'ok',
      firstMs,
      ms: timing.median,
      minMs: timing.min,
      runs: timing.runs,
      // Every timed call, the probes between them and how many calls ran at full speed.
      allRuns: timing.allRuns,
      allMedianMs: timing.allMedian,
      probes: timing.probes.map((rate) => Number(rate.toFixed(2))),
      counted: timing.counted,
      probeThreads,
      gflops: denseFlops(spec.n) / (timing.median * 1e6),
      memory: { before, after, wasmBytes: library.wasmBytes?.() },
      // CPU time over wall time while timing, the probes' share taken out: about 1 on one
      // thread, up to `threads` when a library's threads really run (Node only: pages cannot
      // read CPU time).
      cpuPerWall:
        cpuBefore === undefined
          ? undefined
          : (platform.cpuMs() - cpuBefore - probeThreads * timing.probeMs) /
            (timedMs - timing.probeMs),
    };
  } catch (error) {
    return { ...result, status: 'failed', error: String(error?.message ?? error).slice(0, 500) };
  }
}
