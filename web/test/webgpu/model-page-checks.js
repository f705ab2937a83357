// What the Chromium test runs in a page: a tiny GPT-2 (its files handed in as bytes, loaded as
// picked File objects) on backend 'webgpu' (SwiftShader) against the wasm forward. Returns plain
// numbers and strings; chromium.test.mjs asserts on them.

import { loadModel } from '../../src/models/index.js';

/** @param {{ name: string, bytes: number[] }[]} files @param {string} text */
export async function compareForward(files, text) {
  const picked = files.map(({ name, bytes }) => new File([Uint8Array.from(bytes)], name));
  const wasm = await loadModel(picked);
  const gpu = await loadModel(picked, { backend: 'webgpu' });
  try {
    const options = { returnLogits: true };
    const expected = await wasm.run(text, options);
    const actual = await gpu.run(text, options);
    const worst = (a, b) => a.reduce((m, value, i) => Math.max(m, Math.abs(value - b[i])), 0);
    return {
      backend: gpu.info.backend,
      reason: gpu.info.backendReason,
      ran: actual.backend,
      tokens: actual.tokens.length,
      attention: worst(actual.attention, expected.attention),
      logits: worst(actual.logits, expected.logits),
      top: actual.predictions.map((p) => p.id),
      expectedTop: expected.predictions.map((p) => p.id),
    };
  } finally {
    wasm.dispose();
    gpu.dispose();
  }
}
