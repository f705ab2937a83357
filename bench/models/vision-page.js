// The vision benchmark page (vision.mjs --browser): the same vision-core.js, with the models
// fetched from this server.
import * as ort from 'onnxruntime-web';
import { createAttention } from '../../web/src/index.js';
import { loadModel } from '../../web/src/models/index.js';
import { readImage } from '../../web/src/vision/image-input.js';
import { imageProcessor, preprocessImage } from '../../web/src/vision/preprocessor.js';
import { runVisionBenchmark } from './vision-core.js';

const build = new URL('build/', import.meta.url);
ort.env.wasm.wasmPaths = new URL(
  '/bench/peers/node_modules/onnxruntime-web/dist/',
  location.href,
).href;

async function fetched(path) {
  const response = await fetch(new URL(path, build));
  if (!response.ok) throw new Error(`${path}: HTTP ${response.status}`);
  return response;
}

window.runBenchmark = async ({ models, backend }) => {
  const specs = [];
  for (const m of models) {
    specs.push({
      ...m,
      folder: new URL(`${m.name}/`, build).href,
      onnx: new Uint8Array(await (await fetched(`${m.name}.onnx`)).arrayBuffer()),
      preprocessor: await (await fetched(`${m.name}/preprocessor_config.json`)).json(),
    });
  }
  return runVisionBenchmark({
    loadModel,
    createAttention,
    vision: { readImage, preprocessImage, imageProcessor },
    ort,
    models: specs,
    backend,
    // vision.mjs reads the renderer's CPU time from /proc (page.exposeFunction).
    cpuMs: window.rendererCpuMs,
    log: console.log,
  });
};
document.body.dataset.ready = 'true';
