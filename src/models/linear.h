// Linear layers and the tied LM head over weights stored as f32 or f16, on the registry's GEMM
// (KernelSet::gemm) and the model ops (ops.h), split over threads by blocks of output columns.
#pragma once

#include <cstdint>

#include "attnlens/kernels.h"
#include "models/ops.h"

namespace attnlens::models {

// A weight matrix as the forward pass reads it: [in, out] row-major with row stride `ld`
// (GPT-2's packed c_attn gives q, k and v as three column ranges of one matrix). Exactly one of
// f32 / f16 is set.
struct Matrix {
  const float* f32 = nullptr;
  const std::uint16_t* f16 = nullptr;
  std::int64_t in = 0;
  std::int64_t out = 0;
  std::int64_t ld = 0;

  Matrix columns(std::int64_t first, std::int64_t count) const {
    Matrix m = *this;
    if (f32) m.f32 += first;
    if (f16) m.f16 += first;
    m.out = count;
    return m;
  }
};

// What every step of one forward call shares.
struct StepContext {
  const KernelSet& kernels;
  const ModelOps& ops;
  int threads;
  // f16 matrices: room for the largest one converted to f32 (tasks fill disjoint columns).
  float* matrix_scratch;
};

// out[r * ldo + c] = sum_p x[r * in + p] * W[p][c] + bias[c] (bias may be null), r < rows.
// Returns the threads that took part.
int linear(const StepContext& ctx, const float* x, std::int64_t rows, const Matrix& w,
           const float* bias, float* out, std::int64_t ldo);

// logits[r * vocab + v] = sum_p x[r * hidden + p] * embedding[v][p] + bias[v] (bias may be
// null): the LM head tied to the token embedding [vocab, hidden], read in place.
int tied_head(const StepContext& ctx, const float* x, std::int64_t rows, const Matrix& embedding,
              const float* bias, float* logits);

// Row `row` of an embedding matrix [rows, width] as floats: a pointer into the weights (f32) or
// into `buffer` (f16, converted).
const float* embedding_row(const ModelOps& ops, const Matrix& embedding, std::int64_t row,
                           float* buffer);

}  // namespace attnlens::models
