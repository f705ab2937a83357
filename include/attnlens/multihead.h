// Multi-head attention with projections, as in a transformer layer:
//
//   Q = Xq Wq + bq,  K = Xkv Wk + bk,  V = Xkv Wv + bv      (token-major)
//   split into heads, attend per head (attention.h), concatenate heads, O = concat Wo + bo
//
// Self-attention passes only x_query; cross-attention also passes x_key_value (its own length
// and width). With kv_heads (grouped-query attention) K and V have Hkv heads, as attention.h
// describes. All matrices are row-major float32.
#pragma once

#include <cstdint>
#include <vector>

#include "attnlens/attention.h"

namespace attnlens {

struct MultiHeadShape {
  std::int64_t heads = 1;
  std::int64_t head_dim = 0;       // D
  std::int64_t value_dim = 0;      // Dv; 0 means D
  std::int64_t query_len = 0;      // Nq
  std::int64_t key_len = 0;        // Nk; 0 means self-attention (Nk = Nq)
  std::int64_t model_dim = 0;      // width of x_query
  std::int64_t key_model_dim = 0;  // width of x_key_value; 0 means model_dim
  std::int64_t out_dim = 0;        // width of the output; 0 means model_dim
  std::int64_t kv_heads = 0;       // Hkv, heads of K and V (grouped-query); 0 means H
};

struct MultiHeadWeights {
  FloatView w_query;  // [model_dim, H * D]
  FloatView w_key;    // [key_model_dim, Hkv * D]
  FloatView w_value;  // [key_model_dim, Hkv * Dv]
  FloatView w_out;    // [H * Dv, out_dim]
  FloatView b_query;  // [H * D] or empty
  FloatView b_key;    // [Hkv * D] or empty
  FloatView b_value;  // [Hkv * Dv] or empty
  FloatView b_out;    // [out_dim] or empty
};

struct MultiHeadInputs {
  MultiHeadShape shape;
  FloatView x_query;      // [Nq, model_dim]
  FloatView x_key_value;  // [Nk, key_model_dim], or empty for self-attention
  MultiHeadWeights weights;
};

struct MultiHeadOutputs {
  MutableFloatView output;   // [Nq, out_dim], required
  MutableFloatView weights;  // [H, Nq, Nk] or empty
  MutableFloatView scores;   // [H, Nq, Nk] or empty
  MutableFloatView q;        // [H, Nq, D] projected queries, or empty
  MutableFloatView k;        // [Hkv, Nk, D] or empty
  MutableFloatView v;        // [Hkv, Nk, Dv] or empty
};

AttentionStats multi_head_attention(const MultiHeadInputs& inputs, const AttentionOptions& options,
                                    const MultiHeadOutputs& outputs);

// The shape with the defaults (0 = "same as") filled in; validates every size.
MultiHeadShape resolve_shape(const MultiHeadShape& shape);

}  // namespace attnlens
