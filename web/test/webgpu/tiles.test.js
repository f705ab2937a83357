// Causal and window masks skip key tiles rather than zeroing them: the streaming kernel counts
// the tiles it computes, and for banded masks that count equals the number of (query block,
// key tile) pairs holding at least one visible entry, found from the mask matrix.

import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { tensor } from '../support/helpers.js';
import { openGpuAttention, openWasmAttention } from './support.js';

const N = 300;
let gpu;
let wasm;
before(async () => {
  gpu = await openGpuAttention();
  wasm = await openWasmAttention();
});
after(() => {
  gpu.dispose();
  wasm.dispose();
});

const q = tensor(N * 3, 1);
const k = tensor(N * 3, 2);
const v = tensor(N * 5, 3);

function tilesWithVisibleEntries(mask, queryBlock, keyTile) {
  let count = 0;
  for (let q0 = 0; q0 < N; q0 += queryBlock) {
    for (let k0 = 0; k0 < N; k0 += keyTile) {
      let any = false;
      for (let i = q0; i < Math.min(q0 + queryBlock, N) && !any; i++) {
        for (let j = k0; j < Math.min(k0 + keyTile, N) && !any; j++) any = mask[i * N + j] !== 0;
      }
      count += any ? 1 : 0;
    }
  }
  return count;
}

for (const [name, options, banded] of [
  ['causal', { causal: true }, true],
  ['window 20', { window: 20 }, true],
  ['causal left window 40', { causal: true, window: { before: 40 } }, true],
  ['key padding', { keyLengths: [130] }, true],
  ['window with a global token', { window: 10, globalTokens: [150] }, false],
  ['strided sparse (not banded)', { sparse: { pattern: 'strided', stride: 7 } }, false],
]) {
  it(name, async () => {
    const r = await gpu.attention(q, k, v, { heads: 1, headDim: 3, valueDim: 5, ...options });
    const { queryBlock, keyTile } = r.stats.gpu;
    const mask = wasm.maskMatrix({ queryLength: N, keyLength: N, ...options });
    const needed = tilesWithVisibleEntries(mask, queryBlock, keyTile);
    assert.equal(r.stats.tilesTotal, Math.ceil(N / queryBlock) * Math.ceil(N / keyTile));
    if (banded) {
      assert.equal(r.stats.tilesVisited, needed);
      assert.ok(r.stats.tilesVisited < r.stats.tilesTotal);
    } else {
      assert.ok(r.stats.tilesVisited >= needed && r.stats.tilesVisited <= r.stats.tilesTotal);
    }
  });
}
