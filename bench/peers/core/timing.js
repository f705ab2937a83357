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

/** A probe counts as full speed at this fraction of the reference rate (see timeRuns) or more. */
export const FULL_SPEED = 0.95;

/**
 * Times `run` (async; it must leave its result in JavaScript memory, so lazy libraries cannot
 * return before computing). Short calls get extra warm-up calls until `warmupMs` has passed,
 * which lets the JavaScript and wasm tiers finish optimising; `warmedUpMs` is time already
 * spent calling it (the check call), so slow calls are not repeated just to warm up.
 *
 * With a `probe` (peak.js openSpeedProbe), every timed call is bracketed by short register-only
 * probes (a quarter of the call's time, 3 to 10 ms: timers in pages tick in 0.1 ms). A call
 * counts when the probes on both of its sides reached FULL_SPEED of the reference rate: the
 * larger of `fullRate` (the best rate seen so far in the run) and this case's best probe. The
 * others ran while the host took part of the core; the loop loses only 15-40% then while
 * attention kernels, which also need the caches, lose up to 50%, hence the tight 95%. For
 * two-thread cases the probe runs on two threads and reports the slower (peak.js), so a call
 * counts only when both cores were there at full speed. Timing goes on (up to 3x maxRuns calls
 * and 4x minTotalMs) until minRuns calls count; if none ever does, every call counts and
 * `counted` is 0.
 * @returns {Promise<{ runs: number[], median: number, min: number, allRuns: number[],
 *   allMedian: number, probes: number[], counted: number, probeMs: number }>} milliseconds; `runs`
 *   are the calls that count, `probeMs` the time spent in probes
 */
export async function timeRuns(run, limits, warmedUpMs = 0, probe = null, fullRate = 0) {
  const warmupStart = now() - warmedUpMs;
  for (let i = 0; i < 50 && now() - warmupStart < limits.warmupMs; i++) await run();
  const allRuns = [];
  const probes = [];
  let total = 0;
  let probeMs = 0;
  const probeFor = (ms) => {
    if (!probe) return 1;
    const started = now();
    const rate = probe(Math.min(10, Math.max(3, ms / 4)));
    probeMs += now() - started;
    return rate;
  };
  probes.push(probeFor(warmedUpMs));
  const counts = (i) =>
    Math.min(probes[i], probes[i + 1]) >= FULL_SPEED * Math.max(fullRate, ...probes);
  const counted = () => allRuns.filter((_, i) => counts(i)).length;
  while (
    (allRuns.length < limits.maxRuns &&
      (allRuns.length < limits.minRuns || total < limits.minTotalMs)) ||
    (probe &&
      allRuns.length < 3 * limits.maxRuns &&
      total < 4 * limits.minTotalMs &&
      counted() < limits.minRuns)
  ) {
    const started = now();
    await run();
    const ms = now() - started;
    allRuns.push(ms);
    probes.push(probeFor(ms));
    total += ms;
  }
  const runs = probe ? allRuns.filter((_, i) => counts(i)) : allRuns;
  const kept = runs.length > 0 ? runs : allRuns;
  return {
    runs: kept,
    median: median(kept),
    min: Math.min(...kept),
    allRuns,
    allMedian: median(allRuns),
    probes,
    counted: runs.length,
    probeMs,
  };
}
