// The backward pass of attention() (attention.h): the gradients of a loss L with respect to q, k
// and v, given dL/dO. For each head, with c = scale / temperature, P the weights attention()
// forms (masked keys 0) and O = P V its output:
//
//   dV = P^T dO                         dP = dO V^T
//   dS = P * (dP - rowsum(dO * O))      (the gradient of the logits; zero where P is zero)
//   dQ = c dS K                         dK = c dS^T Q                  (scaled dot, dot)
//
// The cosine score runs the same through the unit vectors q^ = q / |q|, k^ = k / |k|, then
// through the normalisation, dq = (dq^ - q^ (q^ . dq^)) / |q| (likewise dk). A zero row of q or
// k, whose cosine attention() defines as 0, gets a zero gradient. The additive score has no
// backward: its gradient also belongs to its weights (w_query, w_key, v), which this API does not
// return, so it is rejected (InvalidArgumentError naming "score").
//
// Grouped-query attention (AttentionShape::kv_heads): the gradient of a K/V head is the sum over
// the query heads reading it, added up in head order.
//
// Streaming, as FlashAttention-2: the weights are never stored. attention() saves each row's
// log-sum-exp (AttentionOutputs::row_logsumexp) and the backward recomputes every tile's weights
// from it, P = exp(logits - row_logsumexp), visiting only the (query block, key tile) tiles the
// mask can reach: the same tiles as the streaming forward, counted in AttentionStats the same
// way. Memory is O((Nq + Nk) * D). A row that sees no key (zero weights and zero output in the
// forward) gets zero gradients.
//
// Options are attention()'s (score, scale, temperature, mask, query_block, key_block, kernels,
// threads; strategy applies only to the forward that the second overload runs). Threads split the
// work over heads and fixed groups of keys; the gradients are identical, bit for bit, for every
// thread count. Bad input throws like attention(): every size, NaN or Infinity in any input
// (d_output and output included), a row_logsumexp that is NaN or +Infinity, gradient buffers that
// overlap an input, and results that overflow float32, each naming its parameter.
#pragma once

#include <vector>

#include "attnlens/attention.h"

namespace attnlens {

// What the backward reads: attention()'s inputs, what it returned, and dL/dO.
struct AttentionBackwardInputs {
  AttentionInputs forward;  // q [H, Nq, D], k [Hkv, Nk, D], v [Hkv, Nk, Dv] and their shape
  FloatView output;         // [H, Nq, Dv], attention()'s output for these inputs and options
  FloatView row_logsumexp;  // [H, Nq], attention()'s AttentionOutputs::row_logsumexp
  FloatView d_output;       // [H, Nq, Dv], dL/dO
};

// Caller-owned buffers, each written whole; none may overlap an input.
struct AttentionGradients {
  MutableFloatView dq;  // [H, Nq, D]
  MutableFloatView dk;  // [Hkv, Nk, D]
  MutableFloatView dv;  // [Hkv, Nk, Dv]
};

// The backward from a saved forward: what a training step calls after its attention() call.
AttentionStats attention_backward(const AttentionBackwardInputs& inputs,
                                  const AttentionOptions& options,
                                  const AttentionGradients& gradients);

struct AttentionGradientsResult {
  std::vector<float> dq, dk, dv;
  AttentionStats stats;  // the backward's
};

// Runs attention() (keeping its output and row log-sum-exp), then the backward: for callers that
// did not keep the forward's results.
AttentionGradientsResult attention_backward(const AttentionInputs& inputs, FloatView d_output,
                                            const AttentionOptions& options);

}  // namespace attnlens
