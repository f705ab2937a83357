// A transformer forward pass for four checkpoint families, each computed the way the Hugging
// Face transformers library's modelling code does (op order, epsilon, activation, scaling):
//
//   gpt2     pre-LN blocks: x += attn(ln_1(x)); x += mlp(ln_2(x)); ln_f; causal; logits scaled
//            by 1/sqrt(head_dim) (and 1/(layer+1) with scale_attn_by_inverse_layer_idx)
//   gpt_neo  the same blocks, q/k/v without bias, NOT scaled by 1/sqrt(head_dim); each layer is
//            global (causal) or local (query i sees keys i - window_size < j <= i)
//   bert     post-LN blocks: x = ln(x + attn(x)); x = ln(x + mlp(x)); word + position + token
//            type embeddings, then a LayerNorm; no mask; the masked-LM head (dense, act, ln)
//   llama    (LlamaForCausalLM, Qwen2ForCausalLM) pre-RMSNorm blocks: x += attn(rms(x));
//            x += down(silu(gate(rms(x))) * up(rms(x))); a final RMSNorm; no position table:
//            rotary position embeddings on q and k (rotate_half form); grouped-query attention
//            (kv_heads K/V heads, query head h reads K/V head h / (heads / kv_heads)); causal,
//            or a sliding window (query i sees keys i - window < j <= i) on the layers
//            local_windows names; logits scaled by 1/sqrt(head_dim); optional biases (Qwen2:
//            q/k/v); the LM head tied to the token embeddings or its own lm_head matrix
//   vit      (ViTForImageClassification, ViTModel, Dinov2Model) pre-LN blocks over a class token
//            and the image's patches: x = [cls; patches W + b] + positions; x += attn(ln(x));
//            x += mlp(ln(x)) (DINOv2: each block output times its layer scale); a final
//            LayerNorm; no mask; scores scaled by 1/sqrt(head_dim); the classifier (lm_head,
//            with its bias) reads the class token. DINOv2 resizes its position grid to the
//            image's (bicubic, as torch's interpolate with align_corners=False); with registers,
//            register tokens follow the class token and the resize is antialiased
//   marian   (MarianMTModel, Helsinki-NLP/opus-mt-*) an encoder-decoder: two stacks of post-LN
//            layers, the first encoder_layers rows of the weight table the encoder's, the rest
//            the decoder's. Both embed tokens times sqrt(hidden) (scale_embedding) plus a static
//            sinusoidal position table (written as position_embedding: sin in the first half of
//            the columns, cos in the second); encoder layer x = ln(x + attn(x)); x = ln(x +
//            mlp(x)); decoder layer: causal self-attention, then x = ln(x + cross(x, encoder)),
//            then the MLP, each followed by its LayerNorm; SiLU; no final norm on either stack;
//            logits = rows . E^T + final_logits_bias over the decoder's positions
//
// GPT-2, GPT-Neo and BERT tie the LM head to the token embeddings (plus cls.predictions.bias for
// BERT). Every layer's attention runs through attention() (attention.h) with that layer's own
// MaskSpec, or the caller's.
//
// Use: construct with a config (validated; memory checked before anything is allocated), write
// every weight of weights() into weight_data(i) in the layout and dtype it states, call
// finalize() once (checks every value is finite, then packs the linear layers' matrices into
// the panel layout the GEMM runs on, in place), then forward() as often as needed. forward() is
// const and keeps no state between calls.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attnlens/attention.h"
#include "attnlens/errors.h"
#include "attnlens/mask.h"
#include "attnlens/span.h"

namespace attnlens::models {

enum class Architecture { kGpt2, kGptNeo, kBert, kLlama, kVit, kMarian };
enum class Activation {
  kGeluTanh,  // "gelu_new" (GPT-2, GPT-Neo): 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
  kGeluErf,   // "gelu" (BERT): 0.5 x (1 + erf(x / sqrt(2)))
  kSilu,  // "silu" / "swish": x / (1 + exp(-x)); llama's gate (the only one it takes), Marian's MLP
};
// kQ8_0: GGML's Q8_0 blocks (32 int8 values and an f16 scale along the input features), for the
// linear layers' matrices whose input width is a multiple of 32; as a config's matrix_dtype, the
// other matrices (embeddings, a head read like one, a linear layer of another width) are kF16.
// kQ4: 4-bit weights (GGML's Q4_0 and Q4_K in one form, src/models/q4.h: per 32 input features
// an f32 scale s and min m and 32 nibbles q, value = s * q - m), for the same matrices as kQ8_0.
enum class WeightDtype { kF32, kF16, kQ8_0, kQ4 };

// How the rotary embedding's inverse frequencies are made (the transformers library's
// ROPE_INIT_FUNCTIONS of the same names; "dynamic" NTK equals kNone at every length up to
// max_positions, which forward() never exceeds). All have an attention factor of 1.
enum class RopeScaling {
  kNone,    // inv_freq[i] = theta^(-2i / head_dim)
  kLinear,  // inv_freq / factor
  kLlama3,  // Llama 3.1's: long wavelengths divided by factor, short kept, a smooth ramp between
};

struct RotaryConfig {
  double theta = 10000.0;  // rope_theta, > 1
  RopeScaling scaling = RopeScaling::kNone;
  double factor = 1.0;                         // kLinear, kLlama3: >= 1
  double low_freq_factor = 1.0;                // kLlama3
  double high_freq_factor = 4.0;               // kLlama3: > low_freq_factor
  std::int64_t original_max_positions = 8192;  // kLlama3: the pre-training context
};

struct TransformerConfig {
  Architecture architecture = Architecture::kGpt2;
  std::int64_t layers = 0;
  std::int64_t heads = 0;
  std::int64_t hidden = 0;        // model width; heads * head_dim except for llama's own head_dim
  std::int64_t intermediate = 0;  // MLP width (GPT's n_inner / 4 * hidden)
  std::int64_t vocab = 0;
  std::int64_t max_positions = 0;
  std::int64_t token_types = 0;  // BERT's type_vocab_size (>= 1); ignored otherwise
  float layer_norm_eps = 1e-5f;  // > 0 (llama: rms_norm_eps)
  Activation activation = Activation::kGeluTanh;
  // GPT-2 options (gpt_neo never scales; bert always scales by 1/sqrt(head_dim)).
  bool scale_attn_weights = true;
  bool scale_attn_by_inverse_layer_idx = false;
  // GPT-Neo: one entry per layer, 0 for a global layer, else the window_size of a local one.
  // Empty means every layer is global.
  std::vector<std::int64_t> local_windows;
  // BERT: whether the checkpoint has the masked-LM head (BertForMaskedLM's cls.predictions);
  // without it forward() computes attention and hidden states but no logits. GPT models always
  // have their (tied) head.
  bool lm_head = true;
  // GPT-2 only: false drops ln_f, so the logits are the last layer's output times the tied head.
  // Models that attnlens/train trained that way (config.json's attnlens.finalNorm: false); no
  // Hub checkpoint has this.
  bool final_norm = true;
  // Storage of the weight matrices (embeddings and linear weights); vectors stay f32.
  WeightDtype matrix_dtype = WeightDtype::kF32;

  // Llama family only (0 / false / defaults elsewhere).
  std::int64_t kv_heads = 0;        // num_key_value_heads, divides heads; 0: heads (no grouping)
  std::int64_t head_dim = 0;        // even; 0: hidden / heads
  bool qkv_bias = false;            // q/k/v_proj have biases (Qwen2; llama's attention_bias)
  bool output_bias = false;         // o_proj has a bias (llama's attention_bias; never in Qwen2)
  bool mlp_bias = false;            // gate/up/down_proj have biases (llama's mlp_bias)
  bool tie_word_embeddings = true;  // false: a separate lm_head.weight [vocab, hidden]
  RotaryConfig rotary;

  // Vision transformers only (0 / false elsewhere). The positions (max_positions) are the class
  // token's and image_grid^2 patches'; vocab is the classifier's label count (lm_head: whether
  // the checkpoint has a classifier).
  std::int64_t patch_size = 0;         // pixels along a patch's side
  std::int64_t channels = 0;           // num_channels
  std::int64_t image_grid = 0;         // patches along a side of the trained image
  bool layer_scale = false;            // DINOv2: lambda1 / lambda2 scale each block's output
  bool interpolate_positions = false;  // DINOv2: any grid; ViT: only the trained one
  // DINOv2 with registers: register tokens after the class token (no position embedding), and
  // the position grid resized with torch's antialiased bicubic filter (a = -0.5) instead.
  std::int64_t registers = 0;
  bool antialias_positions = false;
  // Marian only (0 / false elsewhere): the encoder's layers (1 to layers - 1; the decoder has
  // the rest), and the embeddings times sqrt(hidden) (config.json's scale_embedding).
  std::int64_t encoder_layers = 0;
  bool scale_embedding = false;
};

// Whether a config's model is an encoder-decoder (two stacks: encoder, then decoder).
inline bool is_encoder_decoder(const TransformerConfig& c) {
  return c.architecture == Architecture::kMarian;
}

// The head size of a config: head_dim, or hidden / heads where it is 0.
inline std::int64_t head_dim_of(const TransformerConfig& c) {
  return c.head_dim > 0 ? c.head_dim : c.hidden / c.heads;
}
// The K/V heads of a config: kv_heads, or heads where it is 0.
inline std::int64_t kv_heads_of(const TransformerConfig& c) {
  return c.kv_heads > 0 ? c.kv_heads : c.heads;
}

// One tensor the caller must write, in the layout a checkpoint stores it.
struct WeightInfo {
  std::string name;                 // e.g. "layers.0.attention.query.weight" (see weights())
  std::vector<std::int64_t> shape;  // checkpoint layout: nn.Linear [out, in], Conv1D [in, out]
  // f32 values, IEEE half bits (uint16), or (kQ8_0) Q8_0 blocks of the [out, in] matrix, whatever
  // `transposed` says: out rows of in / 32 blocks, each a little-endian f16 scale and 32 int8
  // (GGML's block_q8_0, 34 bytes), or (kQ4) out rows of in / 32 sub-blocks of 24 bytes (q4.h)
  WeightDtype dtype = WeightDtype::kF32;
  bool transposed = false;  // written [out, in] (nn.Linear) rather than [in, out]
  std::int64_t elements = 0;
};

class KvCache;  // kv_cache.h

// Head ablation (TransformerLens-style): a head's attention output, its d columns of the merged
// heads before the output projection, is replaced at every position of the call.
enum class AblationMode {
  kZero,  // by 0: the head removed
  kMean,  // by its mean over this call's positions: the head keeps its average, loses its
          // dependence on the token (needs the whole text in one call: no KV cache)
};
struct HeadAblation {
  std::int64_t layer = 0;  // 0 .. layers - 1
  std::int64_t head = 0;   // 0 .. heads - 1; each (layer, head) at most once
  AblationMode mode = AblationMode::kZero;
};

struct ForwardInputs {
  Span<const std::int32_t> token_ids;    // [N], each < vocab; 1 <= N <= max_positions (with a
                                         // cache: past + N, past = the cache's length)
  Span<const std::int32_t> token_types;  // BERT: [N] each < token_types, or empty (all 0)
  // An encoder-decoder's decoder input [T] (1 <= T <= max_positions, from the decoder start
  // token); token_ids are then the encoder's (the source). Empty for other models. With a KV
  // cache, T is the new target tokens (past + T within the cache), and a step's token_ids must
  // be the source the cache holds.
  Span<const std::int32_t> decoder_token_ids = {};
  // Vision transformers, instead of tokens: pixel_values [channels, height, width], finite.
  // The patches are the whole patch_size squares from the top left (a remainder is dropped, as
  // the patch convolution drops it); N = 1 + registers + rows * columns.
  Span<const float> pixels = {};
  std::int64_t image_height = 0;
  std::int64_t image_width = 0;
};

// Surgery on an encoder-decoder's cross-attention (src/models/cross_mask.cpp): which source
// tokens target token t (at decoder position t) may see, in every decoder layer.
//   kFull    every source token (the model as trained)
//   kLast    only the last source token (</s>): an RNN encoder's final state as the one vector
//   kMean    every source token with equal weight 1/N (the scores are not used): the output is
//            the mean of the source's value vectors, the mean of the source as one fixed vector
//   kLocal   Luong's local-m attention: the source tokens j with |j - p_t| <= radius, at the
//            monotonic aligned position p_t = min(t, N - 1) (the target's length is not known
//            while decoding, so not Luong's t * N / T)
enum class CrossMaskKind { kFull, kLast, kMean, kLocal };
struct CrossMask {
  CrossMaskKind kind = CrossMaskKind::kFull;
  std::int64_t radius = 0;  // kLocal's half-width D (0 .. max_positions): 2D + 1 keys at most
  bool operator==(const CrossMask& o) const { return kind == o.kind && radius == o.radius; }
};

// The patches of a vision model's input: rows x columns (0 x 0 for a text model).
struct PatchGrid {
  std::int64_t rows = 0;
  std::int64_t columns = 0;
};
PatchGrid patch_grid(const TransformerConfig& config, const ForwardInputs& inputs);
// The positions a forward pass runs over: the tokens, or the class token, the registers and the
// patches.
std::int64_t sequence_length(const TransformerConfig& config, const ForwardInputs& inputs);

struct ForwardOptions {
  // Empty: every layer uses its own mask (layer_mask()); one entry: that mask for every layer;
  // `layers` entries: one per layer. Validated against N by attention().
  std::vector<MaskSpec> masks;
  // Positions whose logits are wanted, each < N (repeats allowed). Needs the LM head.
  std::vector<std::int64_t> logit_positions;
  std::int64_t threads = 1;            // as AttentionOptions::threads; also splits the GEMMs
  const KernelSet* kernels = nullptr;  // nullptr: the fastest set compiled in
  // The layer whose q, k and v ForwardOutputs::projections receives (what the layer's attention
  // scored and averaged), or -1 for none.
  std::int64_t projections_layer = -1;
  // A KV cache of this model (kv_cache.h), or nullptr. With one, the N tokens are the positions
  // past .. past + N - 1 after the cache's `past` = length() (0 after reset(): a prompt's
  // whole-sequence forward), their queries attend to the cached keys and their own, and their
  // keys and values are appended (past + N must fit the cache's capacity and max_positions).
  // Every layer uses its own mask then (`masks` must be empty), as the cached keys were made.
  // An encoder-decoder's cache is its decoder's: the encoder runs on the first call only.
  KvCache* cache = nullptr;
  // An encoder-decoder's cross-attention surgery (CrossMask); kFull for other models. A cache
  // keeps the one its first call used (its keys depend on it): a step must pass the same.
  CrossMask cross_mask;
  // Heads whose output is replaced (HeadAblation); empty: none. An encoder-decoder's layers are
  // numbered as its weights are, the encoder's first: its encoder's and its decoder's
  // self-attention heads can be ablated; cross-attention is never changed by it.
  std::vector<HeadAblation> ablations;
  // Resume a run at layer start_layer's input: start_state [N, hidden] is the residual stream
  // there (hidden_states[start_layer] of an earlier run over the same tokens), so a caller that
  // varies only later layers (one ablation after another) does not recompute the earlier ones.
  // 0 with an empty state: the whole forward from the embeddings. No KV cache with it; the
  // earlier layers' rows of attention, hidden_states and the lens are left as they were.
  // Not offered for encoder-decoders (the decoder reads the whole encoder's output).
  std::int64_t start_layer = 0;
  FloatView start_state;
  // The logit lens: for every hidden state (the embeddings', then each layer's) the top k
  // tokens of the model's own final norm and LM head applied to it (BERT: its MLM transform
  // too); 0 for none. At most 1024 and the vocabulary. Needs the LM head. An encoder-decoder's
  // lens reads its decoder's hidden states (the only ones its LM head was trained on).
  std::int64_t lens_top_k = 0;
};

// With a cache, each N x N below is N x (past + N): the new queries' rows over every key.
struct ForwardOutputs {
  MutableFloatView attention;      // [layers, heads, N, N] weights, or empty
  MutableFloatView logits;         // [logit_positions, vocab], or empty (then none are computed)
  MutableFloatView hidden_states;  // [layers + 1, N, hidden], or empty: the embeddings' output,
                                   // then each layer's; for GPT models the last is after ln_f
  MutableFloatView log_sum_exp;    // [logit_positions], or empty: log sum_v exp(logit_v) of each
                                   // logits row, so a token's probability is exp(logit - it)
  // [3, heads, N, head_dim], or empty: q, k, v of ForwardOptions::projections_layer, head-major,
  // as attention() receives them (before the layer's attention_scale())
  MutableFloatView projections = {};
  // An encoder-decoder's: `attention` is then the encoder's [encoder_layers, heads, N, N];
  // `logits`, `log_sum_exp` and `hidden_states` ([decoder layers + 1, T, hidden]) are the
  // decoder's (logit_positions < T); `projections` are not offered.
  // With a cache: decoder_attention is [decoder layers, heads, T, past + T], and `attention`
  // must be empty on a step (the encoder does not run).
  MutableFloatView decoder_attention = {};  // [decoder layers, heads, T, T], or empty
  MutableFloatView cross_attention = {};    // [decoder layers, heads, T, N], or empty
  // The logit lens (ForwardOptions::lens_top_k = k): [layers + 1, N, k] token ids (an
  // encoder-decoder's: [decoder layers + 1, T, k], its decoder's), best first
  // (ties: the lower id), and their softmax probabilities over the whole vocabulary. Only the
  // top k leave the pass: its vocabulary-wide logits exist a few rows at a time.
  Span<std::int32_t> lens_ids{};
  MutableFloatView lens_probabilities{};
};

struct ForwardStats {
  std::int64_t scratch_bytes = 0;  // working memory the call allocated (peak estimate)
  int threads = 1;                 // threads that took part in the largest step
  // Source tokens an encoder-decoder's encoder ran over in this call: 0 on a step against a KV
  // cache, which reads the cross keys and values the first call kept.
  std::int64_t encoder_tokens = 0;
};

// Bytes the weights of `config` occupy (the matrices in their dtype) and the parameter count.
struct ModelSize {
  std::int64_t parameters = 0;
  std::int64_t weight_bytes = 0;        // as stored (packed matrices padded to whole panels)
  std::int64_t load_scratch_bytes = 0;  // finalize()'s packing copy (freed after)
};
ModelSize model_size(const TransformerConfig& config);

// The memory a model may take when no limit is given: 2 GiB on 32-bit platforms (wasm32 as
// linked), otherwise what size_t addresses.
std::int64_t default_memory_limit();

// model_size(config), or a RangeError "model" stating the sizes when the weights and the load
// scratch exceed `memory_limit` bytes (0: default_memory_limit()). What the constructor checks.
ModelSize require_model_fits(const TransformerConfig& config, std::int64_t memory_limit = 0);

class Transformer {
 public:
  // Validates `config` (RangeError / InvalidArgumentError naming the field) and refuses, before
  // allocating, a model whose weights and load scratch exceed `memory_limit` bytes (RangeError
  // "model" stating the sizes). 0 means default_memory_limit().
  explicit Transformer(TransformerConfig config, std::int64_t memory_limit = 0);

  const TransformerConfig& config() const { return config_; }
  const ModelSize& size() const { return size_; }
  // The limit the constructor checked the model against, in bytes (0 resolved).
  std::int64_t memory_limit() const { return memory_limit_; }

  // Every tensor to write, in a fixed order (see transformer.cpp's weight table).
  const std::vector<WeightInfo>& weights() const { return infos_; }
  // Where weight `index` goes: `elements` floats (kF32), uint16 halves (kF16) or elements / 32
  // Q8_0 blocks of 34 bytes (kQ8_0) or elements / 32 4-bit sub-blocks of 24 bytes (kQ4), see
  // WeightInfo::dtype. RangeError for an index past the
  // list; InvalidArgumentError once finalized.
  void* weight_data(std::int64_t index);

  // Once every weight is written: checks that no value is NaN or Infinity (NonFiniteError naming
  // the tensor and the index as written), then packs the linear layers' matrices (src/models/
  // packing.h). Calling it twice is an InvalidArgumentError. `names`, when given, holds one name
  // per weight in weights() order, the one its source knows it by (a checkpoint's tensor name):
  // the errors name weight i names[i] instead of the table's own name.
  void finalize(const std::vector<std::string>& names = {});
  bool finalized() const { return finalized_; }

  // The mask a layer uses unless the caller overrides it (window sizes are clamped to N inside
  // forward()): causal for GPT and llama models (plus a left window of window - 1 on GPT-Neo's
  // local and llama's sliding-window layers), none for BERT.
  MaskSpec layer_mask(std::int64_t layer) const;

  // The factor a layer multiplies q.k by before the softmax: 1/sqrt(head_dim) for GPT-2 (and
  // 1/(layer + 1) more with scale_attn_by_inverse_layer_idx; 1 without scale_attn_weights) and
  // BERT and the llama family, 1 for GPT-Neo. RangeError for a layer outside the model.
  float attention_scale(std::int64_t layer) const;

  ForwardStats forward(const ForwardInputs& inputs, const ForwardOptions& options,
                       const ForwardOutputs& outputs) const;

  // Raw access for the forward pass (src/models/): a weight's values by index, or nullptr when
  // it is stored in the other dtype; and the index of each weight role (src/models/weights.h).
  const float* f32_data(std::int64_t index) const;
  const std::uint16_t* f16_data(std::int64_t index) const;
  const std::uint8_t* q8_data(std::int64_t index) const;  // packed (q8_0.h) once finalized
  const std::uint8_t* q4_data(std::int64_t index) const;  // packed (q4.h) once finalized
  const std::vector<std::int64_t>& role_index() const { return role_index_; }
  const std::vector<std::int64_t>& column_groups() const { return column_groups_; }

 private:
  TransformerConfig config_;
  std::int64_t memory_limit_;
  ModelSize size_;
  std::vector<WeightInfo> infos_;
  std::vector<std::int64_t> role_index_;
  std::vector<std::int64_t> column_groups_;  // per weight, as WeightTable::column_groups
  std::vector<std::size_t> offsets_;         // element offset of each weight in its dtype's pool
  std::vector<float> f32_pool_;
  std::vector<std::uint16_t> f16_pool_;
  std::vector<std::uint8_t> byte_pool_;  // Q8_0 and 4-bit blocks
  bool finalized_ = false;
};

}  // namespace attnlens::models
