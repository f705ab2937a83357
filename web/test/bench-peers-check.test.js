// The peers benchmark (bench/peers/) times a library only after its output passed the check in
// core/reference.js; this keeps that check honest without installing any peer: it must accept a
// correct output for every mask, and reject small errors, NaN and wrong lengths. Also the
// workload's layouts and masks, and the hand-assembled peak probes (SIMD128, FMA).
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';
import assert from 'node:assert/strict';

import {
  checkOutput,
  referenceRow,
  rowsToCheck,
  TOLERANCE,
} from '../../bench/peers/core/reference.js';
import {
  DEPTH,
  HEADS,
  MASKED_LOGIT,
  MASKS,
  additiveMask,
  makeInputs,
  toHeadMajor,
  toTokenMajor,
  visibleKeys,
} from '../../bench/peers/core/workload.js';
import {
  FLOPS_PER_ITERATION,
  openSpeedProbe,
  peakModuleBytes,
} from '../../bench/peers/core/peak.js';
import { open as openPlainJs } from '../../bench/peers/libraries/plain-js.js';
import { open as openAttnlens } from '../../bench/peers/libraries/attnlens.js';

const N = 130; // above 2 x 64 + 1, so window128 leaves keys out in the middle
const inputs = makeInputs(N);

async function outputOf(open, mask) {
  const library = await open({ variant: 'simd', threads: 1, platform: {} });
  const prepared = await library.prepare(inputs, mask);
  return prepared.headMajor(await prepared.call());
}

test('the check accepts attnlens and plain JS for every mask', async () => {
  for (const mask of MASKS) {
    for (const open of [openPlainJs, openAttnlens]) {
      const result = checkOutput(await outputOf(open, mask), inputs, mask);
      assert.ok(result.passed, `${mask}: ${result.worst}`);
      assert.equal(result.rowsChecked, HEADS * N, 'every row at small N');
      assert.ok(result.maxAbsError < 1e-5, `${mask}: ${result.maxAbsError}`);
    }
  }
});

test('the check rejects an error above the tolerance, NaN and a wrong length', async () => {
  const good = await outputOf(openPlainJs, 'causal');
  const off = Float32Array.from(good);
  off[(3 * N + 7) * DEPTH + 5] += 10 * TOLERANCE;
  const result = checkOutput(off, inputs, 'causal');
  assert.equal(result.passed, false);
  assert.match(result.worst, /head 3 row 7 column 5/);
  const nan = Float32Array.from(good);
  nan[11] = NaN;
  assert.equal(checkOutput(nan, inputs, 'causal').passed, false);
  assert.equal(checkOutput(good.subarray(1), inputs, 'causal').passed, false);
  // An output computed without the mask is wrong for the masked problem.
  assert.equal(checkOutput(await outputOf(openPlainJs, 'none'), inputs, 'causal').passed, false);
});

test("sampled rows above the full-check size include each head's first and last row", () => {
  const rows = rowsToCheck(4096);
  assert.equal(rows.length, HEADS * 8);
  for (let h = 0; h < HEADS; h++) {
    assert.ok(rows.some(([hh, i]) => hh === h && i === 0));
    assert.ok(rows.some(([hh, i]) => hh === h && i === 4095));
  }
});

test('reference rows are convex combinations of value rows', () => {
  const row = referenceRow(inputs, 'window128', 2, 9);
  for (let d = 0; d < DEPTH; d++) assert.ok(Math.abs(row[d]) <= 1);
});

test('additive masks hide exactly the keys outside visibleKeys, layouts round-trip', () => {
  for (const mask of ['causal', 'window128']) {
    const n = 300;
    const additive = additiveMask(mask, n);
    for (const i of [0, 1, 64, 150, 299]) {
      const [start, end] = visibleKeys(mask, i, n);
      for (let j = 0; j < n; j++) {
        assert.equal(
          additive[i * n + j],
          j >= start && j < end ? 0 : Math.fround(MASKED_LOGIT),
          `${mask} ${i} ${j}`,
        );
      }
    }
  }
  assert.equal(additiveMask('none', 8), null);
  assert.deepEqual(toHeadMajor(toTokenMajor(inputs.q, N), N), inputs.q);
});

test('the SIMD128 peak probe runs its ten mul+add chains', async () => {
  const bytes = peakModuleBytes();
  assert.ok(WebAssembly.validate(bytes));
  const { instance } = await WebAssembly.instantiate(bytes);
  let acc = Math.fround(0.25);
  for (let i = 0; i < 1000; i++) acc = Math.fround(Math.fround(acc * 0.5) + 0.25);
  let sum = acc;
  for (let c = 1; c < 10; c++) sum = Math.fround(sum + acc);
  assert.equal(instance.exports.chains(1000, 0.5, 0.25), sum);
  assert.equal(FLOPS_PER_ITERATION, 80);
});

test('the FMA peak probe runs its ten relaxed_madd chains (Node 20: behind its flag)', () => {
  // Without the flag Node 20 has no relaxed SIMD and must reject the module, not run it wrongly.
  assert.equal(WebAssembly.validate(peakModuleBytes({ fused: true })), false);
  const peak = new URL('../../bench/peers/core/peak.js', import.meta.url).href;
  const script = `
    const { peakModuleBytes } = await import(${JSON.stringify(peak)});
    const { instance } = await WebAssembly.instantiate(peakModuleBytes({ fused: true }));
    console.log(instance.exports.chains(1000, 0.5, 0.25));`;
  const out = execFileSync(
    process.execPath,
    ['--experimental-wasm-relaxed-simd', '--input-type=module', '-e', script],
    { encoding: 'utf8' },
  );
  // acc * 0.5 + 0.25 is exact in float32, so fused and separate steps give the same sum.
  let acc = Math.fround(0.25);
  for (let i = 0; i < 1000; i++) acc = Math.fround(Math.fround(acc * 0.5) + 0.25);
  let sum = acc;
  for (let c = 1; c < 10; c++) sum = Math.fround(sum + acc);
  assert.equal(Number(out.trim()), sum);
});

test('the speed probe runs on one thread, or on two at once (a worker thread)', async () => {
  for (const threads of [1, 2]) {
    const probe = await openSpeedProbe({ threads });
    for (let i = 0; i < 3; i++) {
      const rate = probe(3);
      assert.ok(Number.isFinite(rate) && rate > 0.1, `${threads} thread(s): ${rate} GFLOP/s`);
    }
    probe.close();
  }
  await assert.rejects(openSpeedProbe({ threads: 3 }), RangeError);
});
