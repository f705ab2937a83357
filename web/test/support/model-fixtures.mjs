// Tiny model folders in the Hugging Face layout for the loading tests: config.json, a real
// tokenizer.json + tokenizer_config.json (tests/models/tokenizers.py) and model.safetensors with
// seeded weights under GPT-2's key names. The weights are random: these tests check files, not
// what a model computes.

import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeSafetensors } from '../../src/models/files/safetensors.js';
import { tensor } from './helpers.js';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
let tokenizers = null;

/** Folder holding tiny-gpt2/, tiny-bert/ and gpt2/ tokenizer files (written once per process). */
export function tokenizerFolder() {
  if (!tokenizers) {
    tokenizers = mkdtempSync(join(tmpdir(), 'attnlens-tokenizers-'));
    execFileSync('/usr/bin/python3', [join(REPO, 'tests/models/tokenizers.py'), tokenizers]);
  }
  return tokenizers;
}

/**
 * Writes a tiny GPT-2-shaped model into `folder`; `hidden` sets the size of the weights (the
 * embedding is [vocab, hidden]). Returns the weights written, by name.
 */
export function writeTinyModel(folder, { hidden = 8, seed = 1 } = {}) {
  mkdirSync(folder, { recursive: true });
  for (const file of ['tokenizer.json', 'tokenizer_config.json']) {
    copyFileSync(join(tokenizerFolder(), 'tiny-gpt2', file), join(folder, file));
  }
  const vocab = 377; // the tiny GPT-2 tokenizer's size
  const config = { model_type: 'gpt2', n_embd: hidden, n_layer: 1, n_head: 2, vocab_size: vocab };
  writeFileSync(join(folder, 'config.json'), JSON.stringify(config));
  const weights = {
    'wte.weight': { dtype: 'F32', shape: [vocab, hidden], data: tensor(vocab * hidden, seed) },
    'wpe.weight': { dtype: 'F32', shape: [16, hidden], data: tensor(16 * hidden, seed + 1) },
    'ln_f.weight': { dtype: 'F32', shape: [hidden], data: tensor(hidden, seed + 2) },
  };
  writeFileSync(join(folder, 'model.safetensors'), writeSafetensors(weights, { format: 'pt' }));
  return weights;
}
