// The snapshot format: one JSON file holding what a real model's run showed (tokens, the
// attention of chosen layers and heads, which cells each layer's mask hid, the predictions and
// where it came from), so a page can draw it again with no model and no compute.
//
//   {
//     "format": "attnlens-snapshot", "version": 1, "created": "2026-12-01T12:00:00.000Z",
//     "model": { "id": "roneneldan/TinyStories-1M" | null, "revision": "main" | null,
//                "modelType": "gpt_neo", "layers": 8, "heads": 16, "causal": true },
//     "text": "...", "pair": null | "...",
//     "tokens": [{ "text": "Once", "start": 0, "end": 4, "special": false, "segment": 0 }],
//     "layers": [2], "heads": [0, 3],          the layers and heads included, ascending
//     "attention": { "dtype": "float32", "encoding": "base64", "data": "..." }
//                  little-endian float32 [layers.length, heads.length, N, N], row i the weights
//                  query i gives each key
//     "visible": { "encoding": "base64-bits", "data": "..." }
//                  [layers.length, N, N] bits (least significant first): 1 where the layer's
//                  mask lets query i see key j
//     "masks": { "surgery": null | "causal+local:2", "surgeryLayer": null | 3,
//                "layerMasks": ["causal", ...] }   one per included layer, as the run used them
//     "predictions": [...]                     as model.run() gives them (next tokens, or the
//                                              fillers of each [MASK])
//     "selected": { "layer": 2, "head": 3 }    the view it was exported from
//     "rollout": { "dtype": "float32", "encoding": "base64", "data": "..." }   optional
//                  little-endian float32 [N, N], the attention rollout of every position over
//                  every layer (interpret/rollout.js): one head's size, whatever the scope,
//                  since the included layers alone could not give it
//     "translation": { ... }                   only in a translation's snapshot (below)
//     "ablation": { ... }                      optional: the "Which heads matter" panel (below)
//     "logitLens": { ... }                     optional: the "Logit lens" panel (below)
//   }
//
// An ablation (model.headEffects() and model.run(text, { ablate })), at the predicted position:
//
//     "ablation": { "position": 7, "target": { "id": 42, "token": "Ġdog", "text": " dog" },
//       "logProb": -1.2,                          the target's log-probability, nothing ablated
//       "effects": null | { "dtype": "float32", "encoding": "base64", "data": "..." }
//                  little-endian float32 [model.layers, model.heads]: each head's delta (the
//                  target's log-probability with that head zeroed, minus without)
//       "off": [{ "layer": 3, "head": 1, "mode": "zero" | "mean" }],   the heads switched off
//       "before": [...], "after": [...] }        the top predictions without and with them off
//
// A logit lens (model.run(text, { lens })): each hidden state's top k tokens, state 0 the
// embeddings', state l + 1 layer l's output, over its own positions (the model's tokens):
//
//     "logitLens": { "topK": 5, "tokens": ["Once", " upon", ...],      P position labels
//       "vocabulary": [{ "id": 42, "text": " dog" }],                   the tokens it names
//       "top": { "dtype": "int32", "encoding": "base64", "data": "..." }
//                  little-endian int32 [model.layers + 1, P, topK]: indices into vocabulary
//       "probabilities": { "dtype": "float32", "encoding": "base64", "data": "..." } }
//                  little-endian float32 [model.layers + 1, P, topK], best first
//
// A translation's snapshot (an encoder-decoder such as Marian) holds the source as `text` and
// `tokens`, the encoder's self-attention as `layers`, `heads`, `attention` and `visible` (model
// `layers` counts the encoder's), and the decoder's side:
//
//     "translation": { "text": "I love ...", "decoderLayers": 6,
//       "target": [{ "text": "▁I", "special": false }],       the T tokens it generated
//       "layers": [0, 5], "heads": [0, 1, 2, 3, 4, 5, 6, 7],  the decoder layers and heads kept
//       "cross": { "dtype": "float32", "encoding": "base64", "data": "..." } }
//                  little-endian float32 [layers.length, heads.length, T, N]: row t the weights
//                  target token t gave each source token (cross-attention)
//
// A snapshot is read like any file from elsewhere (read.js): every field's type and size, the
// counts against each other, and caps on everything, before anything is drawn.

export const SNAPSHOT_FORMAT = 'attnlens-snapshot';
export const SNAPSHOT_VERSION = 1;

// Caps: a snapshot larger than these is refused before it is decoded.
export const SNAPSHOT_LIMITS = Object.freeze({
  bytes: 64 * 1024 * 1024, // the JSON text
  tokens: 1024,
  layers: 256,
  heads: 256,
  weights: 1 << 24, // layers x heads x N x N floats (64 MiB)
  textLength: 100000,
  tokenText: 256,
  predictions: 64,
  topK: 100,
  lensTopK: 10, // a logit lens's k
  lensEntries: 1 << 20, // (layers + 1) x positions x k of a logit lens
});

// Base64 through the platform's btoa / atob (browsers, workers and Node have both), in chunks so
// a large array never becomes one huge argument list.
const CHUNK = 0x8000;

/** Bytes -> base64 (standard alphabet, padded). */
export function toBase64(bytes) {
  let binary = '';
  for (let i = 0; i < bytes.length; i += CHUNK) {
    binary += String.fromCharCode(...bytes.subarray(i, i + CHUNK));
  }
  return btoa(binary);
}

/** Base64 -> bytes; null when `text` is not padded base64 of exactly `length` bytes. */
export function fromBase64(text, length) {
  if (typeof text !== 'string' || text.length !== 4 * Math.ceil(length / 3)) return null;
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text)) return null;
  let binary;
  try {
    binary = atob(text);
  } catch {
    return null;
  }
  if (binary.length !== length) return null;
  const bytes = new Uint8Array(length);
  for (let i = 0; i < length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** Float32Array -> little-endian bytes (a copy). */
export function float32Bytes(values) {
  const bytes = new Uint8Array(values.length * 4);
  const view = new DataView(bytes.buffer);
  values.forEach((value, i) => view.setFloat32(i * 4, value, true));
  return bytes;
}

/** Int32Array -> little-endian bytes (a copy). */
export function int32Bytes(values) {
  const bytes = new Uint8Array(values.length * 4);
  const view = new DataView(bytes.buffer);
  values.forEach((value, i) => view.setInt32(i * 4, value, true));
  return bytes;
}

/** 0/1 values -> bits, least significant first. */
export function packBits(values) {
  const bytes = new Uint8Array(Math.ceil(values.length / 8));
  for (let i = 0; i < values.length; i++) if (values[i]) bytes[i >> 3] |= 1 << (i & 7);
  return bytes;
}

/** Bits -> 0/1 values (a Uint8Array of `count`). */
export function unpackBits(bytes, count) {
  const values = new Uint8Array(count);
  for (let i = 0; i < count; i++) values[i] = (bytes[i >> 3] >> (i & 7)) & 1;
  return values;
}

/**
 * The size of a snapshot's JSON, for the page to show before it writes one: the two encoded
 * arrays dominate; the rest is estimated from the token count.
 */
export function snapshotBytes({ layers, heads, n }) {
  const weights = 4 * Math.ceil((layers * heads * n * n * 4) / 3);
  const bits = 4 * Math.ceil(Math.ceil((layers * n * n) / 8) / 3);
  return weights + bits + 2048 + 96 * n;
}
