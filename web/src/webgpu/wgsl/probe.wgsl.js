// The subgroup layout probe run once per device (device.js): every invocation of a 1-D
// workgroup writes its subgroup_invocation_id and subgroup_size. The shuffle reductions of
// reduce.wgsl.js are used only if invocation i sits at lane i % size, i.e. subgroups are filled
// in index order, which WebGPU does not promise.

export const PROBE_WORKGROUP = 128;

export const SUBGROUP_PROBE = /* wgsl */ `enable subgroups;
@group(0) @binding(0) var<storage, read_write> result: array<u32>;

@compute @workgroup_size(${PROBE_WORKGROUP})
fn main(@builtin(local_invocation_index) li: u32, @builtin(subgroup_invocation_id) lane: u32,
        @builtin(subgroup_size) size: u32) {
  result[2u * li] = lane;
  result[2u * li + 1u] = size;
}
`;
