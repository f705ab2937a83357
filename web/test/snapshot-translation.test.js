// A translation's snapshot (src/snapshot/format.js, "translation"): written from the tiny
// Marian's real translate() (tests/models/make_tiny_marian.py), read back with the same numbers,
// and refused field by field when a file gets it wrong.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { loadModel } from '../src/models/index.js';
import { readSnapshot, translationHead } from '../src/snapshot/read.js';
import { translationRun, writeSnapshot } from '../src/snapshot/write.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const TEXT = '我爱自然语言处理';
let folder, model, result, written;

before(async () => {
  folder = mkdtempSync(join(tmpdir(), 'attnlens-translation-snapshot-'));
  execFileSync('/usr/bin/python3', [join(REPO, 'tests/models/make_tiny_marian.py'), folder]);
  model = await loadModel(join(folder, 'marian.safetensors'));
  result = await model.translate(TEXT, { beams: 1, maxTokens: 6 });
  const eos = model.tokenizer.special.eos.id;
  const run = translationRun({
    model: { id: 'Helsinki-NLP/opus-mt-zh-en', revision: 'main', ...model.info },
    text: TEXT,
    source: result.source.tokens,
    encoderAttention: result.encoderAttention,
    steps: result.steps.map((s) => ({ ...s, special: s.id === eos })),
    translation: result.text,
  });
  written = writeSnapshot(run, { layers: [0, 1], heads: [0, 1, 2, 3] });
});
after(() => {
  model?.dispose();
  rmSync(folder, { recursive: true, force: true });
});

test('a translation reads back with its tokens and every cross-attention row', () => {
  const snapshot = readSnapshot(JSON.stringify(written));
  const { translation } = snapshot;
  assert.equal(translation.text, result.text);
  assert.equal(translation.decoderLayers, 2);
  assert.equal(translation.target.length, result.steps.length);
  assert.equal(snapshot.n, result.source.tokens.length);
  const n = snapshot.n;
  result.steps.forEach((step, t) => {
    for (const [l, h] of [
      [0, 0],
      [1, 3],
    ]) {
      const head = translationHead(snapshot, l, h);
      const row = head.weights.subarray(t * n, (t + 1) * n);
      const want = step.crossAttention.subarray((l * 4 + h) * n, (l * 4 + h + 1) * n);
      assert.deepEqual([...row], [...want]);
    }
  });
  assert.equal(
    readSnapshot(JSON.stringify({ ...written, translation: undefined })).translation,
    null,
  );
});

test('a translation that is wrong anywhere is refused by field', () => {
  const bad = (change) => {
    const copy = structuredClone(written);
    change(copy.translation);
    return () => readSnapshot(JSON.stringify(copy));
  };
  assert.throws(
    bad((t) => (t.target = [])),
    { parameter: 'snapshot.translation.target' },
  );
  assert.throws(
    bad((t) => (t.target[0].special = 'no')),
    {
      parameter: 'snapshot.translation.target[0].special',
    },
  );
  assert.throws(
    bad((t) => t.target.push({ text: 'x', special: false })),
    {
      parameter: 'snapshot.translation.cross.data',
    },
  );
  assert.throws(
    bad((t) => (t.layers = [0, 2])),
    { parameter: 'snapshot.translation.layers[1]' },
  );
  assert.throws(
    bad((t) => (t.heads = [1, 0])),
    { parameter: 'snapshot.translation.heads' },
  );
  assert.throws(
    bad((t) => (t.decoderLayers = 0)),
    {
      parameter: 'snapshot.translation.decoderLayers',
    },
  );
  assert.throws(
    bad((t) => (t.cross.dtype = 'float16')),
    { parameter: 'snapshot.translation.cross' },
  );
  assert.throws(
    bad((t) => (t.text = 5)),
    { parameter: 'snapshot.translation.text' },
  );
  // A row that no longer sums to 1: its first weight halved.
  assert.throws(
    bad((t) => {
      const bytes = Buffer.from(t.cross.data, 'base64');
      bytes.writeFloatLE(bytes.readFloatLE(0) / 2, 0);
      t.cross.data = bytes.toString('base64');
    }),
    { parameter: 'snapshot.translation.cross[0]' },
  );
  assert.throws(() => readSnapshot(JSON.stringify({ ...written, translation: 'x' })), {
    parameter: 'snapshot.translation',
  });
});
