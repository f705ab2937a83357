// The shared blocks every model unit (units/*.cpp) builds its layers from, over the state of
// one stack's run (ForwardPass): embeddings, LayerNorm / RMSNorm, self-attention through
// attention() (rotary optional), cross-attention over an encoder's output, the MLP and the
// gated MLP, residuals, and the heads. A block
// reads its input where the caller says and leaves its output in a named buffer of the pass, so
// a unit's layer function reads as the architecture's own equations (units/bert.cpp: post-LN;
// units/gpt2.cpp: pre-LN).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "attnlens/kernels.h"
#include "attnlens/models/kv_cache.h"
#include "attnlens/models/transformer.h"
#include "models/linear.h"
#include "models/ops.h"
#include "models/weight_views.h"

namespace attnlens::models {

struct StackUnit;

// What a decoder's cross-attention reads: an encoder's output rows [n, width] (token-major),
// and which of them are real tokens (key padding: n flags, non-zero = real; empty = all).
struct EncoderOutput {
  const float* rows = nullptr;
  std::int64_t n = 0;
  std::int64_t width = 0;
  ByteView key_valid;
};

// One stack's run over its input sequence: its sizes, context and working buffers (token-major
// unless named).
struct ForwardPass {
  ForwardPass(const Transformer& model, const StackUnit& stack, const ForwardInputs& in,
              const ForwardOptions& opt, const ForwardOutputs& out);

  const Transformer& model;
  const StackUnit& stack;
  const TransformerConfig& config;
  const ForwardOptions& options;
  const ForwardOutputs& outputs;
  const std::int64_t first_layer;  // the stack's first row of the weight table
  KvCache* const cache;            // ForwardOptions::cache, or null
  // The positions before this call's N (the cache's length; 0 without one), so the tokens sit
  // at positions past .. past + N - 1 and attend to key_len = past + N keys.
  const std::int64_t past;
  const std::int64_t n, key_len, hidden, heads, kv_heads, head_dim, intermediate;
  const std::int64_t q_width, kv_width, qkv_width, head_block;
  const KernelSet& kernels;
  const ModelOps& ops;
  const StepContext ctx;
  const Views views;
  ForwardStats stats;

  std::vector<float> x;          // the residual stream [N, hidden]
  std::vector<float> normed;     // a norm's output, a block's input [N, hidden]
  std::vector<float> block_out;  // an attention or MLP block's output [N, hidden]
  std::vector<float> context;    // merged heads [N, heads * head_dim]
  std::vector<float> qkv;        // [N, q | k | v]
  std::vector<float> heads_qkv;  // q [H][N][d], then k and v [KV][N][d]
  std::vector<float> heads_out;  // [H][N][d]
  std::vector<float> mlp;        // [N, intermediate]
  std::vector<float> gate;       // the gated MLP's gate [N, intermediate], or empty
  std::vector<float> row;        // one embedding row converted from halves
  std::vector<float> cos, sin;   // rotary tables of positions past..past+N-1, or empty
  RowPanels panels;              // the current linear layers' input, packed
  // The encoder output a decoder stack's cross-attention reads; empty for other stacks.
  EncoderOutput encoder;

  void note_threads(int used) { stats.threads = std::max(stats.threads, used); }
};

// The kinds of the shared blocks a unit picks.
enum class NormKind { kLayerNorm, kRmsNorm };
enum class MlpKind { kPlain, kGated };  // act(x Wi) Wo, or down(silu(gate(x)) * up(x))

// x[i] = token embedding (+ token type embedding) (+ the embedding of position past + i), in
// that order.
void embed_tokens(ForwardPass& p, const ForwardInputs& in, bool token_types, bool positions);

// dst = norm(src) over rows of `hidden` (dst may be src).
void normalize(ForwardPass& p, NormKind kind, const Norm& norm, const float* src, float* dst);

// Self-attention of layer `l` over `input` [N, hidden]: q, k, v projections, rotary embedding of
// q and k when the pass has rotary tables, attention() with the layer's mask and scale (its
// weights into the caller's buffer), merged heads, output projection into p.block_out. With a
// KV cache, the new keys and values are written after the cached ones and the queries attend
// to all of them where they lie (AttentionInputs::kv_capacity, MaskSpec::query_offset).
void self_attention(ForwardPass& p, const AttentionView& w, std::int64_t l, const float* input);

// Cross-attention of layer `l` over p.encoder (BartAttention / MarianAttention with
// key_value_states): q from `input` [N, hidden], k and v projected from the encoder's rows,
// attention() with `mask` (its key_valid taken from p.encoder when it has flags) and `scale`,
// its weights [H, N, encoder n] into `weights` when not empty, merged heads, output projection
// into p.block_out. Its key and value heads are the config's kv_heads. With a KV cache, the call
// that runs the encoder keeps k and v in the cache and a step reads them from there.
void cross_attention(ForwardPass& p, const AttentionView& w, std::int64_t l, float scale,
                     MaskSpec mask, const float* input, MutableFloatView weights);

// The MLP of a layer over `input` [N, hidden] into p.block_out.
void feed_forward(ForwardPass& p, MlpKind kind, ActivationFn activate, const LayerView& w,
                  const float* input);

// x += p.block_out.
void add_block_output(ForwardPass& p);

// The activation of a config's plain MLP (and BERT's head transform).
ActivationFn activation_of(const ForwardPass& p);

}  // namespace attnlens::models
