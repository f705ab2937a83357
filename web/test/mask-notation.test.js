// The mask notation (src/mask-notation.js) that the demo's URL, the widget's `mask` attribute and
// the CLI's --mask share: every form parses, writes back the same way, and becomes options the
// engine's own checks accept; every mistake is a RangeError naming the part.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { random } from '../scripts/random.js';
import { checkAttention, checkMaskMatrix } from '../src/checks.js';
import {
  MASK_PART_NAMES,
  MASK_PATTERNS,
  defaultMask,
  formatMask,
  alignedKey,
  maskForMode,
  maskOptions,
  parseMask,
} from '../src/mask-notation.js';

const FIELDS_OF = {
  global: [],
  local: ['window'],
  dilated: ['window', 'dilation'],
  strided: ['stride'],
  fixed: ['stride', 'summary'],
  align: ['window'],
  patch: ['patchWindow'],
};
const usesField = (pattern, field) => FIELDS_OF[pattern].includes(field);

// Texts in the form formatMask() writes: parsing and writing back gives the same text.
const CANONICAL = [
  'global',
  'causal',
  'local:0',
  'local:5',
  'dilated:2:3',
  'strided:1',
  'strided:7',
  'fixed:4:1',
  'fixed:4:4',
  'tokens:0',
  'tokens:0,3,9',
  'causal+local:2',
  'causal+dilated:1:2+tokens:0,5',
  'strided:3+tokens:0',
  'causal+fixed:3:2+tokens:2',
  'align:0',
  'align:2+pad:1,4',
  'pad:0',
  'causal+local:1+tokens:0+pad:3',
  `local:${Number.MAX_SAFE_INTEGER}`,
  'topk:1',
  'causal+local:3+topk:2',
  'lsh:2:1:0',
  'causal+strided:3+topk:4+lsh:8:3:42+tokens:0',
  'align:1+topk:2+pad:0',
  'patch:1',
  'patch:3+tokens:5',
  'patch:7+pad:2',
];

// Other spellings of the same masks: aliases, case, spaces, order, repeats, left-out numbers.
const SPELLINGS = [
  ['', 'global'],
  ['full', 'global'],
  ['global+causal', 'causal'],
  ['window:3', 'local:3'],
  ['CAUSAL + Local:2', 'causal+local:2'],
  ['local:2+causal', 'causal+local:2'],
  ['causal++local:2+', 'causal+local:2'],
  ['local', 'local:2'],
  ['dilated', 'dilated:2:2'],
  ['dilated:4', 'dilated:4:2'],
  ['strided', 'strided:3'],
  ['fixed', 'fixed:3:1'],
  ['fixed:5', 'fixed:5:1'],
  ['local:007', 'local:7'],
  ['global-tokens:2,0', 'tokens:0,2'],
  ['tokens:3,1,3', 'tokens:1,3'],
  ['tokens:3+tokens:1', 'tokens:1,3'],
  ['tokens:1,,2', 'tokens:1,2'],
  ['pad:4,1,4', 'pad:1,4'],
  ['align', 'align:2'],
  ['topk', 'topk:3'],
  ['TopK:5+causal', 'causal+topk:5'],
  ['lsh', 'lsh:4:1:0'],
  ['lsh:6', 'lsh:6:1:0'],
  ['lsh:6:2+topk:1', 'topk:1+lsh:6:2:0'],
];

function assertMaskError(text, message, part) {
  assert.throws(
    () => parseMask(text),
    (error) => {
      assert.ok(error instanceof RangeError, `${text}: ${error}`);
      assert.equal(error.code, 'out_of_range');
      assert.equal(error.parameter, 'mask');
      if (part !== undefined) assert.equal(error.part, part);
      assert.match(error.message, /^mask: /);
      assert.match(error.message, message);
      return true;
    },
  );
}

describe('mask notation', () => {
  it('writes back every canonical form as it was written', () => {
    for (const text of CANONICAL) assert.equal(formatMask(parseMask(text)), text);
  });

  it('round-trips the mask of every form: parse(format(parse(text))) is parse(text)', () => {
    for (const text of [...CANONICAL, ...SPELLINGS.map(([spelling]) => spelling)]) {
      const mask = parseMask(text);
      assert.deepEqual(parseMask(formatMask(mask)), mask, text);
    }
  });

  it('round-trips every mask it can hold, numbers up to MAX_SAFE_INTEGER included', () => {
    // Seeded random masks: each field at a small value, a large one or the largest safe integer
    // (whose decimal form is the longest a number may have and still be read back exactly).
    const next = random(2024);
    const pick = (values) => values[Math.floor(((next() + 1) / 2) * values.length)];
    const number = (least) => pick([least, least + 1, 7, 1e6, 2 ** 40, Number.MAX_SAFE_INTEGER]);
    for (let i = 0; i < 2000; i++) {
      const stride = number(1);
      const mask = {
        ...defaultMask(),
        pattern: pick(MASK_PATTERNS),
        causal: next() > 0,
        window: number(0),
        dilation: number(1),
        stride,
        summary: Math.min(number(1), stride),
        globalTokens: [...new Set([number(0), number(0), number(0)])].sort((a, b) => a - b),
      };
      if (next() > 0) mask.globalTokens = [];
      if (next() > 0) mask.topK = number(1);
      if (next() > 0) {
        const buckets = 2 * pick([1, 2, 7, 2 ** 40]);
        Object.assign(mask, { buckets, rounds: number(1), hashSeed: number(0) });
      }
      const text = formatMask(mask);
      const back = parseMask(text);
      // The numbers of the other patterns are not written: they come back as their defaults.
      for (const field of ['window', 'dilation', 'stride', 'summary']) {
        if (!usesField(mask.pattern, field)) back[field] = mask[field];
      }
      assert.deepEqual(back, mask, text);
      assert.equal(formatMask(parseMask(text)), text, 'written back as it was written');
    }
  });

  it('reads aliases, any case, spaces, repeats and left-out numbers', () => {
    for (const [spelling, canonical] of SPELLINGS) {
      assert.equal(formatMask(parseMask(spelling)), canonical, spelling);
    }
    assert.deepEqual(parseMask(undefined), defaultMask());
    assert.deepEqual(parseMask('global'), defaultMask());
  });

  it('keeps the numbers of the other patterns at their defaults', () => {
    const mask = parseMask('causal+strided:5+tokens:4,1');
    assert.deepEqual(mask, {
      ...defaultMask(),
      pattern: 'strided',
      causal: true,
      stride: 5,
      globalTokens: [1, 4],
    });
    assert.ok(MASK_PATTERNS.includes(mask.pattern));
  });

  it('names every part and alias it reads', () => {
    for (const name of MASK_PART_NAMES) {
      const text = name.endsWith('tokens') || name === 'pad' ? `${name}:1` : name;
      assert.doesNotThrow(() => parseMask(text), text);
    }
    assert.deepEqual(
      [...MASK_PART_NAMES].sort(),
      [
        'causal',
        'dilated',
        'fixed',
        'full',
        'global',
        'global-tokens',
        'local',
        'strided',
        'tokens',
        'window',
        'align',
        'pad',
        'topk',
        'lsh',
        'patch',
        'window2d',
      ].sort(),
    );
  });

  it('rejects unknown parts, naming them', () => {
    assertMaskError('bogus:1', /unknown part "bogus:1" \(expected global, causal, /, 'bogus:1');
    assertMaskError('causal+diagonal', /unknown part "diagonal"/, 'diagonal');
    assertMaskError(':3', /unknown part ":3"/);
    assertMaskError('constructor', /unknown part "constructor"/);
  });

  it('accepts numbers written in digits only', () => {
    for (const value of ['x', '1e3', '0x10', '2.5', '-1', ' 2', '', '1e21', '9007199254740993']) {
      assertMaskError(
        `local:${value}`,
        /local:.*: expected a non-negative integer for the window, got "/,
        `local:${value}`,
      );
    }
  });

  it('rejects numbers below their least value', () => {
    assertMaskError('dilated:2:0', /dilated:2:0: expected a positive integer for the dilation/);
    assertMaskError('strided:0', /expected a positive integer for the stride, got "0"/);
    assertMaskError('fixed:0:1', /expected a positive integer for the stride/);
    assertMaskError('fixed:3:0', /expected a positive integer for the summary/);
    assertMaskError('fixed:3:4', /fixed:3:4: the summary \(4\) must be at most the stride \(3\)/);
    assertMaskError('topk:0', /topk:0: expected a positive integer for the topK, got "0"/);
    assertMaskError('lsh:0', /expected a positive integer for the buckets/);
    assertMaskError('lsh:5', /lsh:5: the buckets must be even/, 'lsh:5');
    assertMaskError('patch:0', /patch:0: expected a positive integer for the patchWindow/);
    assertMaskError('window2d:4', /window2d:4: the window must be odd .* got 4/, 'window2d:4');
    assertMaskError('patch:3:3', /expected at most 1 value after "patch"/);
    assertMaskError('local:1+patch:3', /patch:3: only one local or dilated window/, 'patch:3');
    assertMaskError('lsh:4:0', /expected a positive integer for the rounds/);
  });

  it('rejects extra numbers, a second pattern and empty token lists', () => {
    assertMaskError('local:1:2', /local:1:2: expected at most 1 value after "local"/);
    assertMaskError('causal:1', /causal:1: expected no value after "causal"/);
    assertMaskError('fixed:3:1:1', /expected at most 2 values after "fixed"/);
    assertMaskError(
      'local:1+dilated:2:2',
      /dilated:2:2: only one local or dilated window or sparse pattern can be given \(local:1 is/,
      'dilated:2:2',
    );
    assertMaskError('strided:2+fixed:2:1', /only one local or dilated window or sparse pattern/);
    assertMaskError('topk:2+local:1+topk:3', /topk:3: only one topk can be given \(topk:2 is/);
    assertMaskError('lsh+lsh:2', /only one lsh can be given/, 'lsh:2');
    assertMaskError('lsh:4:1:0:1', /expected at most 3 values after "lsh"/);
    assertMaskError('tokens', /tokens: expected positions after "tokens:"/);
    assertMaskError(
      'global-tokens:',
      /expected positions after "global-tokens:", e.g. global-tokens:0,3/,
    );
    assertMaskError('tokens:1:2', /expected positions/);
    assertMaskError(
      'tokens:1,x',
      /tokens:1,x: expected a non-negative integer for the global token/,
    );
  });
});

describe('maskOptions', () => {
  it('gives the engine options of each pattern', () => {
    const cases = [
      ['global', {}],
      ['causal', { causal: true }],
      ['local:2', { window: 2 }],
      ['dilated:2:3', { window: { before: 2, after: 2, dilation: 3 } }],
      ['strided:4', { sparse: { pattern: 'strided', stride: 4 } }],
      [
        'causal+fixed:4:2+tokens:0,3',
        {
          causal: true,
          sparse: { pattern: 'fixed', stride: 4, summary: 2 },
          globalTokens: [0, 3],
        },
      ],
    ];
    for (const [text, options] of cases)
      assert.deepEqual(maskOptions(parseMask(text)), options, text);
  });

  it('gives top-k and LSH as the engine takes them, top-k fitted to the keys', () => {
    assert.deepEqual(maskOptions(parseMask('causal+topk:2+lsh:6:2:5')), {
      causal: true,
      topK: 2,
      lsh: { buckets: 6, rounds: 2, seed: 5 },
    });
    assert.deepEqual(maskOptions(parseMask('topk:9'), 3, 4), { topK: 4 });
    const cross = maskForMode(parseMask('causal+local:1+topk:2+lsh'), 'cross');
    assert.equal(formatMask(cross), 'topk:2+lsh:4:1:0', 'selections apply between two texts');
  });

  it('fits sizes to the text when given its lengths', () => {
    assert.deepEqual(maskOptions(parseMask('local:50'), 5), { window: 5 });
    assert.deepEqual(maskOptions(parseMask('dilated:9:9'), 3, 4), {
      window: { before: 4, after: 4, dilation: 4 },
    });
    assert.deepEqual(maskOptions(parseMask('fixed:9:6'), 4), {
      sparse: { pattern: 'fixed', stride: 4, summary: 4 },
    });
    assert.deepEqual(maskOptions(parseMask('tokens:1,7'), 5), { globalTokens: [1] });
    assert.deepEqual(maskOptions(parseMask('tokens:7'), 5), {});
  });

  it('spells out an alignment window and key padding per position', () => {
    // 3 target rows over 7 source keys: aligned keys 0, 3, 6, one key either side.
    const { mask } = maskOptions(parseMask('align:1'), 3, 7);
    assert.deepEqual([...mask].join(''), ['1100000', '0011100', '0000011'].join(''));
    assert.deepEqual(
      [0, 1, 2, 3].map((r) => alignedKey(r, 4, 4)),
      [0, 1, 2, 3],
    );
    assert.equal(alignedKey(0, 1, 5), 2, 'a single query is aligned with the middle');
    const { keyValid } = maskOptions(parseMask('pad:0,2,9'), 2, 4);
    assert.deepEqual([...keyValid], [0, 1, 0, 1]);
    assert.deepEqual(maskOptions(parseMask('pad:9'), 2, 4), {}, 'padding past the end is dropped');
    assert.throws(() => maskOptions(parseMask('align:2')), /mask: align:2: needs the texts/);
    assert.throws(() => maskOptions(parseMask('pad:1')), /mask: pad:1: needs the texts/);
  });

  it("spells out a patch window over a picture's grid, the first tokens global", () => {
    // The class token, then 3 x 4 patches; patch:3 reaches one row and column around.
    const patches = { rows: 3, columns: 4, first: 1 };
    const rows = (text) => {
      const { mask, ...rest } = maskOptions(parseMask(text), undefined, undefined, patches);
      assert.doesNotThrow(() => checkMaskMatrix({ queryLength: 13, keyLength: 13, mask }));
      const lines = [];
      for (let i = 0; i < 13; i++) lines.push([...mask.slice(i * 13, i * 13 + 13)].join(''));
      return { lines, rest };
    };
    const { lines, rest } = rows('patch:3');
    assert.deepEqual(rest, {});
    assert.equal(lines[0], '1111111111111', 'the class token sees everything');
    assert.equal(lines[1], '1110011000000', 'patch (0, 0): (0, 0..1), (1, 0..1)');
    assert.equal(lines[7], '1011101110111', 'patch (1, 2): rows 0..2, columns 1..3');
    assert.equal(lines[12], '1000000110011', 'patch (2, 3): rows 1..2, columns 2..3');
    assert.equal(rows('patch:1').lines[6], '1000001000000', 'patch:1 sees itself');
    const tokens = rows('patch:1+tokens:12');
    assert.equal(tokens.lines[12], '1111111111111', 'a global token sees everything');
    assert.equal(tokens.lines[1], '1100000000001', 'and is seen by every patch');
    assert.deepEqual(rows('patch:5+pad:3').rest.keyValid.indexOf(0), 3);
    assert.throws(
      () => maskOptions(parseMask('patch:3'), 5),
      (e) => e instanceof RangeError && /needs a picture's patch grid/.test(e.message),
    );
  });

  it('keeps only what applies between two texts in cross-attention', () => {
    const cross = (text) => formatMask(maskForMode(parseMask(text), 'cross'));
    assert.equal(cross('causal+local:2+tokens:0'), 'global');
    assert.equal(cross('strided:3+pad:1'), 'pad:1');
    assert.equal(cross('align:3+pad:0'), 'align:3+pad:0');
    const self = (text) => formatMask(maskForMode(parseMask(text), 'self'));
    assert.equal(self('align:3+pad:0'), 'local:3+pad:0');
    assert.equal(self('causal+strided:3+tokens:1'), 'causal+strided:3+tokens:1');
  });

  it('fits nothing without lengths', () => {
    assert.deepEqual(maskOptions(parseMask('local:50+tokens:99')), {
      window: 50,
      globalTokens: [99],
    });
  });

  it('gives options the engine accepts for every form, once fitted to the text', () => {
    for (const text of [...CANONICAL, ...SPELLINGS.map(([spelling]) => spelling)]) {
      if (parseMask(text).pattern === 'patch') continue; // on a picture's grid: below
      for (const [queryLength, keyLength] of [
        [1, 1],
        [3, 3],
        [9, 9],
        [2, 7],
      ]) {
        const options = maskOptions(parseMask(text), queryLength, keyLength);
        const at = `${text} at ${queryLength}x${keyLength}`;
        const { topK, lsh, ...positions } = options;
        assert.doesNotThrow(() => checkMaskMatrix({ queryLength, keyLength, ...positions }), at);
        // The selections are options of attention() itself (one head of 2 dimensions here).
        const [q, k] = [queryLength, keyLength].map((n) => new Float32Array(2 * n));
        assert.doesNotThrow(() => checkAttention(q, k, k, { heads: 1, headDim: 2, topK, lsh }), at);
      }
    }
  });
});
