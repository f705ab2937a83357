// The architectures loadModel runs, by config.json's model_type: each turns the config into the
// core's config (bindings/models/model_block.h's create block) and the core's weight names into
// the checkpoint's keys.

import { attnlensError, describe } from '../../errors.js';
import { bert } from './bert.js';
import { dinov2, dinov2WithRegisters } from './dinov2.js';
import { gptNeo } from './gpt-neo.js';
import { gpt2 } from './gpt2.js';
import { llama } from './llama.js';
import { marian } from './marian.js';
import { qwen2 } from './qwen2.js';
import { vit } from './vit.js';

const BY_MODEL_TYPE = {
  gpt2,
  gpt_neo: gptNeo,
  bert,
  llama,
  qwen2,
  vit,
  dinov2,
  dinov2_with_registers: dinov2WithRegisters,
  marian,
};

/** The model_type values loadModel accepts. */
export const SUPPORTED_MODEL_TYPES = Object.freeze(Object.keys(BY_MODEL_TYPE));
/** Those whose models read pictures (preprocessor_config.json, model.run(image)). */
export const VISION_MODEL_TYPES = Object.freeze(
  SUPPORTED_MODEL_TYPES.filter((type) => BY_MODEL_TYPE[type].vision),
);

/**
 * An error the core raised about its config (parameter 'layers', 'layer_norm_eps', ...) as one
 * about config.json naming the checkpoint's own field (num_hidden_layers, rms_norm_eps, ...);
 * any other error as it is.
 */
export function configError(error, architecture) {
  const key = Object.hasOwn(architecture.configKeys, error?.parameter)
    ? architecture.configKeys[error.parameter]
    : null;
  if (key === null) return error;
  const detail = error.message.replace(new RegExp(`^${error.parameter}: `), '');
  return attnlensError(error.code, 'config.json', `${key} ${detail}`);
}

/** The architecture of a config.json, or an error naming its model_type and the supported ones. */
export function architectureOf(config) {
  const type = config.model_type;
  // Own properties only: 'constructor' or '__proto__' name no architecture.
  const architecture =
    typeof type === 'string' && Object.hasOwn(BY_MODEL_TYPE, type)
      ? BY_MODEL_TYPE[type]
      : undefined;
  if (!architecture) {
    throw attnlensError(
      'out_of_range',
      'model_type',
      `config.json's model_type ${describe(type)} is not supported (supported: ` +
        `${SUPPORTED_MODEL_TYPES.join(', ')})`,
    );
  }
  return architecture;
}
