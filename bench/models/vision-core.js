// The vision benchmark, the same code in Node and in headless Chromium (vision.mjs runs it in
// both): a camera-sized picture to every layer's and head's attention map, through attnlens'
// model.run(image) and through onnxruntime-web's wasm execution provider running the same
// weights (build_vision_models.py), one thread each, the two sides' calls alternating.
//
// Both sides start from the same picture (640 x 480 RGBA pixels, as a camera frame or an
// ImageData gives them) and end with every layer's attention probabilities [12, heads, 197,
// 197] and the 1000 logits in JavaScript. attnlens' time is model.run(picture): reading the
// pixels, its preprocessing (resize, crop, normalise as preprocessor_config.json says), the
// forward pass and the copies out of wasm memory. onnxruntime's is the same JavaScript
// preprocessing (attnlens' readImage and preprocessImage, the one a page would otherwise have to
// write) plus session.run() on the tensor; its preprocessing is also timed on its own, so the
// line also shows the two from the preprocessed tensor (attnlens' side: its call less that
// preprocessing time, measured in the same pair).

import { maxDifference, median } from './forward-core.js';

/** The picture both sides read: a 640 x 480 RGBA frame of gradients and a disc (deterministic). */
export function cameraFrame(width = 640, height = 480) {
  const data = new Uint8ClampedArray(width * height * 4);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 4;
      const inDisc = (x - 0.6 * width) ** 2 + (y - 0.45 * height) ** 2 < (0.2 * height) ** 2;
      data[i] = inDisc ? 220 : (255 * x) / width;
      data[i + 1] = inDisc ? 40 + ((x * 7) % 50) : (255 * y) / height;
      data[i + 2] = (x ^ y) & 255;
      data[i + 3] = 255;
    }
  }
  return { data, width, height };
}

const argmax = (values) => {
  let best = 0;
  for (let i = 1; i < values.length; i++) if (values[i] > values[best]) best = i;
  return best;
};

/**
 * @param {object} options
 * @param {Function} options.loadModel attnlens/models' loadModel
 * @param {Function} options.createAttention attnlens' createAttention
 * @param {{ readImage, preprocessImage, imageProcessor }} options.vision attnlens' own
 *   vision/image-input.js and vision/preprocessor.js functions (onnxruntime's preprocessing)
 * @param {object} options.ort onnxruntime-web
 * @param {{ name, title, folder, onnx: Uint8Array, preprocessor: object, pairs }[]}
 *   options.models the Hugging Face folder (path or URL), the ONNX bytes and the parsed
 *   preprocessor_config.json of each model; `pairs` timed calls per side
 * @param {string} options.backend attnlens' wasm flavour ('wasm': the best this engine runs)
 * @param {() => number | Promise<number>} [options.cpuMs] CPU time so far in ms of the process
 *   that runs both sides (Node's; Chromium's renderer, read by vision.mjs from /proc)
 * @param {(line: string) => void} options.log
 */
export async function runVisionBenchmark(options) {
  const { loadModel, createAttention, vision, ort, models, backend, log } = options;
  // CPU time where the host gives one (read before the clock starts and after it stops).
  const cpuNow = async () => (options.cpuMs ? options.cpuMs() : null);
  const cpuSince = async (c0) => (c0 === null ? null : (await cpuNow()) - c0);
  const picture = cameraFrame();
  const attention = await createAttention({ backend, threads: 1, models: true });
  ort.env.wasm.numThreads = 1;
  ort.env.logLevel = 'error';
  const rows = [];
  for (const spec of models) {
    const model = await loadModel(spec.folder, { attention });
    const session = await ort.InferenceSession.create(spec.onnx, {
      executionProviders: ['wasm'],
      graphOptimizationLevel: 'all',
    });
    const plan = vision.imageProcessor(spec.preprocessor);
    if (rows.length === 0) {
      log(
        `attnlens ${model.info.backend}, onnxruntime-web ${ort.env.versions?.web ?? ''} ` +
          `(wasm EP); picture ${picture.width} x ${picture.height} RGBA`,
      );
    }
    const ours = async () => {
      const c0 = await cpuNow();
      const t0 = performance.now();
      const result = await model.run(picture, { returnLogits: true, topK: 1 });
      const ms = performance.now() - t0;
      return { ms, cpu: await cpuSince(c0), result };
    };
    const theirs = async () => {
      const c0 = await cpuNow();
      const t0 = performance.now();
      const input = vision.preprocessImage(await vision.readImage(picture), plan);
      const t1 = performance.now();
      const pixels = new ort.Tensor('float32', input.pixelValues, [3, input.height, input.width]);
      const result = await session.run({ pixel_values: pixels });
      const t2 = performance.now();
      return { ms: t2 - t0, cpu: await cpuSince(c0), preprocessMs: t1 - t0, result };
    };
    // One untimed call each (compilation, first allocations), which also checks the outputs.
    const first = { ours: (await ours()).result, theirs: (await theirs()).result };
    const attentionDiff = maxDifference(first.ours.attention, first.theirs.attention.data);
    const logitDiff = maxDifference(first.ours.logits, first.theirs.logits.data);
    const sameTop = first.ours.labels[0].index === argmax(first.theirs.logits.data);
    const pairs = [];
    for (let r = 0; r < spec.pairs; r++) {
      // Alternate which side goes first, so neither always follows the other's allocations.
      const [a, b] = r % 2 ? [await theirs(), await ours()] : [await ours(), await theirs()];
      const [o, t] = r % 2 ? [b, a] : [a, b];
      delete o.result; // the maps are not kept: a ViT-base call returns 22 MB of them
      delete t.result;
      pairs.push({ ours: o, theirs: t });
    }
    const row = {
      model: spec.name,
      title: spec.title,
      tokens: first.ours.tokens,
      pairs: pairs.length,
      attnlensMs: median(pairs.map((p) => p.ours.ms)),
      ortMs: median(pairs.map((p) => p.theirs.ms)),
      preprocessMs: median(pairs.map((p) => p.theirs.preprocessMs)),
      ratio: median(pairs.map((p) => p.theirs.ms / p.ours.ms)),
      tensorRatio: median(
        pairs.map(
          (p) => (p.theirs.ms - p.theirs.preprocessMs) / (p.ours.ms - p.theirs.preprocessMs),
        ),
      ),
      attnlensBestMs: Math.min(...pairs.map((p) => p.ours.ms)),
      ortBestMs: Math.min(...pairs.map((p) => p.theirs.ms)),
      attentionDiff,
      logitDiff,
      sameTop,
    };
    row.attnlensFps = 1000 / row.attnlensMs;
    row.ortFps = 1000 / row.ortMs;
    if (pairs[0].ours.cpu !== null) {
      row.attnlensCpuMs = median(pairs.map((p) => p.ours.cpu));
      row.ortCpuMs = median(pairs.map((p) => p.theirs.cpu));
      row.cpuRatio = median(pairs.map((p) => p.theirs.cpu / p.ours.cpu));
    }
    rows.push(row);
    const { layers, heads } = model.info;
    const cpu =
      row.cpuRatio === undefined
        ? ''
        : `; CPU ${row.attnlensCpuMs.toFixed(0)} ms (${(1000 / row.attnlensCpuMs).toFixed(1)} ` +
          `frames/s on a core of its own) against ${row.ortCpuMs.toFixed(0)} ms, ` +
          `${row.cpuRatio.toFixed(2)}x`;
    log(
      `${spec.title}, picture to ${layers}x${heads}x${row.tokens}x${row.tokens} maps: attnlens ` +
        `${row.attnlensMs.toFixed(1)} ms (${row.attnlensFps.toFixed(1)} frames/s), ` +
        `onnxruntime-web ${row.ortMs.toFixed(1)} ms (${row.ortFps.toFixed(1)} frames/s): ` +
        `attnlens ${row.ratio.toFixed(2)}x faster (median of ${row.pairs} pairs' ratios${cpu}); ` +
        `from the tensor ${row.tensorRatio.toFixed(2)}x (preprocessing ` +
        `${row.preprocessMs.toFixed(1)} ms); best ${row.attnlensBestMs.toFixed(1)} against ` +
        `${row.ortBestMs.toFixed(1)} ms; attention max |diff| ${attentionDiff.toExponential(1)}, ` +
        `logits ${logitDiff.toExponential(1)}, same top label: ${sameTop}`,
    );
    model.dispose();
    await session.release?.();
  }
  attention.dispose();
  return { rows };
}
