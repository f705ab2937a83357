// Pipelines and buffers are made once: repeated calls of one shape (with any mask, score scale or
// temperature) and shapes in the same depth bucket compile no shader and allocate no buffer.
// Counted on the real device by wrapping its create* methods.

import assert from 'node:assert/strict';
import { it } from 'node:test';
import { createAttention } from '../../src/index.js';
import { tensor } from '../support/helpers.js';
import { requestDevice } from './support.js';

function countCalls(device, names) {
  const counts = Object.fromEntries(names.map((name) => [name, 0]));
  for (const name of names) {
    const original = device[name].bind(device);
    device[name] = (...args) => {
      counts[name]++;
      return original(...args);
    };
  }
  return counts;
}

it('compiles each kernel once and reuses buffers across calls of a shape', async () => {
  const device = await requestDevice();
  const counts = countCalls(device, [
    'createComputePipeline',
    'createComputePipelineAsync',
    'createShaderModule',
    'createBuffer',
  ]);
  const attn = await createAttention({ backend: 'webgpu', webgpu: { device } });
  const snapshot = () => ({ ...counts });
  const call = (n, options) =>
    attn.attention(tensor(2 * n * 3, n), tensor(2 * n * 3, n + 1), tensor(2 * n * 5, n + 2), {
      heads: 2,
      headDim: 3,
      valueDim: 5,
      ...options,
    });

  await call(40, { causal: true });
  const afterFirst = snapshot();
  assert.ok(afterFirst.createComputePipelineAsync >= 1);
  for (const options of [
    { causal: true },
    { window: 3, temperature: 0.5 },
    { sparse: { pattern: 'strided', stride: 3 } },
    {},
  ]) {
    await call(40, options);
  }
  await call(33, { causal: true }); // fewer tokens, same depth buckets: buffers are large enough
  assert.deepEqual(snapshot(), afterFirst, 'streaming calls after the first created nothing');

  await call(40, { returnWeights: true });
  const afterMaterialized = snapshot();
  assert.ok(afterMaterialized.createComputePipelineAsync > afterFirst.createComputePipelineAsync);
  await call(40, { returnWeights: true, causal: true });
  await call(40, { returnWeights: true, returnScores: true, window: 2 });
  const repeated = snapshot();
  // returnScores adds one readback buffer; no pipeline is compiled again.
  assert.equal(repeated.createComputePipelineAsync, afterMaterialized.createComputePipelineAsync);
  assert.equal(repeated.createShaderModule, afterMaterialized.createShaderModule);
  assert.equal(repeated.createComputePipeline, 0);
  await call(40, { returnWeights: true, returnScores: true });
  assert.deepEqual(snapshot(), repeated, 'materialized calls of one shape created nothing');
  attn.dispose();
  device.destroy();
});
