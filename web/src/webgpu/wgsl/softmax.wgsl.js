// Masked row softmax of the materialized path: weights = softmax(logits) over the visible keys of
// each row (logits from the raw scores: scale, the logit terms, temperature), zeros for a row that
// sees none. Works on a chunk of the
// [heads, queryLength, keyLength] matrices: heads headBase.. and rows rowBase.. (tiling.js
// scoreChunks), stored as [heads in chunk, rows, keyLength].
//
// Each row is served by `lanes` invocations striding over the keys, `rows` rows per workgroup.
// Pass 1 writes logits (or NO_SCORE) into `weights` and finds the row maximum, the topK variant
// then keeps the row's topK largest (wgsl/top-k.wgsl.js; the maximum is among them), pass 2 sums
// the exponentials, pass 3 normalises in place; each invocation only reads back what it wrote.
//
// Bindings: 0 uniforms, 1 scores (raw, read), 2 weights (read_write), 3 maskWords, 4 logitBias
// (the terms variant only).

import { defineUniforms } from '../uniforms.js';
import { LOGIT_TERM_FIELDS } from '../logit-terms.js';
import { MASK_FIELDS } from '../mask-data.js';
import { SCORE_SENTINELS, enables } from './common.wgsl.js';
import { logitTermsWgsl } from './logit-terms.wgsl.js';
import { MASK_WGSL } from './mask.wgsl.js';
import { topKWgsl } from './top-k.wgsl.js';
import { laneReductions } from './reduce.wgsl.js';

export const SOFTMAX_UNIFORMS = defineUniforms('SoftmaxParams', [
  'queryLength',
  'keyLength',
  'headBase',
  'rowBase',
  'rows',
  'factor:f32',
  'topK', // 0: every visible key
  ...LOGIT_TERM_FIELDS,
  ...MASK_FIELDS,
]);

/**
 * @param {{ lanes: number, rowsPerGroup: number, subgroups: boolean }} plan
 * @param {{ terms: boolean, topK: boolean }} variant whether the call has logit terms
 *   (logit-terms.js) and a topK selection
 */
export function softmaxKernel({ lanes, rowsPerGroup, subgroups }, { terms, topK }) {
  const workgroupSize = lanes * rowsPerGroup;
  return /* wgsl */ `${enables({ subgroups })}
${SOFTMAX_UNIFORMS.wgsl}
@group(0) @binding(0) var<uniform> p: SoftmaxParams;
@group(0) @binding(1) var<storage, read> scores: array<f32>;
@group(0) @binding(2) var<storage, read_write> weights: array<f32>;
@group(0) @binding(3) var<storage, read> maskWords: array<u32>;
${SCORE_SENTINELS}
${MASK_WGSL}
${logitTermsWgsl({ terms, binding: 4 })}
${laneReductions({ lanes, workgroupSize, subgroups })}
${topK ? topKWgsl({ lanes }) : ''}

@compute @workgroup_size(${workgroupSize})
fn main(@builtin(workgroup_id) group: vec3<u32>, @builtin(local_invocation_index) li: u32) {
  let localRow = group.x * ${rowsPerGroup}u + li / ${lanes}u;
  let lane = li % ${lanes}u;
  let live = localRow < p.rows;
  let h = p.headBase + group.y;
  let i = p.rowBase + localRow;
  let base = (group.y * p.rows + localRow) * p.keyLength;

  var rowMax = NO_SCORE;
  if (live) {
    let unmasked = p.restrictsNothing != 0u;
    for (var j = lane; j < p.keyLength; j += ${lanes}u) {
      var logit = NO_SCORE;
      if (unmasked || visible(h, i, j)) { logit = finishLogit(h, i, j, scores[base + j]); }
      weights[base + j] = logit;
      rowMax = max(rowMax, logit);
    }
  }
  rowMax = laneMax(rowMax, li);
${topK ? '  keepTopK(base, lane, live, li);' : ''}

  var sum = 0.0;
  if (live && rowMax > VISIBLE_FLOOR) {
    for (var j = lane; j < p.keyLength; j += ${lanes}u) {
      let logit = weights[base + j];
      sum += select(0.0, exp(logit - rowMax), logit > VISIBLE_FLOOR);
    }
  }
  sum = laneSum(sum, li);

  if (live) {
    let inverse = select(0.0, 1.0 / sum, sum > 0.0);
    for (var j = lane; j < p.keyLength; j += ${lanes}u) {
      let logit = weights[base + j];
      weights[base + j] = select(0.0, exp(logit - rowMax) * inverse, logit > VISIBLE_FLOOR);
    }
  }
}
`;
}
