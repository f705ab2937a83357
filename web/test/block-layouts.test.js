// One schema per wasm seam: the JavaScript lists of the call, model and trainer blocks and the
// .d.ts unions are generated from the bindings' X-macro headers (web/scripts/block-layouts.mjs).
// A generated copy that drifts from its header fails here, and so do the facts that other files
// repeat about those lists (the architectures attnlens/models names, where logit options run).

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';

import { CALL_BLOCK_LAYOUT, CALL_BLOCK_SECTIONS } from '../src/call-block-layout.js';
import { loadWasmModule } from '../src/loader.js';
import { SUPPORTED_MODEL_TYPES } from '../src/models/index.js';
import { MODEL_BLOCK_LAYOUT } from '../src/models/model-block-layout.js';
import { TRAINER_BLOCK_LAYOUT } from '../src/train/trainer-block-layout.js';
import { LOGIT_OPTIONS } from '../src/vocabulary.js';
import { hasLogitTerms } from '../src/webgpu/logit-terms.js';
import { maskData } from '../src/webgpu/mask-data.js';
import { driftedFiles, macroNames, macroSections } from '../scripts/block-layouts.mjs';

const read = (path) => readFileSync(new URL(path, import.meta.url), 'utf8');
// Plain copies: the generated lists are frozen, the module's come through embind.
const plain = (value) => JSON.parse(JSON.stringify(value));

describe('block layouts', () => {
  it('every generated copy is what its header gives', async () => {
    assert.deepEqual(await driftedFiles(), []);
  });

  it('reads an X-macro list in order, without its comments, and notices a change', () => {
    const header = [
      '#define LIST(X)            \\',
      '  /* Shape. */             \\',
      '  X(kHeads, "heads")       \\',
      '  X(kScale, "scale") /* NaN: default */ \\',
      '  X(kQ, "q")',
      'int after = X(kNot, "not");',
    ].join('\n');
    assert.deepEqual(macroNames(header, 'LIST'), ['heads', 'scale', 'q']);
    const swapped = header.replace('kHeads, "heads"', 'kHeads, "scale"');
    assert.notDeepEqual(macroNames(swapped, 'LIST'), macroNames(header, 'LIST'));
    assert.throws(() => macroNames(header, 'OTHER'), /no #define OTHER\(X\)/);
  });

  it('reads the sections of a list from its section comments', () => {
    const header = [
      '#define LIST(X)            \\',
      '  X(kFirst, "first")       \\',
      '  /* Shape. Zero: "same as". */ \\',
      '  X(kHeads, "heads")       \\',
      '  X(kKvHeads, "kvHeads") /* Grouped. not a section */ \\',
      '  /* Results, written by the call. */ \\',
      '  X(kQ, "q")',
    ].join('\n');
    assert.deepEqual(macroSections(header, 'LIST'), {
      shape: ['heads', 'kvHeads'],
      results: ['q'],
    });
  });

  it("the call block's sections divide its slots in order, the shape first", () => {
    const { shape, options, results } = CALL_BLOCK_SECTIONS.slots;
    assert.deepEqual([...shape, ...options, ...results], [...CALL_BLOCK_LAYOUT.slots]);
    assert.deepEqual(shape.slice(0, 2), ['heads', 'queryLength']);
    assert.equal(shape.at(-1), 'kvHeads');
    // call-block.js takes its shape slots from the section instead of naming them again.
    const writer = read('../src/call-block.js');
    for (const name of shape) assert.doesNotMatch(writer, new RegExp(`'${name}'`), name);
  });

  it('the generated lists are the ones the built modules export', async () => {
    const module = await loadWasmModule('simd', { models: true });
    assert.deepEqual(plain(module._callBlockLayout()), plain(CALL_BLOCK_LAYOUT));
    assert.deepEqual(plain(module._modelBlockLayout()), plain(MODEL_BLOCK_LAYOUT));
    assert.deepEqual(plain(module._trainerBlockLayout()), plain(TRAINER_BLOCK_LAYOUT));
  });
});

describe('facts repeated from one source', () => {
  it('attnlens/models and models.d.ts name every supported model_type', () => {
    const header = read('../src/models/index.js');
    const listed = header.match(/model_type: ([\w, \n/]+?) \(SUPPORTED_MODEL_TYPES/)?.[1];
    assert.ok(listed, 'src/models/index.js names its model types');
    assert.deepEqual(listed.replace(/\n\/\/ /g, ' ').split(', '), [...SUPPORTED_MODEL_TYPES]);
    const types = read('../models.d.ts');
    const union = types.match(/export type ModelType =\s*([^;]+);/)?.[1];
    assert.deepEqual(
      Array.from(union.matchAll(/'([^']+)'/g), (match) => match[1]),
      [...SUPPORTED_MODEL_TYPES],
    );
  });

  it('every logit option reaches the WebGPU kernels', () => {
    const shape = { heads: 2, kvHeads: 2, queryLength: 3, keyLength: 3, headDim: 2 };
    const q = new Float32Array(12).fill(0.5);
    const withOption = {
      softcap: { softcap: 30 },
      bias: { bias: new Float32Array(9) },
      alibi: { alibi: true },
      alibiSlopes: { alibiSlopes: new Float32Array([0.5, 0.25]) },
      lsh: { lsh: { buckets: 2, rounds: 1, seed: 1 } },
      topK: { topK: 1 },
    };
    assert.deepEqual(Object.keys(withOption).sort(), [...LOGIT_OPTIONS].sort());
    const backend = read('../src/webgpu/webgpu-backend.js');
    for (const name of LOGIT_OPTIONS) {
      const options = { temperature: 1, ...withOption[name] };
      const reached =
        hasLogitTerms(options) ||
        maskData(options, shape, { q, k: q }).fields.lshRounds > 0 ||
        new RegExp(`${name}: options\\.${name}`).test(backend);
      assert.ok(reached, `${name} is read by the WebGPU backend`);
    }
  });
});
