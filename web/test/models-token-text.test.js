// Spans and predicted text through loadModel() and model.run(), for a model with a Llama 2
// tokenizer (SentencePiece BPE with byte fallback, derived from stories260K's tok512.bin by
// tests/models/spm_tokenizers.py): every token's span is its piece of the text, and appending a
// prediction's text to the text gives the tokenizer's decode of the ids with that token added.
// The weights are random (a 1-layer llama): this checks text, not what a model computes.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { Tokenizer } from '@huggingface/tokenizers';
import { createAttention } from '../src/index.js';
import { loadModel } from '../src/models/index.js';
import { writeSafetensors } from '../src/models/files/safetensors.js';
import { tensor } from './support/helpers.js';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const out = mkdtempSync(join(tmpdir(), 'attnlens-token-text-'));
let attention;
let model;
let library; // the tokenizer library itself, to decode with

// A 1-layer llama of width 16 over the 512-token vocabulary, tied embeddings.
function writeTinyLlama(folder) {
  const [vocab, hidden, inner, heads, kvHeads] = [512, 16, 32, 2, 1];
  const headDim = hidden / heads;
  writeFileSync(
    join(folder, 'config.json'),
    JSON.stringify({
      model_type: 'llama',
      architectures: ['LlamaForCausalLM'],
      hidden_size: hidden,
      intermediate_size: inner,
      num_hidden_layers: 1,
      num_attention_heads: heads,
      num_key_value_heads: kvHeads,
      vocab_size: vocab,
      max_position_embeddings: 64,
      rms_norm_eps: 1e-5,
      hidden_act: 'silu',
      tie_word_embeddings: true,
      bos_token_id: 1,
      eos_token_id: 2,
    }),
  );
  let seed = 1;
  const f32 = (...shape) => ({
    dtype: 'F32',
    shape,
    data: tensor(
      shape.reduce((a, b) => a * b),
      seed++,
    ),
  });
  const layer = 'model.layers.0.';
  const weights = {
    'model.embed_tokens.weight': f32(vocab, hidden),
    [`${layer}self_attn.q_proj.weight`]: f32(hidden, hidden),
    [`${layer}self_attn.k_proj.weight`]: f32(kvHeads * headDim, hidden),
    [`${layer}self_attn.v_proj.weight`]: f32(kvHeads * headDim, hidden),
    [`${layer}self_attn.o_proj.weight`]: f32(hidden, hidden),
    [`${layer}mlp.gate_proj.weight`]: f32(inner, hidden),
    [`${layer}mlp.up_proj.weight`]: f32(inner, hidden),
    [`${layer}mlp.down_proj.weight`]: f32(hidden, inner),
    [`${layer}input_layernorm.weight`]: f32(hidden),
    [`${layer}post_attention_layernorm.weight`]: f32(hidden),
    'model.norm.weight': f32(hidden),
  };
  writeFileSync(join(folder, 'model.safetensors'), writeSafetensors(weights, { format: 'pt' }));
}

before(async () => {
  execFileSync('/usr/bin/python3', [join(repo, 'tests/models/spm_tokenizers.py'), out]);
  const folder = join(out, 'tiny-llama');
  mkdirSync(folder);
  for (const file of ['tokenizer.json', 'tokenizer_config.json']) {
    copyFileSync(join(out, 'llama2-legacy', file), join(folder, file));
  }
  writeTinyLlama(folder);
  attention = await createAttention({ backend: 'wasm-simd', models: true });
  model = await loadModel(folder, { attention });
  const { json, config } = model.tokenizer.files;
  library = new Tokenizer(json, config);
});
after(() => {
  model?.dispose();
  attention?.dispose();
  rmSync(out, { recursive: true, force: true });
});

const decode = (ids) =>
  library.decode(ids, { skip_special_tokens: true, clean_up_tokenization_spaces: false });

test('each token of a run spans its own piece of the text, leading space included', async () => {
  const text = 'Once upon a time, Lily saw 你 and 😀.';
  const { tokens } = await model.run(text, { topK: 1 });
  const content = tokens.filter((t) => !t.special);
  const pieces = content.map((t) => text.slice(t.start, t.end));
  assert.deepEqual(pieces.slice(0, 4), ['Once', ' upon', ' a', ' time']);
  // Byte pieces of 你 (3) and 😀 (4) each span their character.
  assert.equal(pieces.filter((p) => p === '你').length, 3);
  assert.equal(pieces.filter((p) => p === '😀').length, 4);
  // The spans, a character's byte pieces counted once, are the text.
  const once = content.filter((t, i) => i === 0 || t.start !== content[i - 1].start);
  assert.equal(once.map((t) => text.slice(t.start, t.end)).join(''), text);
});

test("appending a prediction's text gives the decode of the ids with it", async () => {
  for (const text of ['', 'Once upon a time', 'She said "hi" 你']) {
    const run = await model.run(text, { topK: 20 });
    const ids = run.tokens.map((t) => t.id);
    assert.equal(decode(ids.length > 1 ? ids : [1]), text);
    for (const p of run.predictions) {
      assert.equal(text + p.text, decode([...ids, p.id]), `${JSON.stringify(text)} + ${p.token}`);
      // After BOS alone the decoder strips the space a text would start with.
      const leadingSpace = text !== '' && (p.token.startsWith('\u2581') || p.token === '<0x20>');
      assert.equal(p.text.startsWith(' '), leadingSpace, p.token);
      assert.equal(p.partial, /^<0x[89A-F][0-9A-F]>$/.test(p.token), p.token);
    }
  }
});
