// The forward-pass tests' fixtures and reference: tiny models in the Hugging Face layout
// (tests/models/make_tiny_models.py, written once per process) and the independent PyTorch
// forward pass (tests/models/reference.py), asked once for a whole batch of cases.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const PYTHON = '/usr/bin/python3'; // Debian's, with python3-torch

let folder = null;

/** The folder holding every tiny model (gpt2.safetensors/, bert.bin/, ...). */
export function tinyModels() {
  if (!folder) {
    folder = mkdtempSync(join(tmpdir(), 'attnlens-tiny-models-'));
    execFileSync(PYTHON, [join(REPO, 'tests/models/make_tiny_models.py'), folder]);
  }
  return folder;
}

/** The path of one tiny model, e.g. tinyModel('gpt2', 'bin'). */
export const tinyModel = (name, format = 'safetensors') => join(tinyModels(), `${name}.${format}`);

/** A copy of a tiny model's folder with its config.json edited by `edit(config)`. */
export function withConfig(name, edit) {
  const copy = mkdtempSync(join(tmpdir(), 'attnlens-model-'));
  cpSync(tinyModel(name), copy, { recursive: true });
  const config = JSON.parse(readFileSync(join(copy, 'config.json'), 'utf8'));
  writeFileSync(join(copy, 'config.json'), JSON.stringify(edit(config)));
  return copy;
}

/** Asserts `promise` rejects with this error name, code and parameter (and message, if given). */
export const rejectsWith = (promise, { name, code, parameter, message }) =>
  assert.rejects(promise, (error) => {
    assert.equal(error.name, name, error.message);
    assert.equal(error.code, code, error.message);
    assert.equal(error.parameter, parameter, error.message);
    if (message) assert.match(error.message, message);
    return true;
  });

/**
 * The reference forward pass of every case at once (one Python process):
 * cases [{ folder, ids, types?, masks?, projections? (a layer), ablate? ([[layer, head,
 * mode]]), lens? (true: every hidden state's logits) }] ->
 * [{ attention: number[], logits: number[] | null, projections: number[] | null,
 *    lens: number[] | null ([layers + 1, N, vocab]) }].
 */
export function referenceForward(cases) {
  const request = JSON.stringify({
    cases: cases.map(
      ({ folder: f, ids, types = null, masks = null, projections = null, ablate, lens }) => ({
        folder: f,
        ids,
        types,
        masks,
        projections,
        ablate: ablate ?? null,
        lens: lens ?? false,
      }),
    ),
  });
  const answer = execFileSync(PYTHON, [join(REPO, 'tests/models/reference.py')], {
    input: request,
    maxBuffer: 256 * 1024 * 1024,
  });
  return JSON.parse(answer.toString('utf8')).cases;
}

/** Asserts |actual - expected| <= abs + rel |expected| everywhere, naming the first failure. */
export function assertClose(actual, expected, { abs, rel = 0 }, label, dims = null) {
  assert.equal(actual.length, expected.length, `${label}: length`);
  let worst = 0;
  for (let i = 0; i < expected.length; i++) {
    const allowed = abs + rel * Math.abs(expected[i]);
    const diff = Math.abs(actual[i] - expected[i]);
    worst = Math.max(worst, diff / allowed);
    if (!(diff <= allowed)) {
      assert.fail(
        `${label}: at ${where(i, dims)} expected ${expected[i]}, got ${actual[i]} ` +
          `(|diff| ${diff.toExponential(2)} > ${allowed.toExponential(2)})`,
      );
    }
  }
  // ATTNLENS_TEST_ERRORS=1 prints how close each check came to its tolerance, as in the C++ tests.
  if (process.env.ATTNLENS_TEST_ERRORS) console.error(`worst_ratio ${worst.toFixed(3)} ${label}`);
  return worst;
}

// "layer 1, head 2, query 3, key 0" for a flat index into [layers, heads, N, N].
function where(index, dims) {
  if (!dims) return `index ${index}`;
  const names = Object.keys(dims);
  const sizes = Object.values(dims);
  const coordinates = [];
  for (let d = sizes.length - 1; d >= 0; d--) {
    coordinates.unshift(`${names[d]} ${index % sizes[d]}`);
    index = Math.floor(index / sizes[d]);
  }
  return coordinates.join(', ');
}
