// The passes of one forward pass, by architecture, recorded into the encoder gpu-model.js opens
// (`run`: dispatch, uniforms, buffers by role, the weights by the core's names). Each returns the
// buffer holding the final norm's output, which the LM head reads.

import {
  ATTENTION_UNIFORMS,
  EMBED_UNIFORMS,
  EMBED_WORKGROUP,
  LINEAR_UNIFORMS,
  NORM_UNIFORMS,
  ROTARY_UNIFORMS,
  ROTARY_WORKGROUP,
} from './kernels.wgsl.js';
import { inverseFrequencies, rotaryTables } from './rotary-tables.js';

/** A core config's head width (the llama family may set its own). */
export const headDimOf = (config) => config.headDim ?? config.hidden / config.heads;

/**
 * Records the embeddings, every layer and the final norm; returns the final hidden states.
 * `input`: token ids, or for a vision transformer the unfolded patches [patches, C * P * P].
 */
export function encodeLayers(config, input, run) {
  if (config.architecture === 'gpt2') return gpt2Layers(config, input, run);
  if (config.architecture === 'vit') return vitLayers(config, input, run);
  return llamaLayers(config, input, run);
}

function embed(config, ids, run, x, positions) {
  const { n, buffers, weight } = run;
  const { hidden } = config;
  const params = run.uniform('embed', EMBED_UNIFORMS, { tokens: n, hidden, past: 0 });
  const idsBuffer = buffers.upload('ids', Uint32Array.from(ids));
  const resources = [params, idsBuffer, weight('token_embedding'), x];
  if (positions) resources.push(weight('position_embedding'));
  run.dispatch(run.pipelines.embed, resources, [Math.ceil((n * hidden) / EMBED_WORKGROUP)]);
}

const linearParams = (run, role, m, n, k) =>
  run.uniform(`linear:${role}`, LINEAR_UNIFORMS, { m, n, k, aRow: 0 });

// GPT-2: pre-LN blocks, c_attn packing q | k | v ([in, out] Conv1D weights), gelu_new.
function gpt2Layers(config, ids, run) {
  const { n, buffers: b, pipelines, weight } = run;
  const { layers, heads, hidden, intermediate, layerNormEps } = config;
  const headDim = headDimOf(config);
  const x = b.storage('x', 4 * n * hidden);
  const normed = b.storage('normed', 4 * n * hidden);
  const qkv = b.storage('qkv', 4 * n * 3 * hidden);
  const attended = b.storage('attended', 4 * n * hidden);
  const mlp = b.storage('mlp', 4 * n * intermediate);
  const probabilities = b.storage('probabilities', 4 * heads * n * n);
  const norm = run.uniform('norm', NORM_UNIFORMS, { columns: hidden, eps: layerNormEps });
  const qkvParams = linearParams(run, 'qkv', n, 3 * hidden, hidden);
  const projParams = linearParams(run, 'proj', n, hidden, hidden);
  const upParams = linearParams(run, 'up', n, intermediate, hidden);
  const downParams = linearParams(run, 'down', n, hidden, intermediate);
  embed(config, ids, run, x, true);
  for (let l = 0; l < layers; l++) {
    const at = (name) => weight(`layers.${l}.${name}`);
    const attentionParams = run.uniform(`attention:${l}`, ATTENTION_UNIFORMS, {
      tokens: n,
      headDim,
      qStride: 3 * hidden,
      kvStride: 3 * hidden,
      kOffset: hidden,
      vOffset: 2 * hidden,
      group: 1,
      outStride: hidden,
      scale: run.scales[l],
    });
    const layerNorm = (name) => [norm, x, at(`${name}.weight`), normed, at(`${name}.bias`)];
    run.dispatch(pipelines.norm, layerNorm('attention_norm'), [n]);
    run.dispatch(
      pipelines.linear,
      [qkvParams, normed, at('attention.qkv.weight'), at('attention.qkv.bias'), qkv],
      run.tiles(n, 3 * hidden),
    );
    run.dispatch(
      pipelines.attention,
      [attentionParams, qkv, qkv, qkv, probabilities, attended],
      [n, heads],
    );
    run.readAttention(probabilities, l);
    run.dispatch(
      pipelines.residual,
      [projParams, attended, at('attention.output.weight'), at('attention.output.bias'), x],
      run.tiles(n, hidden),
    );
    run.dispatch(pipelines.norm, layerNorm('mlp_norm'), [n]);
    run.dispatch(
      pipelines.gelu,
      [upParams, normed, at('mlp.input.weight'), at('mlp.input.bias'), mlp],
      run.tiles(n, intermediate),
    );
    run.dispatch(
      pipelines.residual,
      [downParams, mlp, at('mlp.output.weight'), at('mlp.output.bias'), x],
      run.tiles(n, hidden),
    );
  }
  if (config.finalNorm === false) return x;
  run.dispatch(
    pipelines.norm,
    [norm, x, weight('final_norm.weight'), normed, weight('final_norm.bias')],
    [n],
  );
  return normed;
}

// The llama family (Llama, Qwen2, SmolLM2, llama2.c): RMSNorm, q/k/v as nn.Linear ([out, in])
// with optional biases, rotary q and k, grouped K/V heads, the SiLU-gated MLP, untied or tied
// head.
function llamaLayers(config, ids, run) {
  const { n, buffers: b, pipelines, weight, zeros } = run;
  const { layers, heads, kvHeads, hidden, intermediate, layerNormEps } = config;
  const headDim = headDimOf(config);
  const qWidth = heads * headDim;
  const kvWidth = kvHeads * headDim;
  const x = b.storage('x', 4 * n * hidden);
  const normed = b.storage('normed', 4 * n * hidden);
  const q = b.storage('q', 4 * n * qWidth);
  const k = b.storage('k', 4 * n * kvWidth);
  const v = b.storage('v', 4 * n * kvWidth);
  const attended = b.storage('attended', 4 * n * qWidth);
  const gate = b.storage('gate', 4 * n * intermediate);
  const mlp = b.storage('mlp', 4 * n * intermediate);
  const probabilities = b.storage('probabilities', 4 * heads * n * n);
  const { cos, sin } = rotaryTables(inverseFrequencies(config.rope, headDim), n);
  const cosines = b.upload('cosines', cos);
  const sines = b.upload('sines', sin);
  const norm = run.uniform('norm', NORM_UNIFORMS, { columns: hidden, eps: layerNormEps });
  const qParams = linearParams(run, 'q', n, qWidth, hidden);
  const kvParams = linearParams(run, 'kv', n, kvWidth, hidden);
  const outParams = linearParams(run, 'out', n, hidden, qWidth);
  const upParams = linearParams(run, 'up', n, intermediate, hidden);
  const downParams = linearParams(run, 'down', n, hidden, intermediate);
  const rotate = (role, count, width) =>
    run.uniform(`rotary:${role}`, ROTARY_UNIFORMS, {
      tokens: n,
      heads: count,
      headDim,
      stride: width,
    });
  const rotateQ = rotate('q', heads, qWidth);
  const rotateK = rotate('k', kvHeads, kvWidth);
  const rotaryGroups = (count) => [Math.ceil((n * count * (headDim / 2)) / ROTARY_WORKGROUP)];
  embed(config, ids, run, x, false);
  for (let l = 0; l < layers; l++) {
    const at = (name) => weight(`layers.${l}.${name}`);
    const bias = (name) => at(name) ?? zeros;
    const linear = (pipeline, params, input, name, output, width, extra = []) =>
      run.dispatch(
        pipeline,
        [params, input, at(`${name}.weight`), bias(`${name}.bias`), output, ...extra],
        run.tiles(n, width),
      );
    const attentionParams = run.uniform(`attention:${l}`, ATTENTION_UNIFORMS, {
      tokens: n,
      headDim,
      qStride: qWidth,
      kvStride: kvWidth,
      kOffset: 0,
      vOffset: 0,
      group: heads / kvHeads,
      outStride: qWidth,
      scale: run.scales[l],
    });
    run.dispatch(pipelines.norm, [norm, x, at('attention_norm.weight'), normed], [n]);
    linear(pipelines.linear, qParams, normed, 'attention.query', q, qWidth);
    linear(pipelines.linear, kvParams, normed, 'attention.key', k, kvWidth);
    linear(pipelines.linear, kvParams, normed, 'attention.value', v, kvWidth);
    run.dispatch(pipelines.rotary, [rotateQ, cosines, sines, q], rotaryGroups(heads));
    run.dispatch(pipelines.rotary, [rotateK, cosines, sines, k], rotaryGroups(kvHeads));
    run.dispatch(
      pipelines.attention,
      [attentionParams, q, k, v, probabilities, attended],
      [n, heads],
    );
    run.readAttention(probabilities, l);
    linear(pipelines.residual, outParams, attended, 'attention.output', x, hidden);
    run.dispatch(pipelines.norm, [norm, x, at('mlp_norm.weight'), normed], [n]);
    linear(pipelines.linear, upParams, normed, 'mlp.gate', gate, intermediate);
    linear(pipelines.gated, upParams, normed, 'mlp.input', mlp, intermediate, [gate]);
    linear(pipelines.residual, downParams, mlp, 'mlp.output', x, hidden);
  }
  run.dispatch(pipelines.norm, [norm, x, weight('final_norm.weight'), normed], [n]);
  return normed;
}

// ViT (and DeiT, DINO): patches through the patch embedding, the class token, position
// embeddings; pre-LN blocks of q/k/v as nn.Linear, attention over every token, the exact GELU.
function vitLayers(config, patches, run) {
  const { n, buffers: b, pipelines, weight } = run;
  const { layers, heads, hidden, intermediate, layerNormEps, channels, patchSize } = config;
  const headDim = headDimOf(config);
  const depth = channels * patchSize * patchSize;
  const x = b.storage('x', 4 * n * hidden);
  const normed = b.storage('normed', 4 * n * hidden);
  const q = b.storage('q', 4 * n * hidden);
  const k = b.storage('k', 4 * n * hidden);
  const v = b.storage('v', 4 * n * hidden);
  const attended = b.storage('attended', 4 * n * hidden);
  const mlp = b.storage('mlp', 4 * n * intermediate);
  const probabilities = b.storage('probabilities', 4 * heads * n * n);
  const embedded = b.storage('patches-embedded', 4 * (n - 1) * hidden);
  run.dispatch(
    pipelines.linear,
    [
      linearParams(run, 'patches', n - 1, hidden, depth),
      b.upload('patches', patches),
      weight('patch_embedding.weight'),
      weight('patch_embedding.bias'),
      embedded,
    ],
    run.tiles(n - 1, hidden),
  );
  run.dispatch(
    pipelines.embed,
    [
      run.uniform('embed', EMBED_UNIFORMS, { tokens: n, hidden, past: 0 }),
      embedded,
      weight('class_token'),
      x,
      weight('position_embedding'),
    ],
    [Math.ceil((n * hidden) / EMBED_WORKGROUP)],
  );
  const norm = run.uniform('norm', NORM_UNIFORMS, { columns: hidden, eps: layerNormEps });
  const square = linearParams(run, 'square', n, hidden, hidden);
  const upParams = linearParams(run, 'up', n, intermediate, hidden);
  const downParams = linearParams(run, 'down', n, hidden, intermediate);
  for (let l = 0; l < layers; l++) {
    const at = (name) => weight(`layers.${l}.${name}`);
    const linear = (pipeline, params, input, name, output, width) =>
      run.dispatch(
        pipeline,
        [params, input, at(`${name}.weight`), at(`${name}.bias`), output],
        run.tiles(n, width),
      );
    const layerNorm = (name) => [norm, x, at(`${name}.weight`), normed, at(`${name}.bias`)];
    const attentionParams = run.uniform(`attention:${l}`, ATTENTION_UNIFORMS, {
      tokens: n,
      headDim,
      qStride: hidden,
      kvStride: hidden,
      kOffset: 0,
      vOffset: 0,
      group: 1,
      outStride: hidden,
      scale: run.scales[l],
    });
    run.dispatch(pipelines.norm, layerNorm('attention_norm'), [n]);
    linear(pipelines.linear, square, normed, 'attention.query', q, hidden);
    linear(pipelines.linear, square, normed, 'attention.key', k, hidden);
    linear(pipelines.linear, square, normed, 'attention.value', v, hidden);
    run.dispatch(
      pipelines.attention,
      [attentionParams, q, k, v, probabilities, attended],
      [n, heads],
    );
    run.readAttention(probabilities, l);
    linear(pipelines.residual, square, attended, 'attention.output', x, hidden);
    run.dispatch(pipelines.norm, layerNorm('mlp_norm'), [n]);
    linear(pipelines.gelu, upParams, normed, 'mlp.input', mlp, intermediate);
    linear(pipelines.residual, downParams, mlp, 'mlp.output', x, hidden);
  }
  run.dispatch(
    pipelines.norm,
    [norm, x, weight('final_norm.weight'), normed, weight('final_norm.bias')],
    [n],
  );
  return normed;
}
