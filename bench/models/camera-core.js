// The camera benchmark (camera.mjs), the same code in Node and in headless Chromium: DeiT-tiny
// following a camera, frame after frame, from a 640 x 480 RGBA picture to every layer's and
// head's map plus what the page's Picture mode computes from them each frame (the class token's
// rollout and every head's mean attention distance). One frame is in flight at a time, as the
// page runs it (a frame that arrives meanwhile is dropped), so frames per second are 1000 / the
// time a frame takes.
//
// `sides` are builds of attnlens' web/src to compare (e.g. main's and this tree's), their frames
// alternating in one run: `before` calls run(picture) as it always could, `after` with a reused
// attentionBuffer when the build takes one. Each frame is split into its parts: the
// preprocessing alone (the side's own, into a Float32Array, timed on the same frame), the rest
// of run() (copies into wasm, the forward, the maps copied out), then rollout and distances.

import { cameraFrame } from './vision-core.js';
import { median } from './forward-core.js';

/** A side's modules from a web/src folder URL (ending in /). */
export async function sideModules(src) {
  const [models, index, input, pre, rollout, distance] = await Promise.all(
    [
      'models/index.js',
      'index.js',
      'vision/image-input.js',
      'vision/preprocessor.js',
      'interpret/rollout.js',
      'interpret/attention-distance.js',
    ].map((path) => import(new URL(path, src).href)),
  );
  return {
    loadModel: models.loadModel,
    createAttention: index.createAttention,
    readPixels: input.readImagePixels ?? input.readImage,
    preprocessImage: pre.preprocessImage,
    imageProcessor: pre.imageProcessor,
    interpret: {
      attentionRollout: rollout.attentionRollout,
      meanAttentionDistance: distance.meanAttentionDistance,
    },
    // Builds with run({ attentionBuffer }) take the maps into a reused buffer.
    buffer: Boolean(input.readImagePixels),
  };
}

/** `count` camera frames: the vision benchmark's picture with its disc moving across. */
export function movingFrames(count = 8, width = 640, height = 480) {
  const base = cameraFrame(width, height);
  return Array.from({ length: count }, (_, f) => {
    const data = new Uint8ClampedArray(base.data);
    const cx = (0.2 + (0.6 * f) / count) * width;
    for (let y = 0; y < height; y++) {
      for (let x = Math.max(0, Math.floor(cx - 40)); x < Math.min(width, cx + 40); x++) {
        if ((x - cx) ** 2 + (y - 0.5 * height) ** 2 < 1600) data[(y * width + x) * 4 + 1] = 250;
      }
    }
    return { data, width, height };
  });
}

/**
 * One side's frame function: `frame(picture)` runs the model and the page's per-frame work and
 * returns its parts in ms.
 * @param {{ name, model, interpret: { attentionRollout, meanAttentionDistance },
 *   preprocess: (picture) => unknown, buffer: boolean }} side
 * @param {() => number | Promise<number>} [cpuMs] the process's CPU time so far, in ms
 */
export function frameRunner(side, cpuMs) {
  const { model, interpret } = side;
  const { layers, heads, patchSize } = model.info;
  let buffer = null;
  return async (picture) => {
    const t0 = performance.now();
    await side.preprocess(picture);
    const c1 = cpuMs ? await cpuMs() : null;
    const t1 = performance.now();
    const options = buffer ? { attentionBuffer: buffer } : {};
    const run = await model.run(picture, options);
    const t2 = performance.now();
    const shape = { layers, heads, n: run.tokens };
    const rollout = interpret.attentionRollout(run.attention, shape, { rows: [0] });
    interpret.meanAttentionDistance(run.attention, shape, {
      ...run.grid,
      patchSize,
      first: 1 + run.registers,
    });
    const t3 = performance.now();
    const cpu = cpuMs ? (await cpuMs()) - c1 : null;
    if (side.buffer && !buffer) buffer = new Float32Array(run.attention.length);
    return {
      frameMs: t3 - t1,
      preprocessMs: t1 - t0,
      runMs: t2 - t1,
      interpretMs: t3 - t2,
      cpu,
      rollout,
      attention: run.attention,
    };
  };
}

/**
 * Frames alternating between the sides, `frames` timed each after two untimed; logs a line per
 * side and returns the rows.
 * @param {{ sides: object[], pictures: object[], frames: number, log: Function,
 *   cpuMs?: () => number | Promise<number>, still?: object }} options `still`: the picture the
 *   sides' maps are compared on (pictures[0] by default; a live video's frames change)
 */
export async function runCameraBenchmark({ sides, pictures, frames, log, cpuMs, still }) {
  const runners = sides.map((side) => frameRunner(side, cpuMs));
  const times = sides.map(() => []);
  // Untimed: compilation, the first allocations, and each side's buffer.
  const firsts = [];
  for (const run of runners) {
    await run(pictures[0]);
    const first = await run(still ?? pictures[0]);
    firsts.push({ ...first, attention: first.attention.slice() }); // a buffer is overwritten
  }
  for (let f = 0; f < frames; f++) {
    const picture = pictures[f % pictures.length];
    const order = f % 2 ? [...runners.keys()].reverse() : [...runners.keys()];
    for (const s of order) {
      const result = await runners[s](picture);
      delete result.rollout;
      delete result.attention;
      times[s].push(result);
    }
  }
  const rows = sides.map((side, s) => {
    const t = times[s];
    const row = {
      side: side.name,
      frames: t.length,
      frameMs: median(t.map((x) => x.frameMs)),
      preprocessMs: median(t.map((x) => x.preprocessMs)),
      runMs: median(t.map((x) => x.runMs)),
      interpretMs: median(t.map((x) => x.interpretMs)),
      bestMs: Math.min(...t.map((x) => x.frameMs)),
      cpuMs: cpuMs ? median(t.map((x) => x.cpu)) : null,
    };
    row.fps = 1000 / row.frameMs;
    const cpu =
      row.cpuMs === null
        ? ''
        : `; CPU ${row.cpuMs.toFixed(1)} ms a frame (${(1000 / row.cpuMs).toFixed(1)} frames/s ` +
          `on a core of its own)`;
    log(
      `${side.name}: ${row.frameMs.toFixed(1)} ms a frame, ${row.fps.toFixed(1)} frames/s ` +
        `(median of ${row.frames}; best ${row.bestMs.toFixed(1)} ms): run() ` +
        `${row.runMs.toFixed(1)} ms, of which preprocessing ~${row.preprocessMs.toFixed(1)} ms; ` +
        `rollout and distances ${row.interpretMs.toFixed(1)} ms${cpu}`,
    );
    return row;
  });
  for (let s = 1; s < sides.length; s++) {
    const ratio = median(times[0].map((x, f) => x.frameMs / times[s][f].frameMs));
    const same = maxDifference(firsts[0].attention, firsts[s].attention);
    const sameRollout = maxDifference(firsts[0].rollout, firsts[s].rollout);
    log(
      `${sides[s].name} against ${sides[0].name}: ${ratio.toFixed(2)}x the frame rate (median ` +
        `of the frames' ratios); attention max |diff| ${same.toExponential(1)}, rollout ` +
        `${sameRollout.toExponential(1)}`,
    );
  }
  return rows;
}

function maxDifference(a, b) {
  let worst = a.length === b.length ? 0 : Infinity;
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    worst = Math.max(worst, Math.abs(a[i] - b[i]));
  }
  return worst;
}
