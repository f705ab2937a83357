// The benchmark page (train.mjs): attnlens/train and TensorFlow.js's wasm backend on one thread.
import { tf, wasm } from './build/tfjs.js';
import * as api from '../../web/src/train/index.js';
import { runTrainingBenchmark } from './train-core.js';

window.runBenchmark = async ({ seconds }) => {
  wasm.setWasmPaths(
    new URL('/bench/peers/node_modules/@tensorflow/tfjs-backend-wasm/dist/', location.href).href,
  );
  wasm.setThreadsCount(1);
  if (!(await tf.setBackend('wasm'))) throw new Error('tf.setBackend("wasm") failed');
  await tf.ready();
  const simd = await tf.env().getAsync('WASM_HAS_SIMD_SUPPORT');
  const tfjsDetail = `${tf.version_core}, SIMD ${simd}, ${wasm.getThreadsCount()} thread`;
  return runTrainingBenchmark({ api, tf, tfjsDetail, seconds, log: console.log });
};
document.body.dataset.ready = 'true';
