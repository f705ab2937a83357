// The generation benchmark, the same code in Node and in headless Chromium (generate.mjs runs it
// in both): greedy decoding on GPT-2-small-shaped weights, attnlens' model.generate() against
// onnxruntime-web's wasm execution provider running the same weights as a decoder with past
// key/values (build_models.py's gpt2-small-decode.onnx), one thread each, calls alternating.
//
// Each side does what a user of it does for `newTokens` tokens after the prompt:
//   attnlens      model.generate(text, { maxTokens, temperature: 0, onToken }): tokenizing, the
//                 prompt's forward into the KV cache, then one step per token (the last token
//                 is run too, for its row of attention), each token's attention row and text
//                 coming out through onToken
//   onnxruntime   the prompt's ids through the graph with an empty past, then one run per token
//                 with the previous run's present key/values as its past (they come back to
//                 JavaScript each run, as onnxruntime-web returns outputs), argmax in JavaScript
// Time to first token: from the call to the first token's id. Tokens per second: the new tokens
// over the whole call, and the steady rate of the steps after the first token.

import { median } from './forward-core.js';

// An English paragraph; its first `promptTokens` GPT-2 tokens are the prompt.
const PARAGRAPH =
  'The history of the city begins with a small settlement by the river, where traders met ' +
  'to exchange grain, salt and cloth. Over the centuries it grew into a market town, then a ' +
  'port, and its people learned to build bridges, schools and a library that still stands. ';

/** The index of the largest of `values` (the first on ties). */
export function argmax(values) {
  let best = 0;
  for (let i = 1; i < values.length; i++) if (values[i] > values[best]) best = i;
  return best;
}

/** Greedy decoding through the decode graph: { ids, stamps } (performance.now() per token). */
export async function ortGreedy(ort, session, promptIds, newTokens, layers, heads, headSize) {
  const tensor = (type, data, dims) => new ort.Tensor(type, data, dims);
  const ids = [];
  const stamps = [];
  let past = {};
  for (let l = 0; l < layers; l++) {
    for (const kind of ['key', 'value']) {
      past[`past_key_values.${l}.${kind}`] = tensor('float32', new Float32Array(0), [
        1,
        heads,
        0,
        headSize,
      ]);
    }
  }
  let input = promptIds;
  let position = 0;
  for (;;) {
    const total = position + input.length;
    const out = await session.run({
      input_ids: tensor('int64', BigInt64Array.from(input, BigInt), [1, input.length]),
      attention_mask: tensor('int64', new BigInt64Array(total).fill(1n), [1, total]),
      position_ids: tensor(
        'int64',
        BigInt64Array.from(input, (_, i) => BigInt(position + i)),
        [1, input.length],
      ),
      ...past,
    });
    const id = argmax(out.logits.data);
    ids.push(id);
    stamps.push(performance.now());
    if (ids.length === newTokens) break;
    past = {};
    for (let l = 0; l < layers; l++) {
      for (const kind of ['key', 'value']) {
        past[`past_key_values.${l}.${kind}`] = out[`present.${l}.${kind}`];
      }
    }
    position = total;
    input = [id];
  }
  return { ids, stamps };
}

const describeSide = ({ perSecond, firstMs, stepMs }) =>
  `${perSecond.toFixed(2)} tokens/s (first token ${firstMs.toFixed(0)} ms, then ` +
  `${stepMs.toFixed(0)} ms/token)`;

/** One side's timing from its start and per-token stamps. */
function timing(start, stamps) {
  const total = stamps.at(-1) - start;
  return {
    firstMs: stamps[0] - start,
    totalMs: total,
    perSecond: (stamps.length * 1000) / total,
    stepMs: (stamps.at(-1) - stamps[0]) / (stamps.length - 1),
  };
}

/**
 * @param {object} options
 * @param {Function} options.loadModel attnlens/models' loadModel
 * @param {Function} options.createAttention attnlens' createAttention
 * @param {object} options.ort onnxruntime-web
 * @param {Uint8Array} options.onnx the gpt2-small-decode.onnx bytes
 * @param {string} options.gpt2 the gpt2-small folder (path or URL)
 * @param {number} options.promptTokens / options.newTokens / options.pairs
 * @param {string} options.backend attnlens' wasm flavour
 * @param {(line: string) => void} options.log
 */
export async function runGenerateBenchmark(options) {
  const { loadModel, createAttention, ort, onnx, promptTokens, newTokens, pairs, log } = options;
  const attention = await createAttention({ backend: options.backend, threads: 1, models: true });
  const model = await loadModel(options.gpt2, { attention });
  ort.env.wasm.numThreads = 1;
  ort.env.logLevel = 'error';
  const session = await ort.InferenceSession.create(onnx, {
    executionProviders: ['wasm'],
    graphOptimizationLevel: 'all',
  });
  const { layers, heads, hidden } = model.info;
  const all = model.tokenizer.encode(PARAGRAPH.repeat(4)).ids;
  const text = model.tokenizer.decode(all.slice(0, promptTokens));
  const promptIds = model.tokenizer.encode(text).ids;
  log(
    `attnlens ${model.info.backend}, onnxruntime-web ${ort.env.versions?.web ?? ''} (wasm EP, ` +
      `past key/values); GPT-2 small shape, greedy, ${promptIds.length}-token prompt, ` +
      `${newTokens} new tokens, ${pairs} pairs of alternating calls`,
  );

  const ours = async () => {
    const stamps = [];
    const start = performance.now();
    const result = await model.generate(text, {
      maxTokens: newTokens,
      temperature: 0,
      onToken: () => stamps.push(performance.now()),
    });
    return { ids: result.ids, ...timing(start, stamps) };
  };
  const theirs = async () => {
    const start = performance.now();
    const { ids, stamps } = await ortGreedy(
      ort,
      session,
      promptIds,
      newTokens,
      layers,
      heads,
      hidden / heads,
    );
    return { ids, ...timing(start, stamps) };
  };

  // One untimed call each (compilation, first allocations), which also compares the tokens.
  const first = [await ours(), await theirs()];
  const same =
    first[0].ids.length === first[1].ids.length &&
    first[0].ids.every((id, i) => id === first[1].ids[i]);
  log(
    `same ${newTokens} token ids from both: ${same}` +
      (same
        ? ` (${first[0].ids.slice(0, 8).join(', ')}, ...)`
        : `\n  attnlens    ${first[0].ids.join(',')}\n  onnxruntime ${first[1].ids.join(',')}`),
  );
  const rows = [];
  for (let pair = 0; pair < pairs; pair++) {
    // Which side goes first alternates too: neither always runs after the other's garbage.
    let a;
    let b;
    if (pair % 2) {
      b = await theirs();
      a = await ours();
    } else {
      a = await ours();
      b = await theirs();
    }
    rows.push({
      attnlens: a,
      ort: b,
      ratio: a.perSecond / b.perSecond,
      stepRatio: b.stepMs / a.stepMs,
    });
    log(
      `pair ${pair + 1}: attnlens ${describeSide(a)}, onnxruntime-web ${describeSide(b)}: ` +
        `attnlens ${rows.at(-1).ratio.toFixed(2)}x`,
    );
  }
  const sideMedians = (side) =>
    Object.fromEntries(
      ['perSecond', 'firstMs', 'stepMs'].map((key) => [key, median(rows.map((r) => r[side][key]))]),
    );
  const summary = {
    same,
    attnlens: sideMedians('attnlens'),
    ort: sideMedians('ort'),
    ratio: median(rows.map((r) => r.ratio)),
    stepRatio: median(rows.map((r) => r.stepRatio)),
  };
  log(
    `medians of ${pairs}: attnlens ${describeSide(summary.attnlens)}, onnxruntime-web ` +
      `${describeSide(summary.ort)}; per-pair ratio ${summary.ratio.toFixed(2)}x (whole call), ` +
      `${summary.stepRatio.toFixed(2)}x (steps after the first token)`,
  );
  model.dispose();
  await session.release?.();
  attention.dispose();
  return summary;
}
