// The benchmark page: window.runCase(spec) runs one case (core/run-case.js) in this page, and
// window.measurePeak() the SIMD128 probe. driver.mjs opens a fresh page per case and exposes
// window.rendererMemory(), which reads this renderer's memory from outside (pages cannot).

import { measurePeak } from '../core/peak.js';
import { runCase } from '../core/run-case.js';

const base = new URL('../', import.meta.url);

const platform = {
  name: `Chromium ${navigator.userAgent.match(/Chrome\/([\d.]+)/)?.[1] ?? ''}`,
  // Threads need SharedArrayBuffer, which a page only has when cross-origin isolated.
  sharedMemory: self.crossOriginIsolated === true,
  loadModel: async (name) => {
    const response = await fetch(new URL(`models/build/${name}.onnx`, base));
    if (!response.ok) throw new Error(`${name}.onnx: HTTP ${response.status}`);
    return new Uint8Array(await response.arrayBuffer());
  },
  memory: () => window.rendererMemory(),
  tfjsWasmPaths: new URL('node_modules/@tensorflow/tfjs-backend-wasm/dist/', base).href,
};

window.runCase = (spec) => runCase(spec, platform);
window.measurePeak = measurePeak;
document.body.dataset.ready = 'true';
