// loadModel(source, options): a real checkpoint, ready to run. The files (files/index.js) and
// the wasm engine load side by side; then the config and key names become the core's model
// (architectures/), every weight is written once, straight into wasm memory, and the file
// buffers are let go.

import { wasmBackendOf } from '../attention.js';
import { oneOf, optionsObject, shapeError } from '../argument-checks.js';
import { attnlensError } from '../errors.js';
import { architectureOf, configError } from './architectures/index.js';
import { CoreModel, shapeMismatch } from './core-model.js';
import { loadModelFiles, MODEL_FILES_OPTIONS } from './files/index.js';
import { Model } from './model.js';
import { checkModelEngine, openModelEngine } from './model-engine.js';
import { createTokenizer } from './tokenizer.js';
import { VisionModel } from './vision-model.js';
import { imageProcessor } from '../vision/preprocessor.js';

/** The options loadModel accepts: loadModelFiles' plus dtype and attention (the engine). */
export const MODEL_OPTIONS = Object.freeze([...MODEL_FILES_OPTIONS, 'dtype', 'attention']);

export async function loadModel(source, options) {
  const opts = optionsObject(options, 'options', MODEL_OPTIONS);
  const dtype = oneOf(opts.dtype, 'dtype', ['f32', 'f16'], 'f32');
  // `attention`, as in analyze(): an instance to run on (its wasm memory holds the weights, and
  // it outlives the model); without one the model opens its own wasm engine and closes it.
  checkModelEngine(opts.attention);
  const fileOptions = Object.fromEntries(
    MODEL_FILES_OPTIONS.filter((key) => opts[key] !== undefined).map((key) => [key, opts[key]]),
  );
  const owned = opts.attention === undefined;
  const [files, engine] = await Promise.allSettled([
    loadModelFiles(source, fileOptions),
    owned ? openModelEngine() : opts.attention,
  ]);
  if (files.status === 'rejected' || engine.status === 'rejected') {
    if (owned && engine.status === 'fulfilled') engine.value.dispose();
    throw files.status === 'rejected' ? files.reason : engine.reason;
  }
  try {
    return await build(files.value, { attention: engine.value, owned }, dtype);
  } catch (error) {
    if (owned) engine.value.dispose();
    throw error;
  }
}

async function build(files, engine, dtype) {
  const { config, tensors } = files;
  const architecture = architectureOf(config);
  const core = architecture.coreConfig(config, tensors);
  const keyFor = architecture.keys(tensors);
  if (architecture.vision) {
    const plan = imageProcessor(files.preprocessor, architecture.processor);
    const model = createCore(engine, architecture, core, dtype, keyFor, tensors);
    return new VisionModel({
      core: model,
      engine,
      config: core,
      modelType: config.model_type,
      dtype,
      source: files.source,
      plan,
    });
  }
  const tokenizer = await createTokenizer(files.tokenizer);
  if (tokenizer.vocabSize > core.vocab) {
    throw shapeError(
      'tokenizer.json',
      `has ${tokenizer.vocabSize} tokens, more than the model's vocabulary of ${core.vocab} ` +
        '(vocab_size in config.json): the files come from different models',
    );
  }
  const model = createCore(engine, architecture, core, dtype, keyFor, tensors);
  return new Model({
    core: model,
    engine,
    tokenizer,
    architecture,
    config: core,
    modelType: config.model_type,
    dtype,
    source: files.source,
  });
}

// The core model of `core` with every weight written from the tensors, which are then let go.
function createCore(engine, architecture, core, dtype, keyFor, tensors) {
  let model;
  try {
    model = new CoreModel(wasmBackendOf(engine.attention, 'attention').module, { ...core, dtype });
  } catch (error) {
    throw configError(error, architecture);
  }
  try {
    checkNoExtraLayers(model.weights(), keyFor, core.layers, architecture);
    writeWeights(model, tensors, keyFor, architecture.checkpointShape?.(core));
  } catch (error) {
    model.destroy();
    throw error;
  }
  tensors.release();
  return model;
}

// A config with fewer layers than the checkpoint holds would run a cut-down model whose
// attention and predictions look plausible and are wrong: refused, naming a tensor past the end.
function checkNoExtraLayers(weights, keyFor, layers, architecture) {
  const probe = weights.find((w) => w.name.startsWith('layers.0.'));
  if (!probe) return;
  let extra;
  try {
    extra = keyFor(probe.name.replace(/^layers\.0\./, `layers.${layers}.`));
  } catch {
    return;
  }
  throw attnlensError(
    'out_of_range',
    'config.json',
    `${architecture.configKeys.layers} is ${layers}, but the checkpoint holds more layers ` +
      `('${extra}'): config.json and the weights come from different models`,
  );
}

// Every core weight from its checkpoint tensor, checked against the shape the config implies,
// converted as it is copied (F16/BF16/F64 to f32, or to half bits for dtype 'f16').
// `checkpointShape(name, shape)`: where the architecture stores a weight in another shape of the
// same row-major elements (a patch convolution read as a linear layer), that shape.
function writeWeights(model, tensors, keyFor, checkpointShape = (name, shape) => shape) {
  const weights = model.weights();
  const keys = new Map(weights.map((w) => [w.name, keyFor(w.name)]));
  for (const w of weights) {
    const key = keys.get(w.name);
    const { shape } = tensors.info(key);
    const expected = checkpointShape(w.name, w.shape);
    if (shape.length !== expected.length || shape.some((size, d) => size !== expected[d])) {
      throw shapeMismatch(key, shape, expected);
    }
  }
  for (const w of weights) {
    const view = model.weightView(w);
    if (w.dtype === 'f16') tensors.readFloat16(keys.get(w.name), view);
    else tensors.readFloat32(keys.get(w.name), view);
  }
  // The core's errors (a NaN in a tensor) then name the checkpoint's tensors.
  model.finalize(weights.map((w) => keys.get(w.name)));
}
