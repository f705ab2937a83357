// describeModel(source, options): what loading a model would take, before anything large is
// downloaded: its files and their sizes (listModelFiles: the Hub's listing, HEAD, File sizes),
// its shape from config.json, and the memory its weights will take in wasm as the core counts
// it (_modelSize: the exact layout loadModel allocates), with whether that fits and why not.

import { wasmBackendOf } from '../attention.js';
import { oneOf, optionsObject } from '../argument-checks.js';
import { architectureOf, configError } from './architectures/index.js';
import { coreModelSize } from './core-model.js';
import { listModelFiles, MODEL_FILES_OPTIONS } from './files/index.js';
import { WEIGHT_DTYPES } from './model-block.js';
import { checkModelEngine, openModelEngine } from './model-engine.js';

/** The options describeModel accepts: loadModelFiles' without onProgress, dtype, attention. */
export const DESCRIBE_OPTIONS = Object.freeze([
  ...MODEL_FILES_OPTIONS.filter((name) => name !== 'onProgress'),
  'dtype',
  'attention',
]);

/**
 * @returns {Promise<{ source, files, weightFiles, weightBytes, downloadBytes, allCached,
 *   modelType, layers, heads, hidden, vocab, maxPositions, causal, dtype, parameters,
 *   memoryBytes, loadScratchBytes, fits, reason, vision?, encoderLayers? }>} memoryBytes: the
 *   weights in wasm memory;
 *   loadScratchBytes: the extra the load needs for a moment; fits/reason: whether both fit the
 *   engine's memory, and the message loadModel would refuse it with when they do not; vision
 *   (true) and encoderLayers as the loaded model's info will have them: one that reads pictures,
 *   one that translates.
 */
export async function describeModel(source, options) {
  const opts = optionsObject(options, 'options', DESCRIBE_OPTIONS);
  const dtype = oneOf(opts.dtype, 'dtype', WEIGHT_DTYPES, 'f32');
  checkModelEngine(opts.attention);
  const listOptions = Object.fromEntries(
    DESCRIBE_OPTIONS.filter((key) => key !== 'dtype' && key !== 'attention')
      .filter((key) => opts[key] !== undefined)
      .map((key) => [key, opts[key]]),
  );
  const listed = await listModelFiles(source, listOptions);
  const architecture = architectureOf(listed.config);
  // Without the tensors, BERT's masked-LM head is assumed present: its few weights make this
  // an upper bound for BertModel files.
  const core = { ...architecture.coreConfig(listed.config, null), dtype };
  const attention = opts.attention ?? (await openModelEngine());
  let size;
  try {
    size = coreModelSize(wasmBackendOf(attention, 'attention').module, core);
  } catch (error) {
    throw configError(error, architecture);
  } finally {
    if (opts.attention === undefined) attention.dispose();
  }
  const { config, ...files } = listed;
  return {
    ...files,
    modelType: config.model_type,
    layers: core.layers,
    heads: core.heads,
    hidden: core.hidden,
    vocab: core.vocab,
    maxPositions: core.maxPositions,
    causal: architecture.causal,
    dtype,
    parameters: size.parameters,
    memoryBytes: size.weightBytes,
    loadScratchBytes: size.loadScratchBytes,
    fits: size.fits,
    reason: size.reason,
    ...(architecture.vision ? { vision: true } : {}),
    ...(architecture.encoderDecoder ? { encoderLayers: core.encoderLayers } : {}),
  };
}
