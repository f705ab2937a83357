// Whether a second model fits beside the page's: the rule "Compare two models" applies before
// anything downloads, from the sizes describeModel reports. Its own module so that the rule is
// tested on its own, without a page.
import { MAX_WASM_BYTES } from '../../src/heap.js';

export { MAX_WASM_BYTES };

/**
 * loadedBytes: the page's model's weights (its info.bytes); about: describeModel's answer for
 * the second. Both models' weights and the scratch the second needs while it loads must fit in
 * the wasm memory one engine may hold (2 GiB): comparing never asks more of the tab than one
 * model could, though each model runs on its own engine.
 * @returns {{ total: number, fits: boolean }}
 */
export function pairMemory(loadedBytes, about) {
  const total = loadedBytes + about.memoryBytes + about.loadScratchBytes;
  return { total, fits: about.fits && total <= MAX_WASM_BYTES };
}
