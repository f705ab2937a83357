// Queries over saved benchmark results (run.mjs writes one file per environment): a case by its
// runner, size, mask and threads, and a library's best runner for a case.

/**
 * attnlens in a case: its fastest timed build (relaxed SIMD where the engine has it, which is
 * what createAttention() loads there; else SIMD128), or its SIMD128 row when none ran.
 */
export function attnlensCase(report, { n, mask, threads }) {
  return (
    bestOfLibrary(report, 'attnlens', { n, mask, threads }) ??
    findCase(report, { runner: 'attnlens-simd', n, mask, threads })
  );
}

/** Libraries in the order tables and the plot list them, attnlens first. */
export const LIBRARY_ORDER = ['attnlens', 'onnxruntime-web', 'tensorflow.js', 'plain JavaScript'];

export function findCase(report, { runner, n, mask, threads }) {
  return report.results.find(
    (r) => r.runner === runner && r.n === n && r.mask === mask && r.threads === threads,
  );
}

/** The fastest timed runner of `library` for a case, or null. */
export function bestOfLibrary(report, library, { n, mask, threads }) {
  let best = null;
  for (const r of report.results) {
    if (
      r.library !== library ||
      r.n !== n ||
      r.mask !== mask ||
      r.threads !== threads ||
      r.status !== 'ok'
    )
      continue;
    if (!best || r.ms < best.ms) best = r;
  }
  return best;
}

/** Sorted distinct values of a field over all results. */
export function distinct(report, field) {
  return [...new Set(report.results.map((r) => r[field]))].sort((a, b) =>
    a < b ? -1 : a > b ? 1 : 0,
  );
}

/** The masks in their workload order (none, causal, window128), whatever order the file has. */
export function masksOf(report) {
  const order = ['none', 'causal', 'window128'];
  return order.filter((m) => report.results.some((r) => r.mask === m));
}

/** Runners in the order of the file (the order run.mjs ran them). */
export function runnersOf(report) {
  return [...new Set(report.results.map((r) => r.runner))];
}

/** Peak memory of a timed case above what it held before its first call, in bytes. */
export function peakMemoryDelta(result) {
  const before = result.memory?.before;
  const after = result.memory?.after;
  if (!before?.rss || !after?.peakRss) return undefined;
  return Math.max(0, after.peakRss - before.rss);
}
