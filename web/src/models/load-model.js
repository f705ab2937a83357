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
import {
  checkModelBackend,
  declineModel,
  gpuReason,
  MODEL_WEBGPU_MIN_FLOPS,
  openModelDevice,
} from './model-backend.js';
import { GpuDeclined } from '../webgpu/errors.js';
import { convertToFloat16 } from './files/dtypes.js';
import { quantizeQ8_0 } from './files/q8.js';
import { quantizeQ4_0 } from './files/q4.js';
import { WEIGHT_DTYPES } from './model-block.js';
import { createMarianTokenizer } from './marian-tokenizer.js';
import { createTokenizer } from './tokenizer.js';
import { VisionModel } from './vision-model.js';
import { readPooler } from './vision-pooler.js';
import { imageProcessor } from '../vision/preprocessor.js';

/**
 * The options loadModel accepts: loadModelFiles' plus dtype, attention (the engine), backend and
 * webgpu (where the forward pass runs: model-backend.js).
 */
export const MODEL_OPTIONS = Object.freeze([
  ...MODEL_FILES_OPTIONS,
  'dtype',
  'attention',
  'backend',
  'webgpu',
]);

export async function loadModel(source, options) {
  const opts = optionsObject(options, 'options', MODEL_OPTIONS);
  const dtype = oneOf(opts.dtype, 'dtype', WEIGHT_DTYPES, 'f32');
  // `attention`, as in analyze(): an instance to run on (its wasm memory holds the weights, and
  // it outlives the model); without one the model opens its own wasm engine and closes it.
  checkModelEngine(opts.attention);
  const where = checkModelBackend(opts);
  const fileOptions = Object.fromEntries(
    MODEL_FILES_OPTIONS.filter((key) => opts[key] !== undefined).map((key) => [key, opts[key]]),
  );
  const owned = opts.attention === undefined;
  const [files, engine, device] = await Promise.allSettled([
    loadModelFiles(source, fileOptions),
    owned ? openModelEngine() : opts.attention,
    openModelDevice(where),
  ]);
  const closeDevice = () => {
    const gpu = device.status === 'fulfilled' ? device.value.gpu : null;
    if (gpu?.owned) gpu.device.destroy();
  };
  if ([files, engine, device].some((settled) => settled.status === 'rejected')) {
    if (owned && engine.status === 'fulfilled') engine.value.dispose();
    closeDevice();
    throw [files, engine, device].find((settled) => settled.status === 'rejected').reason;
  }
  const place = { ...where, ...device.value };
  try {
    return await build(files.value, { attention: engine.value, owned }, dtype, place);
  } catch (error) {
    if (owned) engine.value.dispose();
    closeDevice();
    throw error;
  }
}

async function build(files, engine, dtype, place) {
  const { config, tensors } = files;
  const architecture = architectureOf(config);
  const core = architecture.coreConfig(config, tensors);
  const keyFor = architecture.keys(tensors, core);
  if (architecture.vision) {
    const plan = imageProcessor(files.preprocessor, architecture.processor);
    const pooler = readPooler(tensors, core.hidden); // before createCore lets the tensors go
    const gpu = await gpuForward(place, core, dtype);
    let model;
    try {
      model = createCore(engine, architecture, core, dtype, keyFor, tensors, gpu);
    } catch (error) {
      gpu.model?.dispose();
      throw error;
    }
    return new VisionModel({
      core: model,
      gpu,
      engine,
      config: core,
      modelType: config.model_type,
      dtype,
      source: files.source,
      plan,
      pooler,
    });
  }
  const tokenizer = files.tokenizer.marian
    ? await createMarianTokenizer(files.tokenizer.marian)
    : await createTokenizer(files.tokenizer);
  // Marian's vocab.json may leave ids unused: its largest id must still be the model's.
  const ids = Math.max(tokenizer.vocabSize, tokenizer.idLimit ?? 0);
  if (ids > core.vocab) {
    throw shapeError(
      files.tokenizer.marian ? 'vocab.json' : 'tokenizer.json',
      `${ids === tokenizer.vocabSize ? `has ${ids} tokens` : `has ids up to ${ids - 1}`}, ` +
        `more than the model's vocabulary of ${core.vocab} (vocab_size in config.json): the ` +
        'files come from different models',
    );
  }
  const gpu = await gpuForward(place, core, dtype);
  let model;
  try {
    model = createCore(engine, architecture, core, dtype, keyFor, tensors, gpu);
  } catch (error) {
    gpu.model?.dispose();
    throw error;
  }
  return new Model({
    core: model,
    gpu,
    engine,
    tokenizer,
    architecture,
    config: core,
    modelType: config.model_type,
    dtype,
    source: files.source,
  });
}

// Where `core` runs: { model (a GpuModel to fill), backend, reason, minFlops } or, without a GPU
// forward, { model: null, backend, reason }. The GPU forward is loaded only with a device.
async function gpuForward(place, core, dtype) {
  const { backend, webgpu } = place;
  if (!place.gpu) return { model: null, backend, reason: place.reason };
  const { GpuModel, gpuModelSupport } = await import('../webgpu/model/gpu-model.js');
  const refused = gpuModelSupport(core, dtype);
  if (refused) {
    if (place.gpu.owned) place.gpu.device.destroy();
    return { model: null, backend, reason: declineModel(backend, refused) };
  }
  const minFlops = webgpu.minFlops ?? MODEL_WEBGPU_MIN_FLOPS;
  return {
    model: new GpuModel(place.gpu, core),
    layers: core.layers,
    backend,
    minFlops,
    reason: gpuReason(backend, place.gpu.adapter, {
      minFlops,
      storage: webgpu.storage,
      dtype,
      vision: core.architecture === 'vit',
    }),
  };
}

// Copies every weight (as written, before the core packs its matrices) to the GPU. A weight
// larger than one binding: for 'webgpu' an error, for 'auto' the model stays on wasm.
function uploadWeights(gpu, model, weights) {
  try {
    const scales = Array.from({ length: gpu.layers }, (_, l) => model.layerScale(l));
    gpu.model.setLayerScales(scales);
    for (const w of weights) gpu.model.upload(w.name, model.weightView(w), w);
  } catch (error) {
    if (!(error instanceof GpuDeclined)) throw error;
    gpu.model.dispose();
    gpu.model = null;
    gpu.reason = declineModel(gpu.backend, error.message);
  }
}

// The core model of `core` with every weight written from the tensors, which are then let go
// (and, with a GPU forward, uploaded to it).
function createCore(engine, architecture, core, dtype, keyFor, tensors, gpu = null) {
  let model;
  try {
    model = new CoreModel(wasmBackendOf(engine.attention, 'attention').module, { ...core, dtype });
  } catch (error) {
    throw configError(error, architecture);
  }
  try {
    checkNoExtraLayers(model.weights(), keyFor, core.layers, architecture);
    writeWeights(model, tensors, keyFor, {
      checkpointShape: architecture.checkpointShape?.(core),
      computed: (name) => architecture.computedWeight?.(name, core),
      beforeFinalize: gpu?.model ? (weights) => uploadWeights(gpu, model, weights) : null,
    });
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
// converted as it is copied (F16/BF16/F64 to f32, or to half bits for dtype 'f16'; under 'q8' a
// linear layer's matrix as Q8_0 blocks, under 'q4' as 4-bit ones: a GGUF's own, or quantised).
// `checkpointShape(name, shape)`: where the architecture stores a weight in another shape of the
// same row-major elements (a patch convolution read as a linear layer), that shape. A weight
// the checkpoint lacks is an error unless the architecture computes it (`computed(name)`:
// Marian's static position table).
function writeWeights(model, tensors, keyFor, { checkpointShape, computed, beforeFinalize }) {
  const shapeOf = checkpointShape ?? ((name, shape) => shape);
  const weights = model.weights();
  const keys = new Map();
  const values = new Map();
  for (const w of weights) {
    try {
      keys.set(w.name, keyFor(w.name));
    } catch (error) {
      const made = error.code === 'not_found' ? computed(w.name) : null;
      if (!made) throw error;
      values.set(w.name, made);
      keys.set(w.name, w.name);
    }
  }
  for (const w of weights) {
    if (values.has(w.name)) continue;
    const key = keys.get(w.name);
    const { shape } = tensors.info(key);
    const expected = shapeOf(w.name, w.shape);
    if (!sameShape(shape, expected)) throw shapeMismatch(key, shape, expected);
  }
  for (const w of weights) {
    const view = model.weightView(w);
    const made = values.get(w.name);
    if (made) {
      const bytes = new Uint8Array(made.buffer, made.byteOffset, made.byteLength);
      if (w.dtype === 'q8') quantizeQ8_0(made, blockLayout(w), view, w.name);
      else if (w.dtype === 'q4') quantizeQ4_0(made, blockLayout(w), view, w.name);
      else if (w.dtype === 'f16') convertToFloat16(bytes, 'F32', view, 0, w.name);
      else view.set(made);
    } else if (w.dtype === 'q8') tensors.readQ8_0(keys.get(w.name), view, blockLayout(w));
    else if (w.dtype === 'q4') tensors.readQ4(keys.get(w.name), view, blockLayout(w));
    else if (w.dtype === 'f16') tensors.readFloat16(keys.get(w.name), view);
    else tensors.readFloat32(keys.get(w.name), view);
  }
  beforeFinalize?.(weights);
  // The core's errors (a NaN in a tensor) then name the checkpoint's tensors.
  model.finalize(weights.map((w) => keys.get(w.name)));
}

// A Q8_0 or 4-bit weight's matrix as the core states it: checkpoint shape [out, in] when
// transposed.
function blockLayout(w) {
  const [rows, columns] = w.shape;
  return w.transposed
    ? { inFeatures: columns, outFeatures: rows, transposed: true }
    : { inFeatures: rows, outFeatures: columns, transposed: false };
}

// Leading dimensions of 1 hold the same values (Marian's final_logits_bias is [1, vocab], a
// buffer kept 2-D to broadcast, where the core takes [vocab]).
function sameShape(actual, expected) {
  const squeezed = actual.slice(
    Math.max(
      0,
      actual.findIndex((size) => size !== 1),
    ),
  );
  const list = actual.length > expected.length ? squeezed : actual;
  return list.length === expected.length && list.every((size, d) => size === expected[d]);
}
