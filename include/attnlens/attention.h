// Scaled dot-product attention and its relatives over head-major float32 tensors.
//
//   Q [H, Nq, D], K [Hkv, Nk, D], V [Hkv, Nk, Dv]  ->  O [H, Nq, Dv], optional weights [H, Nq, Nk]
//
// Hkv = H is multi-head attention; fewer K/V heads is grouped-query attention (Hkv divides H;
// query head h reads K/V head h / (H / Hkv), ONNX's order) and Hkv = 1 multi-query attention.
// The kernels index the K/V head of each query head: nothing is copied per query head.
//
// For each head and query row:
//   scores[j]  = score(q, k_j)                       (see ScoreFunction)
//   logits[j]  = scale * scores[j] / temperature     (masked keys: -inf)
//   weights    = softmax(logits)                     (max-subtracted; all-masked row -> zeros)
//   output     = sum_j weights[j] * v_j
//
// Two strategies give the same numbers (within float rounding):
//   kMaterialized  forms the [Nq, Nk] score matrix per head; needed for weights/scores output.
//   kStreaming     walks key tiles with an online softmax (Flash-style): O((Nq + Nk) * D) memory,
//                  and tiles that the mask removes entirely are never computed.
//
// Input policy: sizes must be >= 1; NaN or Infinity anywhere in an input tensor raises
// NonFiniteError naming the tensor and the first bad index; if finite inputs still overflow float32
// in the scores, NonFiniteError is raised rather than returning NaN.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "attnlens/errors.h"
#include "attnlens/mask.h"
#include "attnlens/span.h"

namespace attnlens {

struct KernelSet;

struct AttentionShape {
  std::int64_t heads = 1;      // H, query heads
  std::int64_t query_len = 0;  // Nq
  std::int64_t key_len = 0;    // Nk (keys and values)
  std::int64_t head_dim = 0;   // D  (queries and keys)
  std::int64_t value_dim = 0;  // Dv (values and output)
  std::int64_t kv_heads = 0;   // Hkv, heads of K and V: 0 means H; otherwise a divisor of H
};

enum class ScoreFunction {
  kScaledDot,  // q . k, default scale 1 / sqrt(D)
  kDot,        // q . k, default scale 1
  kCosine,     // (q . k) / (|q| |k|), zero vectors score 0; default scale 1
  kAdditive,   // Bahdanau: v^T tanh(Wq q + Wk k); default scale 1
};

// Weights of the additive (Bahdanau) score, one set per head:
//   w_query [H, A, D], w_key [H, A, D], v [H, A] with A = hidden.
struct AdditiveWeights {
  std::int64_t hidden = 0;
  FloatView w_query;
  FloatView w_key;
  FloatView v;
};

enum class Strategy { kAuto, kMaterialized, kStreaming };

struct AttentionOptions {
  ScoreFunction score = ScoreFunction::kScaledDot;
  std::optional<float> scale;  // default depends on `score` (see above); must be finite
  float temperature = 1.0f;    // > 0 and finite; low sharpens towards argmax, high flattens
  MaskSpec mask;
  AdditiveWeights additive;  // required for kAdditive, ignored otherwise
  Strategy strategy =
      Strategy::kAuto;           // auto: materialized if weights/scores wanted, else streaming
  std::int64_t query_block = 0;  // streaming tile sizes; 0 picks the tuned default
  std::int64_t key_block = 0;
  const KernelSet* kernels = nullptr;  // nullptr: the fastest set compiled in
  // Threads one call may use: 1 (default) runs on the calling thread only; n > 1 splits the work
  // over heads and query blocks, the caller plus n - 1 threads of a process-wide pool (started on
  // first use, kept for later calls); 0 means one per hardware thread. At most 256. Results are
  // identical, bit for bit, to one thread: every task computes whole output rows the same way.
  // multi_head_attention() also splits its projections by rows. A call made while another call
  // uses the pool runs on its calling thread alone; builds without thread support (wasm linked
  // without -pthread) always do.
  std::int64_t threads = 1;
};

struct AttentionInputs {
  AttentionShape shape;
  FloatView q;  // [H, Nq, D]
  FloatView k;  // [Hkv, Nk, D]
  FloatView v;  // [Hkv, Nk, Dv]
};

struct AttentionOutputs {
  MutableFloatView output;   // [H, Nq, Dv], required
  MutableFloatView weights;  // [H, Nq, Nk] or empty
  MutableFloatView scores;  // [H, Nq, Nk] raw score(q, k) before scale, temperature, mask; or empty
  // [H, Nq] or empty: each row's log(sum_j exp(logits[j])) over its visible keys (natural log;
  // -inf for a row that sees no key), so weights = exp(logits - row_logsumexp). What
  // attention_backward() (training/attention_backward.h) recomputes the weights from.
  MutableFloatView row_logsumexp = {};
};

struct AttentionStats {
  Strategy strategy = Strategy::kAuto;  // the one that ran
  std::int64_t tiles_total = 0;         // (head, query block, key block) tiles in the full problem
  std::int64_t tiles_visited = 0;       // tiles actually computed (streaming skips masked ones)
  std::int64_t scratch_bytes = 0;  // working memory beyond the caller's buffers (the peak, over
                                   // all threads of the call)
  int threads = 1;                 // threads the call's tasks were handed to, the caller
                                   // included (1: it ran on the calling thread alone)
};

// Computes attention into caller-owned buffers. Throws attnlens::Error subclasses on bad input.
AttentionStats attention(const AttentionInputs& inputs, const AttentionOptions& options,
                         const AttentionOutputs& outputs);

struct AttentionResult {
  std::vector<float> output;
  std::vector<float> weights;  // empty unless requested
  std::vector<float> scores;   // empty unless requested
  AttentionStats stats;
};

AttentionResult attention(const AttentionInputs& inputs, const AttentionOptions& options,
                          bool return_weights = false, bool return_scores = false);

// Hkv of a shape (its kv_heads, or heads when that is 0), and the K/V head query head h reads.
std::int64_t kv_head_count(const AttentionShape& shape) noexcept;
std::int64_t kv_head_of(const AttentionShape& shape, std::int64_t head) noexcept;

// The default scale for a score function and head size.
float default_scale(ScoreFunction score, std::int64_t head_dim);

// Bytes of working memory each strategy needs for `shape` (no weights requested), for cost
// displays: materialized grows with Nq * Nk, streaming with (Nq + Nk) * D.
std::int64_t working_set_bytes(const AttentionShape& shape, Strategy strategy,
                               const AttentionOptions& options = {});

// True when this build can run a call on more than one thread (see AttentionOptions::threads).
bool threads_supported() noexcept;

}  // namespace attnlens
