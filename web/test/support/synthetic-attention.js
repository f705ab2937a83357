// A run's attention of a given shape with no model behind it, for the model view's tests and
// frame-time benchmark (drawing needs only the weights): causal, and per head one of four
// patterns that long-text drawing must keep visible. Runs in Node and in the browser.
//   h % 4 = 0: previous token (row i all on key i - 1; row 0 on itself)
//   h % 4 = 1: a sink: 0.9 on the first token, the rest spread over the row's other keys
//   h % 4 = 2: uniform over the row's keys
//   h % 4 = 3: uniform, except one row (spikeRow) all on one key (spikeKey): one bright cell

export function spikeOf(n) {
  return { row: Math.floor(n * 0.68), col: 3 };
}

/** @returns {{ attention: Float32Array, visible: Uint8Array, labels }} the model grid's data */
export function syntheticAttention({ layers, heads, n }) {
  const size = n * n;
  const attention = new Float32Array(layers * heads * size);
  const visible = new Uint8Array(layers * size);
  for (let l = 0; l < layers; l++) {
    for (let i = 0; i < n; i++) visible.fill(1, l * size + i * n, l * size + i * n + i + 1);
  }
  const spike = spikeOf(n);
  for (let k = 0; k < layers * heads; k++) {
    const head = attention.subarray(k * size, (k + 1) * size);
    const pattern = (k % heads) % 4;
    for (let i = 0; i < n; i++) {
      const row = head.subarray(i * n, i * n + i + 1);
      if (pattern === 0) row[Math.max(0, i - 1)] = 1;
      else if (pattern === 1) {
        if (i === 0) row[0] = 1;
        else {
          row.fill(0.1 / i, 1);
          row[0] = 0.9;
        }
      } else if (pattern === 3 && i === spike.row) row[spike.col] = 1;
      else row.fill(1 / (i + 1));
    }
  }
  const labels = Array.from({ length: layers }, () =>
    Array.from({ length: heads }, () => ({ label: null, measures: {} })),
  );
  return { attention, visible, labels };
}
