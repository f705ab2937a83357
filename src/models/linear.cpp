#include "models/linear.h"

#include <algorithm>
#include <vector>

#include "parallel.h"
#include "prepare.h"

namespace attnlens::models {
namespace {

// Output columns per task: a multiple of the GEMM's 8-column panels (so every column is computed
// by the same code path whatever the split, and results do not depend on threads), and narrow
// enough that a task's slice of W (in x 256 floats) stays in L2 while the GEMM walks the rows
// of x in blocks of 16.
constexpr std::int64_t kColumnBlock = 256;

// Vocabulary rows of the tied head per task (and per f16 conversion).
constexpr std::int64_t kVocabBlock = 512;

// Below this many rows the head is a stream over the embedding: dot products read each
// embedding row once. From here on the panel GEMM (8 rows at a time) is faster.
constexpr std::int64_t kGemmHeadRows = 8;

// W's columns [c0, c0 + n) as f32 with row stride *ld: in place, or converted into `scratch`
// (same columns of an [in, out] buffer, so concurrent tasks write disjoint parts).
const float* columns_as_f32(const ModelOps& ops, const Matrix& w, std::int64_t c0, std::int64_t n,
                            float* scratch, std::int64_t* ld) {
  if (w.f32) {
    *ld = w.ld;
    return w.f32 + c0;
  }
  for (std::int64_t p = 0; p < w.in; ++p) {
    ops.half_to_float(static_cast<std::size_t>(n), w.f16 + p * w.ld + c0, scratch + p * w.out + c0);
  }
  *ld = w.out;
  return scratch + c0;
}

}  // namespace

int linear(const StepContext& ctx, const float* x, std::int64_t rows, const Matrix& w,
           const float* bias, float* out, std::int64_t ldo) {
  const std::int64_t tasks = detail::div_up(w.out, kColumnBlock);
  return detail::parallel_for(tasks, ctx.threads, [&](std::int64_t task) {
    const std::int64_t c0 = task * kColumnBlock;
    const std::int64_t n = std::min(kColumnBlock, w.out - c0);
    std::int64_t ldb = 0;
    const float* b = columns_as_f32(ctx.ops, w, c0, n, ctx.matrix_scratch, &ldb);
    ctx.kernels.gemm(static_cast<std::size_t>(rows), static_cast<std::size_t>(n),
                     static_cast<std::size_t>(w.in), x, static_cast<std::size_t>(w.in), b,
                     static_cast<std::size_t>(ldb), out + c0, static_cast<std::size_t>(ldo), false);
    if (bias == nullptr) return;
    for (std::int64_t r = 0; r < rows; ++r) {
      float* o = out + r * ldo + c0;
      for (std::int64_t c = 0; c < n; ++c) o[c] += bias[c0 + c];
    }
  });
}

int tied_head(const StepContext& ctx, const float* x, std::int64_t rows, const Matrix& embedding,
              const float* bias, float* logits) {
  const std::int64_t vocab = embedding.in, hidden = embedding.out;
  const bool use_gemm = rows >= kGemmHeadRows;
  // The GEMM form computes logits^T (vocab rows against x^T), so x is transposed once.
  std::vector<float> x_t;
  if (use_gemm) {
    x_t.resize(static_cast<std::size_t>(hidden * rows));
    for (std::int64_t r = 0; r < rows; ++r) {
      for (std::int64_t p = 0; p < hidden; ++p) x_t[p * rows + r] = x[r * hidden + p];
    }
  }
  const std::int64_t tasks = detail::div_up(vocab, kVocabBlock);
  return detail::parallel_for(tasks, ctx.threads, [&](std::int64_t task) {
    const std::int64_t v0 = task * kVocabBlock;
    const std::int64_t n = std::min(kVocabBlock, vocab - v0);
    std::vector<float> converted;
    const float* e = embedding.f32 ? embedding.f32 + v0 * embedding.ld : nullptr;
    std::int64_t lde = embedding.ld;
    if (!e) {
      converted.resize(static_cast<std::size_t>(n * hidden));
      for (std::int64_t v = 0; v < n; ++v) {
        ctx.ops.half_to_float(static_cast<std::size_t>(hidden),
                              embedding.f16 + (v0 + v) * embedding.ld,
                              converted.data() + v * hidden);
      }
      e = converted.data();
      lde = hidden;
    }
    if (use_gemm) {
      std::vector<float> block(static_cast<std::size_t>(n * rows));
      ctx.kernels.gemm(static_cast<std::size_t>(n), static_cast<std::size_t>(rows),
                       static_cast<std::size_t>(hidden), e, static_cast<std::size_t>(lde),
                       x_t.data(), static_cast<std::size_t>(rows), block.data(),
                       static_cast<std::size_t>(rows), false);
      for (std::int64_t r = 0; r < rows; ++r) {
        for (std::int64_t v = 0; v < n; ++v) logits[r * vocab + v0 + v] = block[v * rows + r];
      }
    } else {
      ctx.ops.dot_rows(static_cast<std::size_t>(rows), static_cast<std::size_t>(n),
                       static_cast<std::size_t>(hidden), x, static_cast<std::size_t>(hidden), e,
                       static_cast<std::size_t>(lde), logits + v0, static_cast<std::size_t>(vocab));
    }
    if (bias == nullptr) return;
    for (std::int64_t r = 0; r < rows; ++r) {
      for (std::int64_t v = 0; v < n; ++v) logits[r * vocab + v0 + v] += bias[v0 + v];
    }
  });
}

const float* embedding_row(const ModelOps& ops, const Matrix& embedding, std::int64_t row,
                           float* buffer) {
  if (embedding.f32) return embedding.f32 + row * embedding.ld;
  ops.half_to_float(static_cast<std::size_t>(embedding.out), embedding.f16 + row * embedding.ld,
                    buffer);
  return buffer;
}

}  // namespace attnlens::models
