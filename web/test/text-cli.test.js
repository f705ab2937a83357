import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { displayWidth, fitToWidth, sanitize } from '../src/cli/terminal-text.js';
import { renderHeatmap, xterm256 } from '../src/cli/heatmap.js';

const CLI = fileURLToPath(new URL('../bin/attnlens.js', import.meta.url));
const SENTENCE = "The animal didn't cross the street because it was too tired";

/** Runs the CLI as users do, with stdout a pipe (so no colour unless asked). */
function run(args, env = {}) {
  const cleanEnv = { ...process.env, NO_COLOR: '', FORCE_COLOR: undefined, ...env };
  for (const key of Object.keys(cleanEnv)) if (cleanEnv[key] === undefined) delete cleanEnv[key];
  const result = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env: cleanEnv });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

test('prints the tokens and one head as a heatmap', () => {
  const { code, stdout, stderr } = run([
    SENTENCE,
    '--mask',
    'causal',
    '--heads',
    '4',
    '--head',
    '2',
  ]);
  assert.equal(code, 0, stderr);
  for (const token of ['The', 'animal', "didn't", 'cross', 'street', 'because', 'tired']) {
    assert.ok(stdout.includes(token), `missing token ${token}`);
  }
  assert.match(stdout, /head 2 of 4/);
  assert.doesNotMatch(stdout, /head [013] of 4/);
  assert.doesNotMatch(stdout, /\x1b/, 'no escape codes when stdout is not a terminal');
  // Causal: the first query sees only itself, so it puts all weight there.
  assert.match(stdout, / 0 The +██ · · · · · · · · · · +→ The 1\.00/);
});

test('--json prints tokens, settings and per-head weights', () => {
  const { code, stdout } = run([
    SENTENCE,
    '--mask',
    'causal',
    '--mask',
    'local:2',
    '--heads',
    '4',
    '--head',
    '2',
    '--json',
    '--temperature',
    '0.5',
    '--seed',
    '7',
  ]);
  assert.equal(code, 0);
  const report = JSON.parse(stdout);
  assert.equal(report.tokens.length, 11);
  assert.deepEqual(report.tokens[2], { text: "didn't", start: 11, end: 17 });
  assert.equal(report.settings.heads, 4);
  assert.equal(report.settings.temperature, 0.5);
  assert.equal(report.settings.seed, 7);
  assert.deepEqual(report.settings.masks, ['causal', 'local:2']);
  assert.equal(report.heads.length, 1);
  assert.equal(report.heads[0].head, 2);
  const { weights, mask } = report.heads[0];
  assert.equal(weights.length, 11);
  weights.forEach((row, i) => {
    assert.equal(row.length, 11);
    assert.ok(Math.abs(row.reduce((a, b) => a + b, 0) - 1) < 1e-5);
    row.forEach((w, j) => {
      const shouldSee = j <= i && i - j <= 2;
      assert.equal(mask[i][j], shouldSee ? 1 : 0);
      if (!shouldSee) assert.equal(w, 0);
    });
  });
});

test('--mask topk:K keeps the K highest-scoring visible keys; --softcap caps the scores', () => {
  const args = [SENTENCE, '--json', '--head', '1', '--softcap', '2', '--alibi'];
  const report = JSON.parse(run([...args, '--mask', 'causal+topk:3']).stdout);
  assert.equal(report.settings.analyzeOptions.softcap, 2);
  assert.deepEqual(report.settings.masks, ['causal+topk:3']);
  const { weights, scores } = report.heads[0];
  weights.forEach((row, i) => {
    const kept = row.map((w, j) => [w, j]).filter(([w]) => w > 0);
    assert.equal(kept.length, Math.min(3, i + 1), `row ${i}`);
    // The kept keys are the row's best logits: softcap(scale * score) minus the ALiBi distance.
    const slope = 2 ** ((-8 * 2) / 4); // head 1 of 4: the paper's 2^(-8 (h + 1) / H)
    const logit = (j) => 2 * Math.tanh(scores[i][j] / 4 / 2) - slope * (i - j);
    const order = [...Array(i + 1).keys()].sort((a, b) => logit(b) - logit(a) || a - b);
    assert.deepEqual(
      kept.map(([, j]) => j).sort((a, b) => a - b),
      order.slice(0, 3).sort((a, b) => a - b),
      `row ${i}`,
    );
  });
  const hashed = JSON.parse(run([SENTENCE, '--json', '--mask', 'lsh:4:2:9']).stdout);
  assert.deepEqual(hashed.settings.analyzeOptions.lsh, { buckets: 4, rounds: 2, seed: 9 });
  const dropped = hashed.heads.flatMap((h) => h.weights.flat()).filter((w) => w === 0).length;
  assert.ok(dropped > 0, 'LSH leaves some keys out');
});

test('--json without --head gives every head; --source gives cross-attention', () => {
  const all = JSON.parse(run(['attention is all you need', '--json', '--heads', '3']).stdout);
  assert.deepEqual(
    all.heads.map((h) => h.head),
    [0, 1, 2],
  );

  const pair = JSON.parse(
    run(['tired animal', '--source', 'the animal was too tired', '--json', '--head', '0']).stdout,
  );
  assert.deepEqual(
    pair.tokens.map((t) => t.text),
    ['tired', 'animal'],
  );
  assert.equal(pair.sourceTokens.length, 5);
  assert.equal(pair.heads[0].weights.length, 2);
  assert.equal(pair.heads[0].weights[0].length, 5);
});

test('--help, --version', () => {
  const help = run(['--help']);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /^Usage: attnlens/);
  const version = run(['--version']);
  assert.equal(version.code, 0);
  const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  assert.equal(version.stdout.trim(), manifest.version);
});

const BAD_COMMANDS = [
  [['--bogus', 'text'], /Unknown option '--bogus'/],
  [[], /missing the text/],
  [['text', '--mask', 'local:x'], /--mask local:x: expected a non-negative integer/],
  [['text', '--mask', 'diagonal'], /unknown mask 'diagonal'/],
  [['text', '--mask', 'local:1', '--mask', 'dilated:2:2'], /only one local or dilated window/],
  [['text', '--score', 'cosine-ish'], /--score: expected one of scaled-dot, dot, cosine, additive/],
  [['text', '--temperature', '0'], /--temperature: expected a positive number/],
  [['text', '--temperature', 'hot'], /--temperature/],
  [['text', '--softcap', '0'], /--softcap: expected a positive number/],
  [['text', '--mask', 'topk:0'], /--mask topk:0: expected a positive integer/],
  [['text', '--mask', 'lsh:3'], /--mask lsh:3: the buckets must be even/],
  [['text', '--mask', 'topk:1', '--mask', 'causal+topk:2'], /only one topk can be given/],
  [['a b', '--mask', 'topk:3'], /topK: must be an integer between 1 and 2/],
  [['text', '--heads', '0'], /--heads: expected an integer from 1 to 16/],
  [['text', '--heads', '4', '--head', '4'], /--head: expected an integer from 0 to 3/],
  [['text', '--granularity', 'sentence'], /--granularity/],
  [['text', '--color', 'rainbow'], /--color/],
  [['text', '--heads'], /--heads/],
  [['a b c', '--mask', 'global-tokens:9'], /globalTokens\[0\]: must be an integer between 0 and 2/],
  [['a '.repeat(600)], /600 word tokens exceed the cap of 512/],
];

for (const [args, message] of BAD_COMMANDS) {
  test(`exit code 2 and usage on stderr: ${JSON.stringify(args).slice(0, 60)}`, () => {
    const { code, stdout, stderr } = run(args);
    assert.equal(code, 2);
    assert.equal(stdout, '');
    assert.match(stderr, message);
    assert.match(stderr, /Usage: attnlens/);
  });
}

test('colour modes: 256, truecolor, FORCE_COLOR and NO_COLOR', () => {
  const args = ['attention is all you need', '--head', '0'];
  assert.match(run([...args, '--color', '256']).stdout, /\x1b\[48;5;\d+m  \x1b\[0m/);
  assert.match(run([...args, '--color', 'truecolor']).stdout, /\x1b\[48;2;\d+;\d+;\d+m  \x1b\[0m/);
  assert.match(run(args, { FORCE_COLOR: '3' }).stdout, /\x1b\[48;2;/);
  assert.doesNotMatch(run(args, { FORCE_COLOR: '1', NO_COLOR: '1' }).stdout, /\x1b/);
  assert.match(run([...args, '--color', 'none']).stdout, /[░▒▓█]{2}/);
});

test('rows line up with CJK and emoji labels', () => {
  const { code, stdout } = run([
    '我爱自然语言处理，注意力机制 👍🏽 ok',
    '--head',
    '1',
    '--color',
    'none',
  ]);
  assert.equal(code, 0);
  const rows = stdout.split('\n').filter((line) => /^ ?\d+ /.test(line));
  assert.equal(rows.length, 10);
  // Every row's grid ends at the same terminal column, whatever the width of its label.
  const gridEnds = rows.map((line) => displayWidth(line.split('  →')[0]));
  assert.equal(new Set(gridEnds).size, 1, `grid ends at different columns: ${gridEnds}`);
  assert.equal(gridEnds[0], 2 + 6 + 1 + 10 * 2, 'index, widest label (注意力), space, 10 cells');
});

test('control characters in the text never reach the terminal', () => {
  const { code, stdout } = run(['a \x1b[31mred\x1b[0m b', '--color', 'none']);
  assert.equal(code, 0);
  assert.doesNotMatch(stdout, /\x1b/);
  assert.match(stdout, /\ufffd/);
});

test('terminal text helpers', () => {
  assert.equal(displayWidth('abc'), 3);
  assert.equal(displayWidth('自然'), 4);
  assert.equal(displayWidth('👍🏽'), 2);
  assert.equal(displayWidth('👨‍👩‍👧'), 2);
  assert.equal(displayWidth('e\u0301'), 1);
  assert.equal(displayWidth('ｱ'), 1, 'halfwidth katakana is narrow');
  assert.equal(fitToWidth('transformers', 6), 'trans…');
  assert.equal(fitToWidth('自然语言处理', 5), '自然…');
  assert.equal(fitToWidth('自然语言处理', 6), '自然… ');
  assert.equal(fitToWidth('it', 4), 'it  ');
  assert.equal(fitToWidth('it', 4, 'right'), '  it');
  assert.equal(sanitize('a\x1b[2Jb\u202ec'), 'a\ufffd[2Jb\ufffdc');
  assert.equal(xterm256(0, 0, 0), 16);
  assert.equal(xterm256(255, 255, 255), 231);
  assert.equal(xterm256(128, 128, 128), 244);
  assert.equal(xterm256(253, 231, 37), 220);
});

test('a narrow terminal shows the keys that fit and says which are left out', () => {
  const labels = ['a', 'bb', 'ccc', 'dddd', 'eeeee', 'ffffff'];
  const n = labels.length;
  const weights = new Float32Array(n * n).fill(1 / n);
  const wide = renderHeatmap({
    weights,
    rowLabels: labels,
    columnLabels: labels,
    colorMode: 'none',
  });
  assert.ok(wide.every((line) => !/do not fit/.test(line)));
  assert.match(
    wide.find((line) => line.startsWith('0 ')),
    /→ a 0\.17 {2}H 2\.58 bits$/,
  );

  const narrow = renderHeatmap({
    weights,
    rowLabels: labels,
    columnLabels: labels,
    colorMode: 'none',
    maxWidth: 16,
  });
  // 1 (index) + 1 + 6 (label) + 1 = 9 columns of prefix leave room for 3 cells of 2.
  assert.ok(narrow.includes('(keys 3..5 do not fit this terminal; widen it or use --json)'));
  const firstRow = narrow.find((line) => line.startsWith('0 '));
  assert.equal(displayWidth(firstRow), 9 + 3 * 2);
});

test('closing the pipe early is not an error', () => {
  const command = `"${process.execPath}" "${CLI}" "$(printf 'w%d ' $(seq 1 200))" | head -c 10`;
  const result = spawnSync('bash', ['-o', 'pipefail', '-c', command], { encoding: 'utf8' });
  assert.equal(result.status, 0, result.stderr);
  assert.equal(result.stderr, '');
});

test('the usage message and the settings line fit 80 columns', () => {
  const help = run(['--help']);
  assert.equal(help.code, 0, help.stderr);
  const over = (text) => text.split('\n').filter((line) => displayWidth(line) > 80);
  assert.deepEqual(over(help.stdout), [], 'usage lines over 80 columns');
  assert.match(help.stdout, /--json +print the numbers/);
  assert.match(
    help.stdout,
    /\n {4}fixed:S:C +Sparse Transformer fixed pattern, block S, C summary\n {25}keys\n/,
  );

  const { code, stdout, stderr } = run([SENTENCE, '--heads', '4', '--head', '0', '--seed', '7']);
  assert.equal(code, 0, stderr);
  const header = stdout.slice(0, stdout.indexOf('\n\n'));
  assert.deepEqual(over(header), [], 'settings lines over 80 columns');
  assert.match(header, /^attnlens · 11 tokens · 4 heads × 16 dims · /);
  assert.match(header.replace(/\n {2}/g, ' '), /· seed 7 · wasm-\w+ · [\d.]+ ms$/);
  const tokens = stdout.slice(stdout.indexOf('\n\n') + 2).split('\n\n')[0];
  assert.deepEqual(over(tokens), [], 'token list lines over 80 columns');
});

test('values echoed on stderr cannot drive the terminal, whichever flag they came in', () => {
  // OSC 0 sets the window title, CSI 2J clears the screen, BEL rings.
  const evil = '\x1b]0;PWNED\x07\x1b[2J';
  const cases = [
    ['a b', '--mask', evil],
    ['a b', '--mask', `local:${evil}`],
    ['a b', '--mask', `global-tokens:1,${evil}`],
    ['a b', '--score', evil],
    ['a b', '--heads', evil],
    ['a b', '--head', evil],
    ['a b', '--head-dim', evil],
    ['a b', '--seed', evil],
    ['a b', '--temperature', evil],
    ['a b', '--color', evil],
    ['a b', '--granularity', evil],
    ['a b', '--locale', evil],
    ['a b', `--${evil}`],
    ['a b', `-${evil}`],
  ];
  for (const args of cases) {
    const { code, stdout, stderr } = run(args);
    assert.equal(code, 2, `${JSON.stringify(args)}: ${stderr}`);
    assert.doesNotMatch(stderr, /[\x00-\x08\x0b-\x1f\x7f]/, JSON.stringify(args));
    assert.doesNotMatch(stdout, /[\x00-\x08\x0b-\x1f\x7f]/, JSON.stringify(args));
    assert.match(stderr, /\ufffd/, `${JSON.stringify(args)}: the value is shown, defused`);
  }
});
