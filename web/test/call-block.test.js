// The call block's layout is checked name by name when a module loads: the real modules agree
// with web/src/call-block.js, and a module whose layout differs only by two swapped slots (which
// a length check would let through) is refused with a message naming the difference.

import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { BLOCK_LENGTH, checkBlockLayout, layoutDifference } from '../src/call-block.js';
import { loadWasmModule } from '../src/loader.js';
import { WasmBackend } from '../src/wasm-backend.js';

/** The module with _callBlockLayout() answering `edit(layout)` instead of its own layout. */
function withLayout(module, edit) {
  const layout = module._callBlockLayout();
  const edited = edit({
    slots: [...layout.slots],
    arrays: [...layout.arrays],
    scores: [...layout.scores],
    strategies: [...layout.strategies],
    sparsePatterns: [...layout.sparsePatterns],
  });
  return Object.create(module, { _callBlockLayout: { value: () => edited } });
}

function swap(list, a, b) {
  const i = list.indexOf(a);
  const j = list.indexOf(b);
  assert.ok(i >= 0 && j >= 0, `${a} and ${b} are in the list`);
  [list[i], list[j]] = [list[j], list[i]];
}

describe('call block layout', () => {
  const modules = {};
  before(async () => {
    for (const flavour of ['simd', 'scalar']) modules[flavour] = await loadWasmModule(flavour);
  });

  it('every packaged module agrees with the JavaScript name for name', () => {
    for (const [flavour, module] of Object.entries(modules)) {
      const layout = module._callBlockLayout();
      assert.equal(layoutDifference(layout), '', flavour);
      assert.equal(layout.slots.length + 2 * layout.arrays.length, BLOCK_LENGTH, flavour);
      assert.doesNotThrow(() => checkBlockLayout(module), flavour);
    }
  });

  it('two swapped slots keep the length but fail to load, naming the slot', () => {
    const swapped = withLayout(modules.simd, (layout) => {
      swap(layout.slots, 'headDim', 'valueDim');
      return layout;
    });
    const layout = swapped._callBlockLayout();
    assert.equal(layout.slots.length + 2 * layout.arrays.length, BLOCK_LENGTH);
    const expected = new RegExp(
      "call block layout differs from this JavaScript's \\(slots\\[3\\] is 'valueDim' in the " +
        "module, 'headDim' in this JavaScript\\): the \\.wasm and the package's JavaScript come " +
        'from different builds',
    );
    assert.throws(() => checkBlockLayout(swapped), expected);
    assert.throws(() => new WasmBackend(swapped, 'wasm-simd'), expected);
  });

  it('swapped arrays, renumbered codes, a missing or extra name and an old module fail too', () => {
    const arrays = modules.simd._callBlockLayout().arrays.length; // an extra name lands here
    const cases = [
      [(l) => (swap(l.arrays, 'q', 'k'), l), /arrays\[7\] is 'k' in the module, 'q' in this/],
      [(l) => (swap(l.scores, 'dot', 'cosine'), l), /scores\[1\] is 'cosine' in the module/],
      [(l) => (swap(l.strategies, 'auto', 'streaming'), l), /strategies\[0\] is 'streaming'/],
      [(l) => (l.sparsePatterns.pop(), l), /sparsePatterns\[2\] is nothing in the module/],
      [
        (l) => (l.arrays.push('extra'), l),
        new RegExp(`arrays\\[${arrays}\\] is 'extra' in the module, nothing in`),
      ],
      [(l) => ({ ...l, slots: undefined }), /it has no 'slots' list/],
    ];
    for (const [edit, message] of cases) {
      assert.throws(() => checkBlockLayout(withLayout(modules.simd, edit)), message);
    }
    const old = Object.create(modules.simd, { _callBlockLayout: { value: undefined } });
    assert.throws(() => checkBlockLayout(old), /it exports no _callBlockLayout\(\)/);
  });
});
