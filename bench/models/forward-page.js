// The benchmark page (forward.mjs --browser): the same forward-core.js, with the models fetched
// from this server.
import * as ort from 'onnxruntime-web';
import { createAttention } from '../../web/src/index.js';
import { loadModel } from '../../web/src/models/index.js';
import { runForwardBenchmark } from './forward-core.js';

const build = new URL('build/', import.meta.url);
ort.env.wasm.wasmPaths = new URL(
  '/bench/peers/node_modules/onnxruntime-web/dist/',
  location.href,
).href;

window.runBenchmark = async ({ sizes, backend }) => {
  const response = await fetch(new URL('gpt2-small.onnx', build));
  if (!response.ok) throw new Error(`gpt2-small.onnx: HTTP ${response.status}`);
  const onnx = new Uint8Array(await response.arrayBuffer());
  return runForwardBenchmark({
    loadModel,
    createAttention,
    ort,
    onnx,
    gpt2: new URL('gpt2-small/', build).href,
    tinyStories: new URL('tinystories-1m/', build).href,
    sizes,
    backend,
    // Model files are read once per page; the Cache Storage copy would only grow the profile.
    log: console.log,
  });
};
document.body.dataset.ready = 'true';
