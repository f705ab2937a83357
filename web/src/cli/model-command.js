// `attnlens --model <stories260K, folder, file or id> "text"`: runs a real checkpoint
// (attnlens/models) and prints one layer's head (or all of its heads) as a terminal heatmap,
// then the model's predictions.
// Mistakes in the command line (and texts the model refuses) are UsageErrors (exit 2); a model
// that cannot be loaded is an ordinary error (exit 1).

import { parseArgs } from 'node:util';
import { createAttention } from '../attention.js';
import { attentionFlow, attentionRollout, loadModel } from '../models/index.js';
import { maskForMode, maskOptions, parseMask } from '../mask-notation.js';
import { WEIGHT_DTYPES } from '../models/model-block.js';
import { showsVocabularyEntry } from '../views/predictions.js';
import { UsageError } from './arguments.js';
import { COLOR_MODES, renderHeatmap } from './heatmap.js';
import { DEFAULT_WIDTH, wrapItems } from './layout.js';
import { lensLines } from './lens-lines.js';
import { rolloutLines } from './rollout-lines.js';
import { sanitize } from './terminal-text.js';

export const MODEL_USAGE = `Usage: attnlens --model SOURCE [options] "text"

Runs a real checkpoint (GPT-2, GPT-Neo such as TinyStories, Llama, Qwen2, BERT,
llama2.c) over the text and prints one layer's attention as a heatmap, then the
top predictions (the next token, or each [MASK]).

Options:
  --model SOURCE     stories260K (carried by attnlens: no download), a folder
                     with config.json, tokenizer.json and the weights, a
                     llama2.c checkpoint (.bin) or a Hugging Face model id
  --tokenizer FILE   llama2.c checkpoints: their tok*.bin, when it is not
                     beside the checkpoint (a path or URL)
  --layer L          layer to show, from 0 (default 0)
  --head H|all       head to show, from 0 (default 0)
  --masks SPEC       override every layer's mask ('causal+local:2'); repeat it
                     once per layer to give each its own
  --pair "text"      BERT: a second sentence ([CLS] text [SEP] pair [SEP])
  --top K            predictions to print (default 5)
  --truncate         keep the first tokens of a text longer than the model
  --dtype f32|f16|q8 weight storage in memory (default f32; q8: 8-bit blocks)
  --revision REV     Hub ids: branch, tag or commit (default main)
  --color MODE       truecolor | 256 | none
  --rollout          also print where a token's information comes from through
                     all layers: attention rollout and attention flow over the
                     input tokens (flow up to 256 tokens)
  --position P       the token --rollout reads, from 0 (default: the one the
                     model predicts from, the last or the first [MASK])
  --ablate L.H,...   remove these heads (layer.head, from 0; L.H:mean replaces
                     the head by its mean over the text instead of zero)
  --lens             also print the logit lens: each layer's top token at each
                     position, through the final norm and output layer
  --json             print the tokens, the chosen heads' weights and the
                     predictions as JSON (with --rollout, the rollout and flow;
                     with --lens, the lens; with --ablate, the ablations)

Examples:
  attnlens --model stories260K "Once upon a time, there was a" --head all
  attnlens --model stories15M.bin --tokenizer tokenizer.bin "Once upon a time"
  attnlens --model ./TinyStories-1M "Once upon a time" --layer 3 --head all
  attnlens --model stories260K "Once upon a time, there was a" --rollout
  attnlens --model stories260K "Once upon a time" --ablate 0.1,4.0 --lens`;

const OPTIONS = {
  model: { type: 'string' },
  layer: { type: 'string' },
  head: { type: 'string' },
  masks: { type: 'string', multiple: true },
  pair: { type: 'string' },
  top: { type: 'string' },
  truncate: { type: 'boolean' },
  dtype: { type: 'string' },
  revision: { type: 'string' },
  tokenizer: { type: 'string' },
  color: { type: 'string' },
  json: { type: 'boolean' },
  rollout: { type: 'boolean' },
  position: { type: 'string' },
  ablate: { type: 'string' },
  lens: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
};

/** True when argv asks for the model command. */
export const isModelCommand = (argv) =>
  argv.some((arg) => arg === '--model' || arg.startsWith('--model='));

function wholeNumber(flag, text, max = Infinity) {
  if (!/^\d+$/.test(text) || Number(text) > max) {
    throw new UsageError(
      `${flag}: expected a whole number${max < Infinity ? ` up to ${max}` : ''}, got '${text}'`,
    );
  }
  return Number(text);
}

// --ablate 0.1,2.3:mean -> [{ layer, head, mode }]; the model checks the ranges.
function parseAblate(text) {
  return text.split(',').map((item) => {
    const match = /^(\d+)\.(\d+)(?::(zero|mean))?$/.exec(item.trim());
    if (!match) {
      throw new UsageError(
        `--ablate: expected layer.head[:mean] items like 0.1,2.3:mean, got '${item}'`,
      );
    }
    return { layer: Number(match[1]), head: Number(match[2]), mode: match[3] ?? 'zero' };
  });
}

/** argv (without node and the script) -> the command; UsageError for every mistake. */
export function parseModelCommand(argv) {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(error.message);
  }
  const { values, positionals } = parsed;
  if (values.help) return { help: true };
  if (!values.model) {
    throw new UsageError(
      '--model: expected stories260K, a folder, a checkpoint file or a model id',
    );
  }
  if (positionals.length === 0) throw new UsageError('missing the text to run the model on');
  if (values.dtype !== undefined && !WEIGHT_DTYPES.includes(values.dtype)) {
    throw new UsageError(
      `--dtype: expected one of ${WEIGHT_DTYPES.join(', ')}, got '${values.dtype}'`,
    );
  }
  if (values.color !== undefined && !COLOR_MODES.includes(values.color)) {
    throw new UsageError(
      `--color: expected one of ${COLOR_MODES.join(', ')}, got '${values.color}'`,
    );
  }
  if (values.position !== undefined && !values.rollout) {
    throw new UsageError('--position: only with --rollout');
  }
  for (const spec of values.masks ?? []) {
    try {
      parseMask(spec);
    } catch (error) {
      throw new UsageError(`--masks ${spec}: ${error.message.replace(/^mask: /, '')}`);
    }
  }
  return {
    source: values.model,
    text: positionals.join(' '),
    layer: values.layer === undefined ? 0 : wholeNumber('--layer', values.layer),
    head:
      values.head === undefined || values.head === 'all'
        ? (values.head ?? 0)
        : wholeNumber('--head', values.head),
    masks: values.masks,
    pair: values.pair,
    top: values.top === undefined ? 5 : wholeNumber('--top', values.top),
    truncate: Boolean(values.truncate),
    dtype: values.dtype ?? 'f32',
    revision: values.revision,
    tokenizer: values.tokenizer,
    color: values.color,
    json: Boolean(values.json),
    rollout: Boolean(values.rollout),
    position: values.position === undefined ? null : wholeNumber('--position', values.position),
    ablate: values.ablate === undefined ? [] : parseAblate(values.ablate),
    lens: Boolean(values.lens),
  };
}

// What a token shows as: its span of the text, or its vocabulary entry for specials.
const tokenLabel = (token, text, pair) =>
  token.special || token.start === token.end
    ? token.text
    : (token.segment === 1 ? pair : text).slice(token.start, token.end);

const percent = (p) => `${(100 * p).toFixed(1)}%`;

// What a prediction adds to the text, quoted; where that is no readable text (part of a
// character, nothing), its vocabulary entry unquoted (<0xE4>, </s>), as the page shows it.
const predictionText = (p) => sanitize(showsVocabularyEntry(p) ? p.token : JSON.stringify(p.text));

function predictionLines(model, run, labels, top) {
  const list = (predictions) =>
    predictions
      .slice(0, top)
      .map((p, i) => `  ${String(i + 1).padStart(2)}. ${predictionText(p)}  ${percent(p.p)}`);
  if (!model.info.predicts) return ['(this checkpoint has no masked-LM head: no predictions)'];
  if (model.info.causal) {
    const last = sanitize(JSON.stringify(labels.at(-1)));
    return [`next token after ${last}:`, ...list(run.predictions)];
  }
  if (run.predictions.length === 0) return ['(no [MASK] in the text: nothing to fill in)'];
  return run.predictions.flatMap(({ position, top: fills }) => [
    `[MASK] at ${position}:`,
    ...list(fills),
  ]);
}

/** Loads the model, runs it and returns the text (or JSON) to print. */
export async function runModelCommand(command, { colorMode, width, onProgress }) {
  const model = await loadModel(command.source, {
    dtype: command.dtype,
    ...(command.revision ? { revision: command.revision } : {}),
    ...(command.tokenizer ? { tokenizer: command.tokenizer } : {}),
    ...(onProgress ? { onProgress } : {}),
  });
  try {
    const { layers, heads } = model.info;
    if (command.layer >= layers) {
      throw new UsageError(
        `--layer: the model has ${layers} layers (0..${layers - 1}), got ${command.layer}`,
      );
    }
    if (command.head !== 'all' && command.head >= heads) {
      throw new UsageError(
        `--head: the model has ${heads} heads (0..${heads - 1}), got ${command.head}`,
      );
    }
    const masks = command.masks?.length === 1 ? command.masks[0] : command.masks;
    const started = performance.now();
    let run;
    try {
      run = await model.run(command.text, {
        ...(masks ? { masks } : {}),
        ...(command.pair !== undefined ? { pair: command.pair } : {}),
        topK: Math.max(1, Math.min(command.top, model.info.vocab)),
        truncate: command.truncate,
        ...(command.rollout ? { rollout: [command.position ?? 0] } : {}),
        ...(command.ablate.length ? { ablate: command.ablate } : {}),
        ...(command.lens ? { lens: true } : {}),
      });
    } catch (error) {
      if (error.parameter === 'rollout[0]') {
        throw new UsageError(`--position: ${error.message.replace(/^rollout\[0\]: /, '')}`);
      }
      if (error.parameter?.startsWith('ablate')) throw new UsageError(`--${error.message}`);
      if (error.parameter === 'lens') throw new UsageError(`--${error.message}`);
      if (error instanceof RangeError || error instanceof TypeError)
        throw new UsageError(error.message);
      throw error;
    }
    const ms = performance.now() - started;
    const labels = run.tokens.map((t) => tokenLabel(t, command.text, command.pair ?? ''));
    const n = labels.length;
    const shown = command.head === 'all' ? [...Array(heads).keys()] : [command.head];
    const layerMask =
      masks === undefined
        ? model.info.layerMasks[command.layer]
        : ([masks].flat()[command.layer] ?? [masks].flat()[0]);
    const read = command.rollout ? readRollout(model, run, command.position) : null;
    const headWeights = (h) =>
      run.attention.subarray(
        (command.layer * heads + h) * n * n,
        ((command.layer * heads + h) * n + n) * n,
      );
    if (command.json) {
      return JSON.stringify({
        model: model.info,
        layer: command.layer,
        mask: layerMask,
        tokens: run.tokens.map((t, i) => ({ ...t, label: labels[i] })),
        heads: shown.map((h) => ({
          head: h,
          weights: Array.from(headWeights(h), (x) => Number(x.toPrecision(9))),
        })),
        predictions: run.predictions,
        ...(read ? jsonRollout(read) : {}),
        ...(run.ablated ? { ablated: run.ablated } : {}),
        ...(run.lens ? { lens: jsonLens(run.lens) } : {}),
      });
    }
    const visibility = await maskMatrixOf(layerMask, n);
    const { info } = model;
    // The settings and the token list fit the terminal, or DEFAULT_WIDTH when piped.
    const listWidth = Number.isFinite(width) ? width : DEFAULT_WIDTH;
    const settings = [
      `attnlens · ${info.modelType}`,
      `${info.layers} layers × ${info.heads} heads` +
        (info.kvHeads < info.heads ? ` (${info.kvHeads} K/V)` : ''),
      `${(info.parameters / 1e6).toFixed(2)}M parameters`,
      `${n} tokens`,
      `layer ${command.layer}`,
      `mask ${layerMask}`,
      info.backend,
      `${ms.toFixed(1)} ms`,
      ...(run.ablated
        ? [`ablated ${run.ablated.map((a) => `${a.layer}.${a.head}:${a.mode}`).join(',')}`]
        : []),
    ];
    const lines = [
      ...wrapItems(settings, ' · ', listWidth),
      '',
      ...wrapItems(
        ['tokens:', ...labels.map((l, i) => `${i}·${sanitize(l)}`)],
        ' ',
        listWidth,
        '       ',
      ),
    ];
    for (const h of shown) {
      lines.push(
        '',
        `layer ${command.layer}, head ${h} of ${heads} — rows: queries, columns: keys`,
      );
      lines.push(
        ...renderHeatmap({
          weights: headWeights(h),
          mask: visibility,
          rowLabels: labels,
          columnLabels: labels,
          colorMode,
          maxWidth: width,
        }),
      );
    }
    if (read) lines.push('', ...rolloutLines(read, labels, model.info.causal));
    if (run.lens) lines.push('', ...lensLines(run.lens, labels));
    lines.push('', ...predictionLines(model, run, labels, command.top));
    return lines.join('\n');
  } finally {
    model.dispose();
  }
}

// --rollout: the rollout and flow of the asked position, or of the one the model predicts from
// (the position is only known once the text is tokenized: the run took position 0 to check it).
// A text past the flow's caps still gets its rollout, with the reason flow was left out.
function readRollout(model, run, asked) {
  const n = run.tokens.length;
  const { layers, heads } = model.info;
  const mask = run.tokens.findIndex((t) => t.id === model.tokenizer.special.mask?.id);
  const position = asked ?? (model.info.causal ? n - 1 : Math.max(0, mask));
  const shape = { layers, heads, n };
  const rollout = {
    positions: [position],
    values: attentionRollout(run.attention, shape, { rows: [position] }),
  };
  try {
    return {
      rollout,
      flow: { position, values: attentionFlow(run.attention, shape, { position }) },
      flowRefused: null,
    };
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    return { rollout, flow: null, flowRefused: error.message.replace(/^attention: /, '') };
  }
}

const rounded = (values) => Array.from(values, (x) => Number(x.toPrecision(9)));
const jsonRollout = ({ rollout, flow }) => ({
  rollout: { position: rollout.positions[0], values: rounded(rollout.values) },
  flow: flow && { position: flow.position, values: rounded(flow.values) },
});

// The lens as [state][position] lists of { id, token, text, p }.
const jsonLens = (lens) => ({
  topK: lens.topK,
  top: lens.top.map((rows) =>
    rows.map((row) =>
      row.map(({ id, token, text, p }) => ({ id, token, text, p: Number(p.toPrecision(6)) })),
    ),
  ),
});

// The [N, N] visibility of a mask in the notation, from the engine (the same mask the model ran;
// the models module, which the model already compiled, rather than a second download).
async function maskMatrixOf(notation, n) {
  const engine = await createAttention({ backend: 'wasm', models: true });
  try {
    return engine.maskMatrix({
      queryLength: n,
      keyLength: n,
      ...maskOptions(parseMask(notation), n),
    });
  } finally {
    engine.dispose();
  }
}
