// The generation benchmark's page (generate.mjs --browser): the same generate-core.js, with the
// models fetched from this server.
import * as ort from 'onnxruntime-web';
import { createAttention } from '../../web/src/index.js';
import { loadModel } from '../../web/src/models/index.js';
import { runGenerateBenchmark } from './generate-core.js';

const build = new URL('build/', import.meta.url);
ort.env.wasm.wasmPaths = new URL(
  '/bench/peers/node_modules/onnxruntime-web/dist/',
  location.href,
).href;

window.runBenchmark = async (settings) => {
  const response = await fetch(new URL('gpt2-small-decode.onnx', build));
  if (!response.ok) throw new Error(`gpt2-small-decode.onnx: HTTP ${response.status}`);
  const onnx = new Uint8Array(await response.arrayBuffer());
  return runGenerateBenchmark({
    loadModel,
    createAttention,
    ort,
    onnx,
    gpt2: new URL('gpt2-small/', build).href,
    ...settings,
    log: console.log,
  });
};
document.body.dataset.ready = 'true';
