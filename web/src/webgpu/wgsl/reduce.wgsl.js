// Max and sum over the `lanes` invocations that share one row (aligned groups of consecutive
// local_invocation_index values). Both versions must be called by every invocation of the
// workgroup, in uniform control flow.
//
// With subgroups: a butterfly of subgroupShuffleXor. It relies on the lanes of a group sitting in
// one subgroup, which holds when lanes <= the adapter's minimum subgroup size and invocations
// fill subgroups in index order; device.js checks the latter with a probe kernel before it
// enables this path. Without subgroups: through workgroup memory, two barriers per reduction.

/**
 * @param {{ lanes: number, workgroupSize: number, subgroups: boolean }} plan
 * @returns {string} WGSL defining laneMax(x, li) and laneSum(x, li)
 */
export function laneReductions({ lanes, workgroupSize, subgroups }) {
  if (subgroups) {
    return /* wgsl */ `
fn laneMax(x: f32, li: u32) -> f32 {
  var r = x;
  for (var offset = ${lanes / 2}u; offset > 0u; offset = offset >> 1u) {
    r = max(r, subgroupShuffleXor(r, offset));
  }
  return r;
}

fn laneSum(x: f32, li: u32) -> f32 {
  var r = x;
  for (var offset = ${lanes / 2}u; offset > 0u; offset = offset >> 1u) {
    r = r + subgroupShuffleXor(r, offset);
  }
  return r;
}
`;
  }
  return /* wgsl */ `
var<workgroup> laneScratch: array<f32, ${workgroupSize}>;

fn laneMax(x: f32, li: u32) -> f32 {
  laneScratch[li] = x;
  workgroupBarrier();
  let first = li - li % ${lanes}u;
  var r = laneScratch[first];
  for (var k = 1u; k < ${lanes}u; k++) { r = max(r, laneScratch[first + k]); }
  workgroupBarrier();
  return r;
}

fn laneSum(x: f32, li: u32) -> f32 {
  laneScratch[li] = x;
  workgroupBarrier();
  let first = li - li % ${lanes}u;
  var r = 0.0;
  for (var k = 0u; k < ${lanes}u; k++) { r = r + laneScratch[first + k]; }
  workgroupBarrier();
  return r;
}
`;
}
