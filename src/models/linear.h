// Linear layers and the tied LM head over weights stored as f32, f16, Q8_0 or 4-bit, on the
// registry's kernels (KernelSet::panel_gemm over the packed layouts of packing.h, KernelSet::gemm)
// and the model ops (ops.h).
#pragma once

#include <cstdint>
#include <vector>

#include "attnlens/kernels.h"
#include "models/ops.h"

namespace attnlens::models {

// A linear layer's matrix as finalize() packed it (packing.h): column panels
// [ceil(out / 8)][in][8], or Q8_0 panels (q8_0.h), or 4-bit panels (q4.h). Exactly one of
// f32 / f16 / q8 / q4 is set.
struct PackedMatrix {
  const float* f32 = nullptr;
  const std::uint16_t* f16 = nullptr;
  std::int64_t in = 0;
  std::int64_t out = 0;
  const std::uint8_t* q8 = nullptr;
  const std::uint8_t* q4 = nullptr;
};

// An embedding matrix [rows, width] as written (row-major, rows contiguous), f32 or f16.
struct EmbeddingMatrix {
  const float* f32 = nullptr;
  const std::uint16_t* f16 = nullptr;
  std::int64_t rows = 0;
  std::int64_t width = 0;
};

// Activations x [rows, depth] packed as row panels [ceil(rows / 4)][depth][4] (packing.h), the
// A operand of every linear layer they feed (q, k and v share one packing). pack_rows() reuses
// `data`, which holds at least the panels (a buffer packed again keeps its largest size).
// Up to this many rows (fewer than a row panel: a decoding step's one token) linear() runs each
// row on panel_gemv over the weight panels, instead of a 4-row tile that is mostly padding
// (bench/: panel_gemv and linear N=1 lines). The bits are the tile's for f32 and f16 weights; a
// Q8_0 or 4-bit matrix runs ModelOps' one-row integer kernels on the row rounded to 16 bits.
constexpr std::int64_t kGemvMaxRows = 2;

struct RowPanels {
  std::vector<float> data;
  std::int64_t rows = 0;
  std::int64_t depth = 0;
};
void pack_rows(const float* x, std::int64_t rows, std::int64_t depth, RowPanels& out);

// What every step of one forward call shares.
struct StepContext {
  const KernelSet& kernels;
  const ModelOps& ops;
  int threads;
};

// out[r * ldo + c] = sum_p x[r][p] * W[p][c] + bias[c] (bias may be null), on
// KernelSet::panel_gemm (a Q8_0 or 4-bit matrix: ModelOps::q8_panel_gemm / q4_panel_gemm for
// few rows, else each panel dequantised once per block for panel_gemm), each output tile
// accumulated over 256-deep slices of the depth unless a whole weight panel stays in L1 and the
// rows take no more blocks at the whole depth (linear.cpp). Split over threads by blocks of output
// columns (and of rows for long inputs); every output is computed the same way whatever the split.
// Returns the threads that took part.
int linear(const StepContext& ctx, const RowPanels& x, const PackedMatrix& w, const float* bias,
           float* out, std::int64_t ldo);

// linear() with each output accumulated over slices of `slice_depth` depths (rounded down to
// Q8_0's and 4-bit's blocks of 32, at least one; `in` or more: the whole depth in one panel_gemm
// call), in row blocks sized to the slice; linear() is this at the depth it picks. The same bits at
// any slice depth (a quantised matrix: while each row block takes the same one of its two paths).
// Tests compare depths, benchmarks time them against one another.
int linear_in_depth_slices(const StepContext& ctx, const RowPanels& x, const PackedMatrix& w,
                           const float* bias, float* out, std::int64_t ldo,
                           std::int64_t slice_depth);

// logits[r * vocab + v] = sum_p x[r * hidden + p] * embedding[v][p] + bias[v] (bias may be
// null): the LM head tied to the token embedding [vocab, hidden], read in place.
int tied_head(const StepContext& ctx, const float* x, std::int64_t rows,
              const EmbeddingMatrix& embedding, const float* bias, float* logits);

// Row `row` of an embedding matrix [rows, width] as floats: a pointer into the weights (f32) or
// into `buffer` (f16, converted).
const float* embedding_row(const ModelOps& ops, const EmbeddingMatrix& embedding, std::int64_t row,
                           float* buffer);

}  // namespace attnlens::models
