// Marian end to end: a tiny opus-mt-layout model (tests/models/make_tiny_marian.py: trained
// source.spm / target.spm, vocab.json, config.json, both weight formats) loaded from its folder
// and translated, against the PyTorch reference written from the transformers library's Marian
// semantics (tests/models/marian_reference.py): the encoder's self-attention, every greedy
// step's logits, decoder self-attention row and cross-attention row, the greedy output, beam
// search's output and score; streaming, cancelling, and bad input.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { describeModel, loadModel } from '../src/models/index.js';
import { sinusoidalPositions } from '../src/models/architectures/marian.js';
import { assertClose } from './support/tiny-models.mjs';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
// float32 through 2 + 2 post-LN layers against float64 (measured worst: see the hand-back).
const ATTENTION_TOL = { abs: 5e-6 };
const LOGIT_TOL = { abs: 5e-5, rel: 2e-5 };

let folder;
let reference;
const models = {};

before(async () => {
  folder = mkdtempSync(join(tmpdir(), 'attnlens-marian-model-'));
  execFileSync('/usr/bin/python3', [join(REPO, 'tests/models/make_tiny_marian.py'), folder]);
  reference = JSON.parse(readFileSync(join(folder, 'marian-reference.json'), 'utf8'));
  for (const format of ['safetensors', 'bin']) {
    models[format] = await loadModel(join(folder, `marian.${format}`));
  }
});

after(() => {
  for (const model of Object.values(models)) model.dispose();
});

test('the config and files load as a Marian of two stacks', () => {
  const { info } = models.safetensors;
  assert.equal(info.architecture, 'marian');
  assert.equal(info.layers, 4);
  assert.equal(info.encoderLayers, 2);
  assert.deepEqual(info.layerMasks, ['global', 'global', 'causal', 'causal']);
});

test('describeModel says, before any weight is read, that it translates', async () => {
  const about = await describeModel(join(folder, 'marian.safetensors'));
  assert.equal(about.modelType, 'marian');
  assert.equal(about.encoderLayers, models.safetensors.info.encoderLayers);
  assert.equal(about.vision, undefined);
});

test('greedy translation matches the reference at every step, either weight file', async () => {
  for (const [format, model] of Object.entries(models)) {
    for (const expected of reference.sources) {
      const label = `${format} ${expected.text}`;
      const result = await model.translate(expected.text, {
        maxTokens: reference.maxNewTokens,
        beams: 1,
        returnLogits: true,
      });
      assert.deepEqual(result.source.ids, expected.inputIds, `${label}: source ids`);
      assert.deepEqual(result.ids, expected.greedy, `${label}: greedy ids`);
      assertClose(
        result.encoderAttention,
        expected.encoderAttention.flat(3),
        ATTENTION_TOL,
        `${label}: encoder attention`,
      );
      assert.equal(result.steps.length, expected.steps.length);
      result.steps.forEach((step, i) => {
        const want = expected.steps[i];
        assertClose(step.logits, want.logits, LOGIT_TOL, `${label}: logits of step ${i}`);
        assertClose(
          step.selfAttention,
          want.selfAttention.flat(2),
          ATTENTION_TOL,
          `${label}: self row ${i}`,
        );
        assertClose(
          step.crossAttention,
          want.crossAttention.flat(2),
          ATTENTION_TOL,
          `${label}: cross row ${i}`,
        );
      });
    }
  }
});

test('beam search gives the reference beam and score', async () => {
  for (const expected of reference.sources) {
    const result = await models.safetensors.translate(expected.text, {
      maxTokens: reference.maxNewTokens,
    });
    assert.equal(result.beams, 3, "config.json's num_beams");
    assert.deepEqual(result.ids, expected.beam, expected.text);
    assert.ok(Math.abs(result.score - expected.beamScore) < 1e-4, `${result.score}`);
  }
});

test('tokens stream through onToken with the rows the result holds; a signal cancels', async () => {
  const model = models.safetensors;
  const { text } = reference.sources[1];
  const streamed = [];
  const result = await model.translate(text, {
    beams: 1,
    maxTokens: 6,
    onToken: (step) => streamed.push(step),
  });
  assert.deepEqual(
    streamed.map((s) => s.id),
    result.steps.map((s) => s.id),
  );
  streamed.forEach((step, i) => {
    assert.equal(step.text, result.steps[i].text);
    assertClose(step.crossAttention, result.steps[i].crossAttention, ATTENTION_TOL, `row ${i}`);
  });
  const controller = new AbortController();
  let seen = 0;
  await assert.rejects(
    model.translate(text, {
      beams: 1,
      maxTokens: 6,
      signal: controller.signal,
      onToken: () => {
        if (++seen === 2) controller.abort();
      },
    }),
    { name: 'AbortError' },
  );
  assert.equal(seen, 2);
  // The model stays usable.
  assert.deepEqual((await model.translate(text, { beams: 1, maxTokens: 6 })).ids, result.ids);
});

test('bad input gets named errors', async () => {
  const model = models.safetensors;
  const fails = (text, options, parameter) =>
    assert.rejects(model.translate(text, options), (error) => {
      assert.equal(error.parameter, parameter, error.message);
      return true;
    });
  await fails('', {}, 'text');
  await fails('   ', {}, 'text');
  await fails(42, {}, 'text');
  await fails('我爱', { beams: 0 }, 'beams');
  await fails('我爱', { beams: 17 }, 'beams');
  await fails('我爱', { maxTokens: 0 }, 'maxTokens');
  await fails('我爱', { maxTokens: 32 }, 'maxTokens');
  await fails('我爱', { onToken: 'yes' }, 'onToken');
  await fails('我爱', { temperature: 1 }, 'options');
  await fails('我爱自然语言处理'.repeat(20), {}, 'text');
  await assert.rejects(model.run('我爱'), { parameter: 'run' });
  await assert.rejects(model.headScores(), { parameter: 'headScores' });
  await assert.rejects(model.headEffects('我爱'), { parameter: 'headEffects' });
});

test('a checkpoint without position tables gets them computed, the same results', async () => {
  const model = await loadModel(join(folder, 'marian-no-positions'));
  try {
    const expected = reference.sources[0];
    const result = await model.translate(expected.text, {
      maxTokens: reference.maxNewTokens,
      beams: 1,
      returnLogits: true,
    });
    assert.deepEqual(result.ids, expected.greedy);
    result.steps.forEach((step, i) => {
      assertClose(step.logits, expected.steps[i].logits, LOGIT_TOL, `logits of step ${i}`);
    });
  } finally {
    model.dispose();
  }
});

test("the position table is Marian's: sin in the first half, cos in the second", () => {
  const table = sinusoidalPositions(3, 6);
  const row = (pos) => Array.from(table.subarray(pos * 6, pos * 6 + 6));
  assert.deepEqual(row(0), [0, 0, 0, 1, 1, 1]);
  const angles = [1, 1 / 10000 ** (2 / 6), 1 / 10000 ** (4 / 6)];
  row(1).forEach((value, j) => {
    const expected = j < 3 ? Math.sin(angles[j]) : Math.cos(angles[j - 3]);
    assert.ok(Math.abs(value - expected) < 1e-7, `column ${j}`);
  });
});

test('broken Marian folders are refused naming the file and the field', async () => {
  const variant = (edit) => {
    const copy = mkdtempSync(join(tmpdir(), 'attnlens-marian-bad-'));
    cpSync(join(folder, 'marian.safetensors'), copy, { recursive: true });
    edit(copy);
    return copy;
  };
  const editConfig = (edit) => (copy) => {
    const config = JSON.parse(readFileSync(join(copy, 'config.json'), 'utf8'));
    writeFileSync(join(copy, 'config.json'), JSON.stringify(edit(config)));
  };
  const refused = async (edit, parameter, message) => {
    const copy = variant(edit);
    try {
      await assert.rejects(loadModel(copy), (error) => {
        assert.equal(error.parameter, parameter, error.message);
        assert.match(error.message, message);
        return true;
      });
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  };
  await refused((copy) => rmSync(join(copy, 'target.spm')), 'target.spm', /missing/);
  await refused(
    (copy) => writeFileSync(join(copy, 'source.spm'), Uint8Array.of(0x0a, 0xff, 0xff, 0x7f)),
    'source.spm',
    /past the end/,
  );
  await refused(
    (copy) => writeFileSync(join(copy, 'vocab.json'), '{"<unk>": 1e9}'),
    'vocab.json',
    /not an id/,
  );
  await refused(
    (copy) =>
      writeFileSync(
        join(copy, 'vocab.json'),
        JSON.stringify({ '</s>': 0, '<unk>': 1, '<pad>': 500 }),
      ),
    'vocab.json',
    /more than the model's vocabulary/,
  );
  await refused(
    editConfig((c) => ({ ...c, normalize_before: true })),
    'config.json',
    /normalize_before/,
  );
  await refused(
    editConfig((c) => ({ ...c, decoder_attention_heads: 2 })),
    'config.json',
    /decoder_attention_heads \(2\) differ/,
  );
  await refused(
    editConfig((c) => ({ ...c, bad_words_ids: [[9999]] })),
    'config.json',
    /bad_words_ids/,
  );
  await refused(
    editConfig((c) => ({ ...c, decoder_start_token_id: -1 })),
    'config.json',
    /decoder_start_token_id/,
  );
});
