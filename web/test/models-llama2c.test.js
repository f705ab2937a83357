// llama2.c checkpoints through loadModel(): the bundled stories260K (the original bytes of
// karpathy's model and tok512.bin) against an independent float64 reference of run.c's
// semantics (tests/models/llama2c_reference.py: its encode(), interleaved RoPE, RMSNorm, the
// SiLU gate): ids, every layer's and head's attention and the logits; the same model re-exported
// as version 1 and version 2 (int8) files; the greedy continuation from BOS, and the same
// continuation built by appending predictions[0].text; and every way a checkpoint arrives
// (bundled name, path, folder, File objects, URL, Hub path).
//
// Tolerances (float32 against float64 through five layers; measured worst 6.4e-6 attention,
// 1.7e-5 logits): attention abs 2e-5; logits abs 5e-5 + rel 2e-5, as models-run.test.js. The
// version 2 run is checked against the reference of the dequantised weights.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { createAttention } from '../src/index.js';
import { listModelFiles, loadModel, loadModelFiles } from '../src/models/index.js';
import { assertClose, rejectsWith } from './support/tiny-models.mjs';
import { startHubServer } from './support/hub-server.mjs';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const BUNDLED = join(REPO, 'web/src/models/bundled/stories260K');
const MODEL = join(BUNDLED, 'stories260K.bin');
const TOKENIZER = join(BUNDLED, 'tok512.bin');
const ATTENTION_TOL = { abs: 2e-5 };
const LOGIT_TOL = { abs: 5e-5, rel: 2e-5 };
const TEXTS = [
  'Once upon a time, there was a little girl named Lily.',
  'Tom said: "Hi!"\n\nThe cat 🐱 sat   on the mat.\tThen café, naïve, 你好.',
];
// run.c's encode() against the tokenizer.json made from tok512.bin: spaces in runs, tabs and
// newlines, punctuation, accents (composed and combining), CJK and emoji (byte fallback), an
// empty text, a lone space.
const ENCODE_TEXTS = [
  '',
  ' ',
  'Lily and Ben',
  '  two  spaces   three',
  'tab\there\nnewline\r\n\nend',
  '"Wow!" she said. "It\'s big?" - yes; (ok) [no] {x} 3.14 100%',
  'café naïve résumé e\u0301',
  '你好，世界',
  '🐱🐶 🦄!',
  'ÀÉÎÕÜ ß ø Ω Ж',
  'The the THE tHe',
];
const STORY =
  'Once upon a time, there was a little girl named Lily. She loved to play outside in the park';
const GREEDY_STEPS = 32;

let attention;
let work;
let reference;
let referenceV2;

function runReference(request) {
  const answer = execFileSync(
    '/usr/bin/python3',
    [join(REPO, 'tests/models/llama2c_reference.py')],
    {
      input: JSON.stringify({ tokenizer: TOKENIZER, texts: TEXTS, ...request }),
      maxBuffer: 256 * 1024 * 1024,
    },
  );
  return JSON.parse(answer.toString('utf8'));
}

before(async () => {
  attention = await createAttention({ backend: 'wasm-simd', models: true });
  work = mkdtempSync(join(tmpdir(), 'attnlens-llama2c-'));
  reference = runReference({
    model: MODEL,
    encode: ENCODE_TEXTS,
    greedy: GREEDY_STEPS,
    write: { version: 1, path: join(work, 'v1.bin') },
  });
  referenceV2 = runReference({
    model: MODEL,
    write: { version: 2, path: join(work, 'v2.bin'), group_size: 32 },
  });
});

after(() => attention.dispose());

async function checkAgainst(model, expected, label) {
  for (const [i, text] of TEXTS.entries()) {
    const result = await model.run(text, { returnLogits: true });
    const { info } = model;
    const n = result.tokens.length;
    assert.deepEqual(
      result.tokens.map((t) => t.id),
      expected.cases[i].ids,
      `${label}: ids of ${JSON.stringify(text)}`,
    );
    const dims = { layer: info.layers, head: info.heads, query: n, key: n };
    assertClose(
      result.attention,
      expected.cases[i].attention,
      ATTENTION_TOL,
      `${label} attention`,
      dims,
    );
    assertClose(result.logits, expected.cases[i].logits, LOGIT_TOL, `${label} logits`, {
      position: n,
      token: info.vocab,
    });
  }
}

test('the bundled files are the published stories260K bytes (sha256 in their README)', () => {
  const readme = readFileSync(join(BUNDLED, 'README.md'), 'utf8');
  for (const file of [MODEL, TOKENIZER]) {
    const digest = createHash('sha256').update(readFileSync(file)).digest('hex');
    assert.ok(
      readme.includes(digest),
      `${file}: sha256 ${digest} is not the one its README states`,
    );
  }
});

test('stories260K by name: ids, every layer and head, logits against run.c semantics', async () => {
  const model = await loadModel('stories260K', { attention });
  assert.equal(model.source.kind, 'bundled');
  assert.equal(model.source.version, 0);
  assert.deepEqual(
    { layers: model.info.layers, heads: model.info.heads, kvHeads: model.info.kvHeads },
    { layers: 5, heads: 8, kvHeads: 4 },
  );
  assert.equal(model.info.parameters, 260032);
  await checkAgainst(model, reference, 'stories260K');
  model.dispose();
});

test("tok512.bin's tokenizer.json encodes as run.c's encode() does", async () => {
  const model = await loadModel('stories260K', { attention });
  ENCODE_TEXTS.forEach((text, i) => {
    assert.deepEqual(
      model.tokenizer.encode(text).ids,
      reference.encoded[i],
      `ids of ${JSON.stringify(text)}`,
    );
  });
  model.dispose();
});

test('version 1 and version 2 (int8, dequantised on load) files of the same model', async () => {
  const v1 = await loadModel(join(work, 'v1.bin'), { attention, tokenizer: TOKENIZER });
  assert.equal(v1.source.version, 1);
  await checkAgainst(v1, reference, 'version 1');
  v1.dispose();
  const v2 = await loadModel(join(work, 'v2.bin'), { attention, tokenizer: TOKENIZER });
  assert.equal(v2.source.version, 2);
  await checkAgainst(v2, referenceV2, 'version 2');
  v2.dispose();
});

test('the greedy continuation from BOS alone, in the reference and in attnlens', async () => {
  assert.ok(reference.greedy.text.startsWith(STORY), reference.greedy.text);
  const model = await loadModel('stories260K', { attention });
  const ids = [1];
  for (let step = 0; step < GREEDY_STEPS; step++) {
    const text = model.tokenizer.decode(ids, { skipSpecialTokens: true });
    const result = await model.run(text);
    assert.deepEqual(
      result.tokens.map((t) => t.id),
      ids,
      `step ${step}: ${JSON.stringify(text)} encodes to the ids it was decoded from`,
    );
    ids.push(result.predictions[0].id);
  }
  assert.deepEqual(ids, reference.greedy.ids);
  assert.ok(model.tokenizer.decode(ids, { skipSpecialTokens: true }).startsWith(STORY));
  model.dispose();
});

test('the same continuation built by appending predictions[0].text to the text', async () => {
  const model = await loadModel('stories260K', { attention });
  let text = '';
  for (let step = 0; step < GREEDY_STEPS; step++) {
    text += (await model.run(text)).predictions[0].text;
  }
  assert.ok(text.startsWith(STORY), JSON.stringify(text));
  model.dispose();
});

test('a path, a folder without config.json, File objects, a URL and a Hub path', async () => {
  const folder = join(work, 'folder');
  mkdirSync(folder);
  copyFileSync(MODEL, join(folder, 'stories260K.bin'));
  copyFileSync(TOKENIZER, join(folder, 'tok512.bin'));
  const hubRoot = join(work, 'hub');
  const repo = join(hubRoot, 'karpathy', 'tinyllamas', 'main');
  mkdirSync(join(repo, 'stories260K'), { recursive: true });
  copyFileSync(MODEL, join(repo, 'stories260K', 'stories260K.bin'));
  copyFileSync(TOKENIZER, join(repo, 'stories260K', 'tok512.bin'));
  copyFileSync(MODEL, join(repo, 'stories15M.bin')); // no tokenizer beside it
  const hub = await startHubServer({ root: hubRoot });
  const files = [
    new File([readFileSync(MODEL)], 'stories260K.bin'),
    new File([readFileSync(TOKENIZER)], 'tok512.bin'),
  ];
  const hubFile = `${hub.url}/karpathy/tinyllamas/resolve/main/stories260K/stories260K.bin`;
  try {
    const sources = [
      [MODEL, { kind: 'file' }],
      [folder, { kind: 'file' }],
      [files, { kind: 'files' }],
      [hubFile, { kind: 'url' }],
      [hubFile, { kind: 'url' }, { tokenizer: 'tok512.bin' }],
      ['karpathy/tinyllamas/stories260K/stories260K.bin', { kind: 'hub' }, { hubUrl: hub.url }],
    ];
    const expected = await loadModelFiles('stories260K');
    const embedding = expected.tensors.readFloat32('model.embed_tokens.weight');
    for (const [source, describe, options = {}] of sources) {
      const loaded = await loadModelFiles(source, { cache: false, ...options });
      assert.equal(loaded.source.kind, describe.kind);
      assert.equal(loaded.source.format, 'llama2.c');
      assert.deepEqual(loaded.config, expected.config);
      assert.deepEqual(loaded.tokenizer, expected.tokenizer);
      assert.deepEqual(loaded.tensors.readFloat32('model.embed_tokens.weight'), embedding);
    }
    const listed = await listModelFiles('karpathy/tinyllamas/stories260K/stories260K.bin', {
      hubUrl: hub.url,
      cache: false,
    });
    assert.deepEqual(listed.files, [
      { name: 'stories260K.bin', size: 1056540 },
      { name: 'tok512.bin', size: 6227 },
    ]);
    assert.equal(listed.config.num_hidden_layers, 5);
    await rejectsWith(
      loadModelFiles('karpathy/tinyllamas/stories15M.bin', { hubUrl: hub.url, cache: false }),
      { name: 'Error', code: 'not_found', parameter: 'tokenizer', message: /tok512\.bin/ },
    );
  } finally {
    await hub.close();
  }
});

test('the tokenizer option: for llama2.c checkpoints only, not for a bundled model', async () => {
  await rejectsWith(loadModelFiles('stories260K', { tokenizer: TOKENIZER }), {
    name: 'TypeError',
    code: 'invalid_argument',
    parameter: 'tokenizer',
  });
  await rejectsWith(loadModelFiles('gpt2', { tokenizer: TOKENIZER, fetch: () => {} }), {
    name: 'TypeError',
    code: 'invalid_argument',
    parameter: 'tokenizer',
  });
});
