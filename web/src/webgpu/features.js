// Which optional WebGPU features attnlens asks for, decided from what the adapter offers and
// what the caller prefers. Pure, so the decisions are testable on any machine (SwiftShader has
// 'subgroups' but no 'shader-f16').

/**
 * @param {{ has(name: string): boolean }} adapterFeatures adapter.features (a set-like)
 * @param {{ storage?: 'f32' | 'f16', subgroups?: boolean }} preferences
 * @returns {{ requiredFeatures: string[], storage: 'f32' | 'f16', subgroups: boolean,
 *   notes: string[] }} `notes` says why a preference could not be honoured
 */
export function chooseFeatures(adapterFeatures, { storage = 'f32', subgroups = true } = {}) {
  const requiredFeatures = [];
  const notes = [];
  let chosenStorage = 'f32';
  if (storage === 'f16') {
    if (adapterFeatures.has('shader-f16')) {
      requiredFeatures.push('shader-f16');
      chosenStorage = 'f16';
    } else {
      notes.push(
        "storage 'f16' needs the 'shader-f16' feature, which this adapter lacks: using f32",
      );
    }
  }
  const useSubgroups = subgroups && adapterFeatures.has('subgroups');
  if (useSubgroups) requiredFeatures.push('subgroups');
  else if (subgroups) notes.push("no 'subgroups' feature: reductions go through workgroup memory");
  return { requiredFeatures, storage: chosenStorage, subgroups: useSubgroups, notes };
}

// Row reductions shuffle between the lanes of aligned groups of up to this many invocations.
// WebGPU guarantees subgroups of at least 4 invocations; a larger guaranteed minimum
// (adapter.info.subgroupMinSize) allows wider groups, capped where more lanes stop helping.
const MAX_SHUFFLE_LANES = 16;

/** The widest lane group that always sits inside one subgroup on this adapter. */
export function shuffleLanes(adapterInfo) {
  const min = adapterInfo?.subgroupMinSize;
  return Number.isInteger(min) && min >= 4
    ? Math.min(2 ** Math.floor(Math.log2(min)), MAX_SHUFFLE_LANES)
    : 4;
}
