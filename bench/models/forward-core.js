// The forward-pass benchmark, the same code in Node and in headless Chromium (forward.mjs runs it
// in both): GPT-2-small-shaped weights through attnlens' model.run() and through
// onnxruntime-web's wasm execution provider on the same weights (build_models.py), one thread
// each, alternating calls; then text to all heatmaps for a TinyStories-1M-shaped model.
//
// Both sides do the same work: every layer's attention probabilities [12, 12, N, N] and the last
// position's logits come back to JavaScript. attnlens' time includes tokenizing the text and
// copying the results out of wasm memory; onnxruntime's includes copying its feeds in and its
// outputs out (session.run()); its feeds are built once per size, before timing.

/** Timed calls per side at n tokens: fewer where one takes seconds. */
export const repeatsFor = (n) => (n <= 64 ? 9 : n <= 256 ? 5 : 3);

/** The median of `values` (numbers). */
export const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

// A GPT-2 text of exactly n tokens: "the" then " the" n - 1 times (one token each).
export const textOfTokens = (n) => `the${' the'.repeat(n - 1)}`;

// The TinyStories case's text: a story's first 64 tokens, the text cut at the end of token 64
// and checked to give 64 again.
const STORY =
  'Once upon a time, there was a little girl named Lily. She loved to play outside in the ' +
  'park with her friends. One day, she saw a big red ball under a tree. She wanted to play ' +
  'with it, but it was too high. Lily asked her mom for help, and her mom smiled and said ' +
  'they could get it together. They found a long stick and pushed the ball down.';

/** The story's first 64 tokens under `tokenizer` (a loaded model's). */
export function storyOf64Tokens(tokenizer) {
  const story = STORY.slice(0, tokenizer.encode(STORY).tokens[63].end);
  const tokens = tokenizer.encode(story).ids.length;
  if (tokens !== 64) throw new Error(`the story gave ${tokens} tokens, not 64`);
  return story;
}

/** The additive causal mask [n, n] the GPT-2 forward graphs take: -FLT_MAX above the diagonal. */
export function causalMask(n) {
  const mask = new Float32Array(n * n);
  for (let i = 0; i < n; i++)
    for (let j = i + 1; j < n; j++) mask[i * n + j] = -3.4028234663852886e38;
  return mask;
}

/** The largest |a[i] - b[i]| over the first `length` elements. */
export function maxDifference(a, b, length = a.length) {
  let worst = 0;
  for (let i = 0; i < length; i++) worst = Math.max(worst, Math.abs(a[i] - b[i]));
  return worst;
}

/**
 * @param {object} options
 * @param {Function} options.loadModel attnlens/models' loadModel
 * @param {Function} options.createAttention attnlens' createAttention
 * @param {object} options.ort onnxruntime-web
 * @param {Uint8Array} options.onnx the gpt2-small.onnx bytes
 * @param {string} options.gpt2 / options.tinyStories model folders (paths or URLs)
 * @param {number[]} options.sizes token counts
 * @param {string} options.backend attnlens' wasm flavour ('wasm': the best this engine runs)
 * @param {(line: string) => void} options.log
 */
export async function runForwardBenchmark(options) {
  const { loadModel, createAttention, ort, onnx, sizes, backend, log } = options;
  const rows = [];
  const attention = await createAttention({ backend, threads: 1, models: true });
  const model = await loadModel(options.gpt2, { attention });
  ort.env.wasm.numThreads = 1;
  ort.env.logLevel = 'error';
  const session = await ort.InferenceSession.create(onnx, {
    executionProviders: ['wasm'],
    graphOptimizationLevel: 'all',
  });
  const { layers, heads, vocab } = model.info;
  log(`attnlens ${model.info.backend}, onnxruntime-web ${ort.env.versions?.web ?? ''} (wasm EP)`);
  for (const n of sizes) {
    const text = textOfTokens(n);
    const ids = model.tokenizer.encode(text).ids;
    if (ids.length !== n) throw new Error(`the text gave ${ids.length} tokens, not ${n}`);
    const mask = causalMask(n);
    const feeds = {
      ids: new ort.Tensor('int64', BigInt64Array.from(ids, BigInt), [n]),
      positions: new ort.Tensor(
        'int64',
        BigInt64Array.from(ids, (_, i) => BigInt(i)),
        [n],
      ),
      causal_mask: new ort.Tensor('float32', mask, [n, n]),
    };
    const timeOurs = async () => {
      const t0 = performance.now();
      const result = await model.run(text, { returnLogits: false });
      return [performance.now() - t0, result];
    };
    const timeTheirs = async () => {
      const t0 = performance.now();
      const result = await session.run(feeds);
      return [performance.now() - t0, result];
    };
    // One untimed call each (compilation, first allocations), which also checks the outputs.
    const [, ours] = await timeOurs();
    const [, theirs] = await timeTheirs();
    const attentionDiff = maxDifference(ours.attention, theirs.attention.data);
    const oursTop = ours.predictions[0].id;
    let theirsTop = 0;
    for (let v = 1; v < vocab; v++)
      if (theirs.logits.data[v] > theirs.logits.data[theirsTop]) theirsTop = v;
    const attnlensMs = [];
    const ortMs = [];
    for (let r = 0; r < repeatsFor(n); r++) {
      attnlensMs.push((await timeOurs())[0]);
      ortMs.push((await timeTheirs())[0]);
    }
    const row = {
      n,
      attnlens: median(attnlensMs),
      ort: median(ortMs),
      attentionDiff,
      sameTop: oursTop === theirsTop,
      calls: attnlensMs.length,
    };
    row.ratio = row.ort / row.attnlens;
    rows.push(row);
    log(
      `GPT-2 small, N = ${String(n).padStart(4)}: attnlens ${row.attnlens.toFixed(1)} ms, ` +
        `onnxruntime-web ${row.ort.toFixed(1)} ms: attnlens ${row.ratio.toFixed(2)}x faster ` +
        `(medians of ${row.calls}; attention max |diff| ${attentionDiff.toExponential(1)}, ` +
        `same top prediction: ${row.sameTop}; ${layers}x${heads}x${n}x${n} weights returned)`,
    );
  }
  model.dispose();
  await session.release?.();

  const tiny = await loadModel(options.tinyStories, { attention });
  const story = storyOf64Tokens(tiny.tokenizer);
  const tokens = 64;
  const tinyMs = [];
  await tiny.run(story);
  for (let r = 0; r < 30; r++) {
    const t0 = performance.now();
    await tiny.run(story);
    tinyMs.push(performance.now() - t0);
  }
  const tinyStories = { tokens, ms: median(tinyMs), best: Math.min(...tinyMs) };
  log(
    `TinyStories-1M shape (GPT-Neo 8 layers x 16 heads, hidden 64, vocab 50257): text to all ` +
      `heatmaps at ${tokens} tokens: ${tinyStories.ms.toFixed(2)} ms (median of 30, best ` +
      `${tinyStories.best.toFixed(2)} ms; tokenizing, 8 layers, the 50257-way prediction)`,
  );
  tiny.dispose();
  attention.dispose();
  return { rows, tinyStories };
}
