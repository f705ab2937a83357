// Linear layers forward and backward, all three products on models::linear (the panel GEMM of
// KernelSet::panel_gemm over packed panels):
//
//   y  = x W + b     x as row panels, W as column panels (packing.h)
//   dX = dY W^T      dY as row panels, W^T as column panels
//   dW = X^T dY      X^T as row panels (4 input features side by side, over the rows), dY as
//                    column panels over the rows
//
// models::linear computes each output element whole, in one panel_gemm over the full depth,
// whatever its split over threads, so dW's sum over rows runs in one order for any thread count.
#include <algorithm>
#include <vector>

#include "attention/prepare.h"
#include "layer_ops.h"
#include "models/packing.h"

namespace attnlens::training {
namespace {

using models::kPanelDepth;
using models::PackedMatrix;
using models::RowPanels;

// X^T [cols, rows] as row panels [ceil(cols / 4)][rows][4], read from X [rows, cols]: each
// row's run of 4 features is one contiguous copy.
void pack_transposed_rows(const float* x, std::int64_t rows, std::int64_t cols, RowPanels& out) {
  const std::int64_t panels = detail::div_up(cols, kPanelDepth);
  out.rows = cols;
  out.depth = rows;
  out.data.assign(static_cast<std::size_t>(panels * rows * kPanelDepth), 0.0f);
  for (std::int64_t p = 0; p < panels; ++p) {
    const std::int64_t c0 = p * kPanelDepth;
    const std::int64_t width = std::min(kPanelDepth, cols - c0);
    float* panel = out.data.data() + p * rows * kPanelDepth;
    for (std::int64_t r = 0; r < rows; ++r) {
      std::copy(x + r * cols + c0, x + r * cols + c0 + width, panel + r * kPanelDepth);
    }
  }
}

}  // namespace

PackedMatrix pack_weight(const float* w, std::int64_t in, std::int64_t out, std::int64_t groups,
                         std::vector<float>& storage) {
  storage.resize(static_cast<std::size_t>(models::packed_elements(in, out, groups)));
  models::pack_matrix(w, /*transposed=*/false, in, out, groups, storage.data());
  return {storage.data(), nullptr, in, out, nullptr};
}

PackedMatrix pack_weight_transposed(const float* w, std::int64_t in, std::int64_t out,
                                    std::vector<float>& storage) {
  // W [in, out] read as the [out', in'] = [in, out] layout of a transposed W^T [out, in].
  storage.resize(static_cast<std::size_t>(models::packed_elements(out, in, 1)));
  models::pack_matrix(w, /*transposed=*/true, out, in, 1, storage.data());
  return {storage.data(), nullptr, out, in, nullptr};
}

void linear_forward(const StepContext& ctx, const float* x, std::int64_t rows, std::int64_t in,
                    RowPanels& x_panels, const PackedMatrix& w, const float* b, float* y,
                    std::int64_t ldy) {
  if (x != nullptr) models::pack_rows(x, rows, in, x_panels);
  models::linear(ctx, x_panels, w, b, y, ldy);
}

void transposed_product(const StepContext& ctx, const float* a, std::int64_t rows, std::int64_t m,
                        const float* b, std::int64_t n, float* out) {
  RowPanels a_t;
  pack_transposed_rows(a, rows, m, a_t);
  std::vector<float> b_columns;
  models::linear(ctx, a_t, pack_weight(b, rows, n, 1, b_columns), nullptr, out, n);
}

void linear_backward(const StepContext& ctx, const float* dy, std::int64_t rows, std::int64_t out,
                     const float* x, std::int64_t in, const PackedMatrix& w_t, float* dx, float* dw,
                     float* db) {
  RowPanels panels;
  if (dx != nullptr) {
    models::pack_rows(dy, rows, out, panels);
    models::linear(ctx, panels, w_t, nullptr, dx, in);
  }
  transposed_product(ctx, x, rows, in, dy, out, dw);
  if (db != nullptr) {
    std::fill(db, db + out, 0.0f);
    for (std::int64_t r = 0; r < rows; ++r) {
      const float* row = dy + r * out;
      for (std::int64_t c = 0; c < out; ++c) db[c] += row[c];
    }
  }
}

}  // namespace attnlens::training
