// Timing of one library call: warm-up first (the correctness-check call counts as one), then
// repeated calls until both a minimum count and a minimum total time are reached.

/** Warm-up and repetition limits; `quick` is for trying the benchmark out, not for publishing. */
export const TIMING = {
  full: { warmupMs: 300, minRuns: 3, maxRuns: 40, minTotalMs: 2000 },
  quick: { warmupMs: 100, minRuns: 3, maxRuns: 10, minTotalMs: 300 },
};

const now = () => performance.now();

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/**
 * Times `run` (async; it must leave its result in JavaScript memory, so lazy libraries cannot
 * return before computing). Short calls get extra warm-up calls until `warmupMs` has passed,
 * which lets the JavaScript and wasm tiers finish optimising; `warmedUpMs` is time already
 * spent calling it (the check call), so slow calls are not repeated just to warm up.
 * @returns {Promise<{ runs: number[], median: number, min: number }>} milliseconds
 */
export async function timeRuns(run, limits, warmedUpMs = 0) {
  const warmupStart = now() - warmedUpMs;
  for (let i = 0; i < 50 && now() - warmupStart < limits.warmupMs; i++) await run();
  const runs = [];
  let total = 0;
  while (runs.length < limits.maxRuns && (runs.length < limits.minRuns || total < limits.minTotalMs)) {
    const started = now();
    await run();
    const ms = now() - started;
    runs.push(ms);
    total += ms;
  }
  return { runs, median: median(runs), min: Math.min(...runs) };
}
