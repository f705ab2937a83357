#!/usr/bin/env node
// DeiT-tiny following a camera: frames per second from a 640 x 480 picture to every head's map,
// the class token's rollout and the heads' distances (camera-core.js says what is timed).
// Numbers printed, never asserted. See bench/models/README.md.
//
//   node bench/models/camera.mjs [--before DIR] [--frames 40] [--backend wasm] [--browser]
//
// --before: another build's web/src (a checkout of main, say, with its src/wasm in place), run
// alternating with this tree's in the same process. In Chromium (--browser) the pictures are
// the frames of Chromium's fake camera (--use-fake-device-for-media-stream), read from a
// <video> with requestVideoFrameCallback; then a live phase runs this tree's build for a few
// seconds as the page would (a frame that comes while one is in flight is dropped) and counts
// the frames shown. Needs the models (build_vision_models.py into bench/models/build/).
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { loadAverage, processor } from './bench-page.mjs';

const { values } = parseArgs({
  options: {
    before: { type: 'string' },
    frames: { type: 'string', default: '40' },
    backend: { type: 'string', default: 'wasm' },
    model: { type: 'string', default: 'deit-tiny' },
    browser: { type: 'boolean', default: false },
    seconds: { type: 'string', default: '10' },
  },
});
const build = fileURLToPath(new URL('build/', import.meta.url));
const folder = resolve(build, values.model);
if (!existsSync(folder)) throw new Error(`${folder}: build the models first (README.md)`);
console.log(`${processor()}; load average before: ${loadAverage()} (1, 5, 15 min)`);

if (values.browser) {
  const { runInChromium } = await import('./camera-browser.mjs');
  await runInChromium({ ...values, build });
} else {
  const { runCameraBenchmark, movingFrames, sideModules } = await import('./camera-core.js');
  const config = JSON.parse(readFileSync(resolve(folder, 'preprocessor_config.json'), 'utf8'));
  const sources = [];
  if (values.before) sources.push(['before', pathToFileURL(`${resolve(values.before)}/`)]);
  sources.push(['after', new URL('../../web/src/', import.meta.url)]);
  const sides = [];
  for (const [name, src] of sources) {
    const m = await sideModules(src);
    const attention = await m.createAttention({
      backend: values.backend,
      threads: 1,
      models: true,
    });
    const model = await m.loadModel(folder, { attention });
    const plan = m.imageProcessor(config);
    sides.push({
      name: `${name} (${model.info.backend})`,
      model,
      attention,
      interpret: m.interpret,
      buffer: m.buffer,
      preprocess: async (picture) => m.preprocessImage(await m.readPixels(picture), plan),
    });
  }
  console.log(`Node ${process.version}, one thread, ${values.model}, 640 x 480 RGBA frames`);
  await runCameraBenchmark({
    sides,
    pictures: movingFrames(),
    frames: Number(values.frames),
    log: console.log,
    cpuMs: () => {
      const { user, system } = process.cpuUsage();
      return (user + system) / 1000;
    },
  });
  for (const side of sides) {
    side.model.dispose();
    side.attention.dispose();
  }
}
console.log(`load average after: ${loadAverage()} (1, 5, 15 min)`);
