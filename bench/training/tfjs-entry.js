// TensorFlow.js for the training benchmark, bundled by train.mjs (esbuild): tfjs-core's ES
// bundle registers no gradients (tf.variableGrads needs them; @tensorflow/tfjs would import
// them), and its dist modules import without file extensions, which a page cannot load.
import '@tensorflow/tfjs-core/dist/register_all_gradients';

export * as tf from '@tensorflow/tfjs-core';
export * as wasm from '@tensorflow/tfjs-backend-wasm';
