#!/usr/bin/env node
// attnlens CLI: attention of a seeded transformer layer over a sentence, as a terminal heatmap or
// as JSON. Exit codes: 0 done, 1 unexpected failure, 2 bad usage (unknown flag, bad value, text
// over a cap).

import { readFileSync } from 'node:fs';
import { analyze, analyzePair } from '../src/analyze.js';
import { UsageError, USAGE, detectColorMode, parseCommandLine } from '../src/cli/arguments.js';
import { renderHeatmap } from '../src/cli/heatmap.js';
import { DEFAULT_WIDTH, wrapItems } from '../src/cli/layout.js';
import {
  MODEL_USAGE,
  isModelCommand,
  parseModelCommand,
  runModelCommand,
} from '../src/cli/model-command.js';
import { fitToWidth, sanitize, displayWidth } from '../src/cli/terminal-text.js';
import {
  DEFAULT_GRANULARITY,
  DEFAULT_SCORE,
  DEFAULT_SEED,
  DEFAULT_TEMPERATURE,
} from '../src/vocabulary.js';

function packageVersion() {
  const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  return manifest.version;
}

/** A row-major matrix as an array of rows. */
function matrixRows(values, rows, columns, format = (x) => x) {
  const out = [];
  for (let i = 0; i < rows; i++) {
    out.push(Array.from(values.subarray(i * columns, (i + 1) * columns), format));
  }
  return out;
}

// 9 significant digits are enough for every float32 to read back to the same value.
const float32Digits = (x) => Number(x.toPrecision(9));

function jsonReport(command, result, queryTokens, keyTokens, shownHeads) {
  const rows = queryTokens.length;
  const columns = keyTokens.length;
  const report = {
    settings: {
      text: command.text,
      ...(command.source !== undefined ? { source: command.source } : {}),
      masks: command.masks,
      granularity: command.options.granularity ?? DEFAULT_GRANULARITY,
      score: command.options.score ?? DEFAULT_SCORE,
      temperature: command.options.temperature ?? DEFAULT_TEMPERATURE,
      heads: result.shape.heads,
      headDim: result.shape.headDim,
      modelDim: result.shape.modelDim,
      seed: command.options.seed ?? DEFAULT_SEED,
      shareQueryKey: Boolean(command.options.shareQueryKey),
      analyzeOptions: command.options,
    },
    backend: result.backend,
    timing: result.timing,
    tokens: queryTokens,
    ...(command.source !== undefined ? { sourceTokens: keyTokens } : {}),
    heads: shownHeads.map((h) => ({
      head: h,
      weights: matrixRows(result.heads[h].weights, rows, columns, float32Digits),
      scores: matrixRows(result.heads[h].scores, rows, columns, float32Digits),
      mask: matrixRows(result.heads[h].mask, rows, columns),
    })),
  };
  return JSON.stringify(report);
}

function tokenList(label, tokens, width) {
  const lines = [];
  let line = `${label}:`;
  tokens.forEach((token, i) => {
    const item = ` ${i}·${sanitize(token.text)}`;
    if (displayWidth(line + item) > width && line !== `${label}:`) {
      lines.push(line);
      line = ' '.repeat(label.length + 1);
    }
    line += item;
  });
  lines.push(line);
  return lines;
}

function textReport(command, result, queryTokens, keyTokens, shownHeads, colorMode, width) {
  const { shape } = result;
  const settings = [
    command.source !== undefined
      ? `${queryTokens.length} target × ${keyTokens.length} source tokens`
      : `${queryTokens.length} tokens`,
    `${shape.heads} head${shape.heads > 1 ? 's' : ''} × ${shape.headDim} dims`,
    command.options.score ?? DEFAULT_SCORE,
    `mask ${command.masks.join(' + ')}`,
    `temperature ${command.options.temperature ?? DEFAULT_TEMPERATURE}`,
    ...(command.options.softcap !== undefined ? [`softcap ${command.options.softcap}`] : []),
    ...(command.options.alibi ? ['ALiBi'] : []),
    `seed ${command.options.seed ?? DEFAULT_SEED}`,
    result.backend,
    `${result.timing.ms.toFixed(2)} ms`,
  ];
  // The settings and the token list fit the terminal, or DEFAULT_WIDTH when piped; every item
  // goes through sanitize(), so a value given on the command line cannot drive the terminal.
  const listWidth = Number.isFinite(width) ? width : DEFAULT_WIDTH;
  const lines = [...wrapItems(['attnlens', ...settings].map(sanitize), ' · ', listWidth), ''];
  if (command.source !== undefined) {
    lines.push(
      ...tokenList('source (keys)', keyTokens, listWidth),
      ...tokenList('target (queries)', queryTokens, listWidth),
    );
  } else {
    lines.push(...tokenList('tokens', queryTokens, listWidth));
  }
  for (const h of shownHeads) {
    lines.push(
      '',
      fitToWidth(
        `head ${h} of ${shape.heads} — rows: queries, columns: keys`,
        Math.min(width, DEFAULT_WIDTH),
      ).trimEnd(),
    );
    lines.push(
      ...renderHeatmap({
        weights: result.heads[h].weights,
        mask: result.heads[h].mask,
        rowLabels: queryTokens.map((t) => t.text),
        columnLabels: keyTokens.map((t) => t.text),
        colorMode,
        maxWidth: width,
      }),
    );
  }
  return lines.join('\n');
}

// --model: a real checkpoint instead of the seeded layer (src/cli/model-command.js).
async function modelMain(argv) {
  const command = parseModelCommand(argv);
  if (command.help) {
    process.stdout.write(`${MODEL_USAGE}\n`);
    return;
  }
  const onProgress = process.stderr.isTTY
    ? ({ file, totalLoaded, totalBytes }) =>
        process.stderr.write(
          `\r${file}: ${(totalLoaded / 2 ** 20).toFixed(1)}` +
            `${totalBytes ? ` of ${(totalBytes / 2 ** 20).toFixed(1)}` : ''} MiB `,
        )
    : undefined;
  const output = await runModelCommand(command, {
    colorMode: command.color ?? detectColorMode(process.env, process.stdout),
    width: process.stdout.isTTY ? process.stdout.columns : Infinity,
    onProgress,
  });
  if (onProgress) process.stderr.write('\n');
  process.stdout.write(`${output}\n`);
}

async function main(argv) {
  if (isModelCommand(argv)) return modelMain(argv);
  const command = parseCommandLine(argv);
  if (command.help) {
    process.stdout.write(`${USAGE}\n\n${MODEL_USAGE}\n`);
    return;
  }
  if (command.version) {
    process.stdout.write(`${packageVersion()}\n`);
    return;
  }

  let result;
  try {
    result =
      command.source !== undefined
        ? await analyzePair(command.source, command.text, command.options)
        : await analyze(command.text, command.options);
  } catch (error) {
    // Bad values the flag syntax cannot catch (a window wider than the text, a text over the cap,
    // a global token past the end) come back from the library as TypeError/RangeError.
    // A TypeError without an argument name in front is a bug, not a usage mistake.
    const namesArgument = /^[\w.[\]]+: /.test(error.message);
    if (error instanceof RangeError || (error instanceof TypeError && namesArgument)) {
      throw new UsageError(error.message);
    }
    throw error;
  }
  const queryTokens = command.source !== undefined ? result.targetTokens : result.tokens;
  const keyTokens = command.source !== undefined ? result.sourceTokens : result.tokens;
  const shownHeads = command.head === 'all' ? result.heads.map((_, h) => h) : [command.head];

  if (command.json) {
    process.stdout.write(`${jsonReport(command, result, queryTokens, keyTokens, shownHeads)}\n`);
    return;
  }
  const colorMode = command.color ?? detectColorMode(process.env, process.stdout);
  const width = process.stdout.isTTY ? process.stdout.columns : Infinity;
  process.stdout.write(
    `${textReport(command, result, queryTokens, keyTokens, shownHeads, colorMode, width)}\n`,
  );
}

// `attnlens ... | head` closes the pipe early: that is the reader's choice, not a failure.
process.stdout.on('error', (error) => {
  if (error.code !== 'EPIPE') throw error;
  process.exit(0);
});

// Messages quote what the user typed (a flag's value, an unknown flag's name, a mask, the text);
// every line goes through sanitize(), as stdout does, so none of it can drive the terminal.
const terminalSafe = (text) => String(text).split('\n').map(sanitize).join('\n');

main(process.argv.slice(2)).then(
  () => {
    process.exitCode = 0;
  },
  (error) => {
    if (error instanceof UsageError) {
      const usage = isModelCommand(process.argv.slice(2)) ? MODEL_USAGE : USAGE;
      process.stderr.write(`attnlens: ${terminalSafe(error.message)}\n\n${usage}\n`);
      process.exitCode = 2;
    } else if (typeof error?.code === 'string' && typeof error.parameter === 'string') {
      // attnlens' own errors (a missing file, a bad checkpoint) say what is wrong: no stack.
      process.stderr.write(`attnlens: ${terminalSafe(error.message)}\n`);
      process.exitCode = 1;
    } else {
      process.stderr.write(`attnlens: ${terminalSafe(error.stack ?? error)}\n`);
      process.exitCode = 1;
    }
  },
);
