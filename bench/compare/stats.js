// Order statistics for the before/after runners: medians, quartiles and the spread of per-pair
// ratios. A pair is one call (or one run) of each side made back to back, so its ratio has seen
// one machine load; the interquartile range of those ratios is the noise a reader should allow.

/** The q-quantile (0..1) of `values`, interpolating between the two nearest ranks. */
export function quantile(values, q) {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const at = (sorted.length - 1) * q;
  const low = Math.floor(at);
  const high = Math.ceil(at);
  return sorted[low] + (sorted[high] - sorted[low]) * (at - low);
}

export const median = (values) => quantile(values, 0.5);

/**
 * Before and after times from alternating calls, pair by pair.
 * @param {number[]} before
 * @param {number[]} after the same length: after[i] was timed next to before[i]
 */
export function comparePairs(before, after) {
  const ratios = before.map((b, i) => after[i] / b);
  return {
    before: median(before),
    after: median(after),
    bestBefore: Math.min(...before),
    bestAfter: Math.min(...after),
    ratio: median(ratios),
    q1: quantile(ratios, 0.25),
    q3: quantile(ratios, 0.75),
    pairs: ratios.length,
  };
}

/** "1.003 (IQR 0.981-1.020)": the median after/before ratio and its interquartile range. */
export const formatRatio = ({ ratio, q1, q3 }) =>
  `${ratio.toFixed(3)} (IQR ${q1.toFixed(3)}-${q3.toFixed(3)})`;

/** The 1-minute load average (Linux), or '?' elsewhere. */
export async function loadAverage() {
  try {
    const { readFileSync } = await import('node:fs');
    return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  } catch {
    return '?';
  }
}
