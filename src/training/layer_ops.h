// The operations a GPT trains with, each forward beside its backward (as llm.c pairs them), on
// flat row-major float arrays with explicit shapes. The forwards are attnlens/models' own ops
// (ModelOps' layer norm and GELU, models::linear on the packed panel GEMM); the backwards are
// their twins here. Backwards that write a parameter's gradient overwrite it; the gradient of
// an activation that feeds several places (the residual stream) is accumulated (+=) so one
// buffer carries it through every residual add, whose backward is then the identity.
//
// Every reduction over rows (the gradients of weights, biases, gains, embeddings and the loss)
// runs in one fixed order, and the parts that run on threads split only outputs, so results are
// the same bits for any thread count.
#pragma once

#include <cstdint>
#include <vector>

#include "models/linear.h"
#include "models/ops.h"

namespace attnlens::training {

using models::StepContext;

// ---- linear layers: y [rows, out] = x [rows, in] W [in, out] + b --------------------------

// W packed for the forward (column panels of W, packing.h), and for the backward's dX = dY W^T
// (column panels of W^T). `groups` as packing.h's pack_matrix (3 for q | k | v).
models::PackedMatrix pack_weight(const float* w, std::int64_t in, std::int64_t out,
                                 std::int64_t groups, std::vector<float>& storage);
models::PackedMatrix pack_weight_transposed(const float* w, std::int64_t in, std::int64_t out,
                                            std::vector<float>& storage);

// y = x W + b (b may be null), y with leading dimension ldy. `x_panels` is filled with x packed
// (it may feed several layers: pass it again with x = nullptr to reuse the packing).
void linear_forward(const StepContext& ctx, const float* x, std::int64_t rows, std::int64_t in,
                    models::RowPanels& x_panels, const models::PackedMatrix& w, const float* b,
                    float* y, std::int64_t ldy);

// out [m, n] = A^T B for A [rows, m] and B [rows, n]: the weight gradient's product, each
// element one sum over the rows in order.
void transposed_product(const StepContext& ctx, const float* a, std::int64_t rows, std::int64_t m,
                        const float* b, std::int64_t n, float* out);

// From dY [rows, out]: dX = dY W^T (w_t: pack_weight_transposed; dx may be null), dW = X^T dY
// [in, out], db = the column sums of dY (null: no bias).
void linear_backward(const StepContext& ctx, const float* dy, std::int64_t rows, std::int64_t out,
                     const float* x, std::int64_t in, const models::PackedMatrix& w_t, float* dx,
                     float* dw, float* db);

// ---- layer norm over rows of n (torch.nn.LayerNorm) ----------------------------------------

// ModelOps::layer_norm; y may be x.
void layer_norm_forward(const StepContext& ctx, const float* x, std::int64_t rows, std::int64_t n,
                        const float* gamma, const float* beta, float eps, float* y);

// From dY and the forward's input x: dx += dL/dx (the mean and variance are recomputed from x,
// as the forward forms them), dgamma = sum_rows dy * xhat, dbeta = sum_rows dy.
void layer_norm_backward(const StepContext& ctx, const float* dy, const float* x, std::int64_t rows,
                         std::int64_t n, const float* gamma, float eps, float* dx, float* dgamma,
                         float* dbeta);

// ---- GELU, tanh form ("gelu_new") ----------------------------------------------------------

// y = gelu(x) (ModelOps::gelu_tanh); y may be x.
void gelu_forward(const StepContext& ctx, const float* x, std::int64_t n, float* y);

// dx = dy * gelu'(x) for the forward's input x; dx may be dy.
void gelu_backward(const float* dy, const float* x, std::int64_t n, float* dx);

// ---- token and position embeddings ----------------------------------------------------------

// x[b * T + t] = token_embedding[ids[b][t]] + position_embedding[t], ids [batch][T] with row
// stride `id_stride` (T + 1 for training batches: the last token is only a target).
void embedding_forward(const std::int32_t* ids, std::int64_t batch, std::int64_t t_len,
                       std::int64_t id_stride, const float* token_embedding,
                       const float* position_embedding, std::int64_t width, float* x);

// d_token_embedding[id] += dx[row], d_position_embedding[t] += dx[row], rows in order.
void embedding_backward(const float* dx, const std::int32_t* ids, std::int64_t batch,
                        std::int64_t t_len, std::int64_t id_stride, std::int64_t width,
                        float* d_token_embedding, float* d_position_embedding);

// ---- residual adds ---------------------------------------------------------------------------

// out = a + b (out may be a). Its backward passes the gradient to both inputs unchanged, which
// the callers get by accumulating into one buffer (see above).
void residual_forward(const float* a, const float* b, std::int64_t n, float* out);

// ---- heads ------------------------------------------------------------------------------------

// Token-major rows [batch][T][ld] (H heads of d columns from column 0) to head-major
// [batch][H][T][d], the layout attention() reads, and back.
void split_heads(const float* src, std::int64_t ld, std::int64_t batch, std::int64_t t_len,
                 std::int64_t heads, std::int64_t d, float* dst);
void merge_heads(const float* src, std::int64_t batch, std::int64_t t_len, std::int64_t heads,
                 std::int64_t d, float* dst, std::int64_t ld);

// ---- softmax cross-entropy --------------------------------------------------------------------

// Per row r of logits [rows, vocab] with target targets[r]: loss_r = logsumexp(row) -
// row[target]. Returns sum_r loss_r (in double, rows in order). With `gradient`, the logits are
// replaced by dL/dlogits of L = scale * sum_r loss_r: scale * (softmax(row) - onehot(target)).
// Targets are ids[b][t + 1] of a batch laid out as embedding_forward's.
double cross_entropy(const StepContext& ctx, float* logits, std::int64_t batch, std::int64_t t_len,
                     std::int64_t vocab, const std::int32_t* ids, std::int64_t id_stride,
                     float scale, bool gradient);

}  // namespace attnlens::training
