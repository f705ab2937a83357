// Scaled dot-product attention and its relatives over head-major float32 tensors.
//
//   Q [H, Nq, D], K [Hkv, Nk, D], V [Hkv, Nk, Dv]  ->  O [H, Nq, Dv], optional weights [H, Nq, Nk]
//
// Hkv = H is multi-head attention; fewer K/V heads is grouped-query attention (Hkv divides H;
// query head h reads K/V head h / (H / Hkv), ONNX's order) and Hkv = 1 multi-query attention.
// The kernels index the K/V head of each query head: nothing is copied per query head.
//
// For each head h and query row i, at position p = i + mask.query_offset among the keys (mask.h),
// in the order of ONNX's Attention operator:
//   scores[j]  = score(q, k_j)                                  (see ScoreFunction)
//   s[j]       = scale * scores[j]
//   s[j]       = softcap * tanh(s[j] / softcap)                 (softcap > 0: Gemma 2's soft cap)
//   s[j]      += bias[h, i, j] - alibi_slopes[h] * |p - j|      (each if given)
//   logits[j]  = s[j] / temperature                             (keys the mask hides: -inf)
//   top_k      keeps each row's top_k largest logits, -inf the rest (ties: the lower key index)
//   lsh        keeps the keys that share a hash bucket with the query (LshSpec), -inf the rest
//   weights    = softmax(logits)                     (max-subtracted; all-masked row -> zeros)
//   output     = sum_j weights[j] * v_j
//
// ALiBi's bias is computed as the tiles are visited, so neither it nor the mask costs memory per
// (query, key); `bias` is the caller's matrix, read where it is needed.
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

// Hashed attention (Reformer, Kitaev et al. 2020) over a projection shared by queries and keys:
// round r hashes a query or key x (of its head) to bucket argmax([x R_r, -x R_r]) (the first of
// equal maxima), with R_r a [D, buckets / 2] matrix of signs +1 and -1 drawn from (seed, r).
// Query i then sees only the keys j that share its bucket in at least one round (the union of
// the rounds, each key once), and the mask applies as always (so causal holds inside a bucket).
// The projections are summed in double in a fixed order: the buckets are the same on every
// platform for a seed (src/attention/lsh.h gives the hash to the bit).
struct LshSpec {
  std::int64_t buckets = 0;  // 0: no hashing; else even, 2..1024
  std::int64_t rounds = 1;   // 1..16
  std::uint32_t seed = 0;
};

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

  // The terms between the score and the softmax (formula above).
  float softcap = 0.0f;    // 0: none; else positive and finite
  FloatView bias;          // [H, Nq, Nk], or [Nq, Nk] for every head, or empty: added to the
                           // (capped) scaled scores, as ONNX's float attn_mask; -inf hides a key,
                           // +inf and NaN are errors
  FloatView alibi_slopes;  // [H] finite slopes m_h, or empty: ALiBi (Press et al.), the bias
                           // -m_h * |p - j|; alibi_slopes(H) gives the paper's slopes
  std::int64_t top_k = 0;  // 0: every visible key; else 1..Nk, dynamic sparse attention
  LshSpec lsh;
};

struct AttentionInputs {
  AttentionShape shape;
  FloatView q;  // [H, Nq, D]
  FloatView k;  // [Hkv, Nk, D]
  FloatView v;  // [Hkv, Nk, Dv]
  // Rows each K/V head holds in k and v: 0 means Nk; more leaves rows past Nk unread (a KV cache
  // of that capacity, filled up to Nk), so k is [Hkv, kv_capacity, D].
  std::int64_t kv_capacity = 0;
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
  // (query, key) scores computed, over all heads: H * Nq * Nk for materialized; streaming skips
  // masked tiles (and computes the scores of a top_k call twice: to select, then to attend).
  std::int64_t pairs_scored = 0;
  std::int64_t tiles_total = 0;    // (head, query block, key block) tiles in the full problem
  std::int64_t tiles_visited = 0;  // tiles actually computed (streaming skips masked ones)
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

// ALiBi's slopes for `heads` heads (Press et al.): the geometric sequence 2^(-8 (h + 1) / n) for
// n = heads a power of two; otherwise those of the largest power of two n below heads, then every
// other slope of 2n for the rest.
std::vector<float> alibi_slopes(std::int64_t heads);

// The default scale for a score function and head size.
float default_scale(ScoreFunction score, std::int64_t head_dim);

// Bytes of working memory each strategy needs for `shape` (no weights requested), for cost
// displays: materialized grows with Nq * Nk, streaming with (Nq + Nk) * D.
std::int64_t working_set_bytes(const AttentionShape& shape, Strategy strategy,
                               const AttentionOptions& options = {});

// True when this build can run a call on more than one thread (see AttentionOptions::threads).
bool threads_supported() noexcept;

}  // namespace attnlens
