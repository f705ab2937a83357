// `attnlens --model <folder> "text"` on the tiny model folders: the chosen head's heatmap and
// the predictions, the same numbers as model.run() in --json, and the exit codes of mistakes.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { attentionFlow, attentionRollout, loadModel } from '../src/models/index.js';
import { showsVocabularyEntry } from '../src/views/predictions.js';
import { tinyModel } from './support/tiny-models.mjs';

const BIN = fileURLToPath(new URL('../bin/attnlens.js', import.meta.url));
const cli = (...args) => spawnSync('node', [BIN, ...args], { encoding: 'utf8' });

test("prints the chosen layer's head as a heatmap, then the next-token predictions", () => {
  const r = cli(
    '--model',
    tinyModel('gpt-neo'),
    'Once upon a time there was',
    '--layer',
    '1',
    '--head',
    '1',
    '--color',
    'none',
  );
  assert.equal(r.status, 0, r.stderr);
  // The settings line wraps at 80 columns when piped; its continuation starts with '  · '.
  const settings = r.stdout.slice(0, r.stdout.indexOf('\n\n')).replace(/\n {2}· /g, ' · ');
  assert.match(settings, /gpt_neo · 3 layers × 2 heads .* layer 1 · mask causal\+local:2/);
  assert.match(r.stdout, /layer 1, head 1 of 2 — rows: queries, columns: keys/);
  assert.doesNotMatch(r.stdout, /head 0 of 2/);
  // The text a prediction adds, quoted, or its vocabulary entry where it adds part of a
  // character (this random model's first guess is such a byte: see the test below).
  assert.match(r.stdout, /next token after " was":\n {3}1\. (".*"|[^\s"]+) {2}\d+\.\d%/);
  // The local layer's window: the last query sees 3 keys, every earlier key is masked (·).
  const rows = r.stdout.split('\n').filter((line) => /^\s*\d+ \S/.test(line) && line.includes('→'));
  assert.ok(rows.length > 5);
  assert.match(rows.at(-1), /( ·){3}/);
});

test('--json carries the same weights and predictions as model.run()', async () => {
  const text = 'the cat [MASK] on the mat';
  const r = cli('--model', tinyModel('bert', 'bin'), text, '--head', 'all', '--json', '--top', '4');
  assert.equal(r.status, 0, r.stderr);
  const report = JSON.parse(r.stdout);
  const model = await loadModel(tinyModel('bert', 'bin'));
  const run = await model.run(text, { topK: 4 });
  const n = run.tokens.length;
  assert.equal(report.heads.length, model.info.heads);
  for (const { head, weights } of report.heads) {
    const expected = run.attention.subarray(head * n * n, (head + 1) * n * n);
    weights.forEach((w, i) => assert.ok(Math.abs(w - expected[i]) < 1e-6));
  }
  assert.deepEqual(report.predictions, run.predictions);
  assert.equal(report.tokens[3].label, '[MASK]');
  model.dispose();
});

test('--masks overrides the layers; mistakes exit 2 with the usage, bad checkpoints exit 1', () => {
  const overridden = cli(
    '--model',
    tinyModel('gpt2'),
    'The quick brown fox',
    '--masks',
    'causal+local:1',
    '--json',
  );
  assert.equal(overridden.status, 0, overridden.stderr);
  assert.equal(JSON.parse(overridden.stdout).mask, 'causal+local:1');

  const badLayer = cli('--model', tinyModel('gpt2'), 'hi', '--layer', '9');
  assert.equal(badLayer.status, 2);
  assert.match(badLayer.stderr, /--layer: the model has 2 layers \(0\.\.1\), got 9/);
  assert.match(badLayer.stderr, /Usage: attnlens --model/);
  const badMask = cli('--model', tinyModel('gpt2'), 'hi', '--masks', 'sideways');
  assert.equal(badMask.status, 2);
  assert.match(badMask.stderr, /--masks sideways: unknown part/);
  const tooLong = cli('--model', tinyModel('gpt2'), 'word '.repeat(40));
  assert.equal(tooLong.status, 2);
  assert.match(tooLong.stderr, /more than the model's 32 positions/);
  const broken = cli('--model', tinyModel('gpt2-bad-shape'), 'hi');
  assert.equal(broken.status, 1);
  assert.match(broken.stderr, /^attnlens: transformer\.h\.1\.mlp\.c_fc\.weight: has shape/);
  assert.doesNotMatch(broken.stderr, /    at /); // no stack trace for a bad file
});

test('a Qwen2 checkpoint: grouped K/V heads in the settings, its sliding layer as the mask', () => {
  const r = cli('--model', tinyModel('qwen2-sliding'), 'Once upon a time', '--layer', '1');
  assert.equal(r.status, 0, r.stderr);
  const settings = r.stdout.slice(0, r.stdout.indexOf('\n\n')).replace(/\n {2}· /g, ' · ');
  assert.match(settings, /qwen2 · 2 layers × 4 heads \(2 K\/V\) .* layer 1 · mask causal\+local:2/);
  assert.match(r.stdout, /next token after " time":\n {3}1\. /);
});

test('--model stories260K runs the bundled llama2.c model, with no download', () => {
  const r = cli('--model', 'stories260K', 'Once upon a time, there was a', '--json', '--top', '3');
  assert.equal(r.status, 0, r.stderr);
  const report = JSON.parse(r.stdout);
  assert.equal(report.model.modelType, 'llama');
  assert.equal(report.model.parameters, 260032);
  assert.deepEqual(
    report.tokens.slice(0, 2).map((t) => t.id),
    [1, 403], // <s>, ▁Once
  );
  assert.equal(report.predictions[0].token, '▁little');
  const help = cli('--model', 'stories260K', '--help');
  assert.match(help.stdout, /--model stories260K "Once upon a time/);
  assert.match(help.stdout, /--tokenizer FILE/);
});

test("a prediction that ends inside a character prints its vocabulary entry, as the page's", () => {
  // All 512 of stories260K's tokens: its byte pieces among them (<0xE4> begins a character).
  const args = ['--model', 'stories260K', 'Once', '--top', '512', '--color', 'none'];
  const printed = cli(...args);
  const report = cli(...args, '--json');
  assert.equal(printed.status, 0, printed.stderr);
  const { predictions } = JSON.parse(report.stdout);
  const lines = printed.stdout.split('\n');
  const list = lines.slice(lines.findIndex((line) => line.startsWith('next token after')) + 1);
  assert.ok(predictions.some((p) => p.partial && p.token === '<0xE4>'));
  assert.doesNotMatch(printed.stdout, /\uFFFD/);
  predictions.forEach((p, i) => {
    const shown = showsVocabularyEntry(p) ? p.token : JSON.stringify(p.text);
    assert.match(list[i], new RegExp(`^ *${i + 1}\\. \\S`), `line ${i + 1}`);
    assert.equal(list[i].replace(/^ *\d+\. (.*) {2}\d+\.\d%$/, '$1'), shown, `line ${i + 1}`);
  });
  // What a partial or empty piece adds is no text: its entry stands unquoted, as on the page.
  const partial = predictions.findIndex((p) => p.token === '<0xE4>');
  assert.match(list[partial], /^ *\d+\. <0xE4> {2}\d+\.\d%$/);
  const end = predictions.findIndex((p) => p.token === '</s>');
  assert.match(list[end], /^ *\d+\. <\/s> {2}\d+\.\d%$/);
});

test('--rollout prints rollout and flow of the predicted position; --json has them', async () => {
  const text = 'Once upon a time, there was a';
  const r = cli('--model', 'stories260K', text, '--rollout', '--color', 'none');
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /where token 8· a draws from, through all layers:/);
  assert.match(r.stdout, /token +rollout +flow\n {2}0·<s> +█+ +\d+\.\d% +█+ +\d+\.\d%/);
  const report = JSON.parse(cli('--model', 'stories260K', text, '--rollout', '--json').stdout);
  const model = await loadModel('stories260K');
  const run = await model.run(text);
  const { layers, heads } = model.info;
  const shape = { layers, heads, n: run.tokens.length };
  model.dispose();
  assert.equal(report.rollout.position, 8);
  const rollout = attentionRollout(run.attention, shape, { rows: [8] });
  report.rollout.values.forEach((x, j) => assert.ok(Math.abs(x - rollout[j]) < 1e-6));
  const flow = attentionFlow(run.attention, shape, { position: 8 });
  report.flow.values.forEach((x, j) => assert.ok(Math.abs(x - flow[j]) < 1e-6));
  // --position picks another token; a causal model's later tokens are not listed.
  const early = cli('--model', 'stories260K', text, '--rollout', '--position', '2');
  assert.match(early.stdout, /where token 2· upon draws from/);
  assert.doesNotMatch(early.stdout, /\n {2}3· a /);
  assert.match(early.stdout, /later tokens: not visible to a causal model/);
  const beyond = cli('--model', 'stories260K', text, '--rollout', '--position', '9');
  assert.equal(beyond.status, 2);
  assert.match(beyond.stderr, /--position: must be an integer between 0 and 8, got 9/);
  const alone = cli('--model', 'stories260K', text, '--position', '1');
  assert.equal(alone.status, 2);
  assert.match(alone.stderr, /--position: only with --rollout/);
});

test('--ablate runs with those heads removed and --lens prints the logit lens', async () => {
  const text = 'Once upon a time, there was a';
  const args = ['--model', 'stories260K', text, '--ablate', '0.1,3.2:mean', '--lens'];
  const r = cli(...args, '--color', 'none');
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /ablated 0\.1:zero,3\.2:mean/);
  assert.match(r.stdout, /logit lens: /);
  assert.match(r.stdout, /token +emb +L0 +L1 +L2 +L3 +L4\n {2}0·<s> /);
  const report = JSON.parse(cli(...args, '--json').stdout);
  const model = await loadModel('stories260K');
  const ablate = [
    { layer: 0, head: 1, mode: 'zero' },
    { layer: 3, head: 2, mode: 'mean' },
  ];
  const run = await model.run(text, { ablate, lens: true });
  const { layers } = model.info;
  model.dispose();
  assert.deepEqual(report.ablated, ablate);
  assert.deepEqual(
    report.predictions.map((p) => p.id),
    run.predictions.slice(0, 5).map((p) => p.id),
  );
  assert.equal(report.lens.top.length, layers + 1);
  report.lens.top.forEach((rows, state) =>
    rows.forEach((row, i) => assert.equal(row[0].id, run.lens.top[state][i][0].id)),
  );
  for (const [flag, message] of [
    ['9.1', /--ablate\[0\]\.layer: must be an integer between 0 and 4, got 9/],
    ['1.1,1.1', /--ablate\[1\]: layer 1 head 1 is listed twice/],
    ['1-1', /--ablate: expected layer\.head\[:mean\] items/],
  ]) {
    const bad = cli('--model', 'stories260K', text, '--ablate', flag);
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, message);
  }
});
