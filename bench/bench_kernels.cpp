// Every registered kernel variant at the sizes attention and the projections call it with, and
// our projection GEMM against Eigen's.
#include <Eigen/Core>
#include <algorithm>
#include <string>
#include <vector>

#include "attnlens/attnlens.h"
#include "benches.h"

namespace attnlens_bench {
namespace {
// Calls per timed sample for kernels that take microseconds, so the clock and the call into the
// timing lambda do not dominate.
constexpr int kRepeat = 32;
}  // namespace

void bench_gemm(const Config& cfg) {
  struct Size {
    std::size_t m, n, k;
  };
  // Materialized-era score and output products, a projection, and a one-row tail case.
  const Size sizes[] = {{64, 64, 64}, {256, 256, 64}, {64, 256, 256}, {256, 64, 256}};
  for (const Size& sz : sizes) {
    const auto a = random_floats(sz.m * sz.k, 1), b = random_floats(sz.k * sz.n, 2);
    std::vector<float> c(sz.m * sz.n);
    for (const attnlens::GemmKernel& kern : attnlens::gemm_kernels()) {
      const std::string name = std::string(kern.name) + " " + std::to_string(sz.m) + "x" +
                               std::to_string(sz.n) + "x" + std::to_string(sz.k);
      if (!selected(cfg, name)) continue;
      const Timing t = time_calls(
          cfg,
          [&] { kern.fn(sz.m, sz.n, sz.k, a.data(), sz.k, b.data(), sz.n, c.data(), sz.n, false); },
          cfg.quick ? 20 : 100);
      report_flops("gemm", name, t, 2.0 * sz.m * sz.n * sz.k);
    }
  }
}

// The two calls one streaming chunk makes with H=8, D=64: scores of 128 keys (32 tiles, depth
// 64) and the value product over them (16 tiles of 4 value dims, depth 128, rescaled).
void bench_panel_gemm(const Config& cfg) {
  struct Call {
    const char* role;
    std::size_t tiles, k;
    bool scaled;
  };
  const Call calls[] = {{"scores 128 keys x 8 queries, D=64", 32, 64, false},
                        {"values 64 dims x 8 queries, 128 keys", 16, 128, true}};
  for (const Call& call : calls) {
    const std::size_t stride = call.k * attnlens::kPanelRows;
    const auto a = random_floats(call.tiles * stride, 3), b = random_floats(call.k * 8, 4);
    const auto scale = random_floats(8, 5);
    std::vector<float> c(call.tiles * 32);
    for (const attnlens::PanelGemmKernel& kern : attnlens::panel_gemm_kernels()) {
      const std::string name = std::string(kern.name) + " " + call.role;
      if (!selected(cfg, name)) continue;
      const Timing t = time_calls(
          cfg,
          [&] {
            for (int r = 0; r < kRepeat; ++r) {
              kern.fn(call.tiles, call.k, a.data(), stride, b.data(), c.data(),
                      call.scaled ? scale.data() : nullptr);
            }
          },
          cfg.quick ? 20 : 100);
      report_flops("panel_gemm", name, t, kRepeat * 2.0 * 32 * call.tiles * call.k);
    }
  }
}

// A decoding step's linear layers, one token (and 2 or 3, a short remainder) against GPT-2 small's
// weights: the tile path (one 4-row panel_gemm tile per weight panel, 3 rows of padding for one
// token) against panel_gemv over the same panels, 16 panels per call as linear() makes them,
// per kernel set, calls alternating. GFLOP/s count the rows that exist.
void bench_panel_gemv(const Config& cfg) {
  struct Shape {
    std::size_t rows, in, out;
  };
  const Shape shapes[] = {{1, 768, 768},   {1, 768, 3072}, {1, 3072, 768},
                          {1, 768, 50257}, {2, 768, 3072}, {3, 768, 3072}};
  constexpr std::size_t kCols = attnlens::kPanelCols, kRows = attnlens::kPanelRows;
  constexpr std::size_t kPanelsPerCall = 16;
  for (const Shape& sh : shapes) {
    const std::size_t panels = (sh.out + kCols - 1) / kCols;
    const auto a = random_floats(sh.in * kRows, 6), w = random_floats(panels * sh.in * kCols, 7);
    std::vector<float> tile(kRows * kCols), y(kPanelsPerCall * kCols);
    for (const attnlens::KernelSet& set : attnlens::kernel_sets()) {
      const std::string shape = " M=" + std::to_string(sh.rows) + " " + std::to_string(sh.in) +
                                "x" + std::to_string(sh.out);
      const std::string tiled = std::string(set.name) + " 4x8 tiles" + shape;
      const std::string one_row = std::string(set.name) + " panel_gemv" + shape;
      if (!selected(cfg, tiled) && !selected(cfg, one_row)) continue;
      const std::vector<Timing> t = time_interleaved(
          cfg,
          {[&] {
             for (std::size_t n = 0; n < panels; ++n) {
               set.panel_gemm(1, sh.in, a.data(), sh.in * kRows, w.data() + n * sh.in * kCols,
                              tile.data(), nullptr);
             }
           },
           [&] {
             for (std::size_t n = 0; n < panels; n += kPanelsPerCall) {
               for (std::size_t r = 0; r < sh.rows; ++r) {
                 set.panel_gemv(std::min(kPanelsPerCall, panels - n), sh.in, a.data() + r, kRows,
                                w.data() + n * sh.in * kCols, y.data());
               }
             }
           }},
          cfg.quick ? 100 : 400);
      const double flops = 2.0 * sh.rows * sh.in * sh.out;
      report_flops("panel_gemv", tiled, t[0], flops);
      report_flops("panel_gemv", one_row, t[1], flops);
    }
  }
}

void bench_softmax(const Config& cfg) {
  const std::size_t n = 4096;
  auto x = random_floats(n, 3);
  for (float& v : x) v *= 20.0f;
  std::vector<float> out(n);
  for (const attnlens::ExpSumKernel& kern : attnlens::exp_sum_kernels()) {
    if (!selected(cfg, kern.name)) continue;
    const Timing t = time_calls(
        cfg,
        [&] {
          for (int r = 0; r < kRepeat; ++r) kern.fn(x.data(), 20.0f, out.data(), n);
        },
        cfg.quick ? 20 : 100);
    report_elements("softmax", kern.name, t, kRepeat * n, "exp");
  }
  for (const attnlens::RowMaxKernel& kern : attnlens::row_max_kernels()) {
    if (!selected(cfg, kern.name)) continue;
    volatile float sink = 0;
    const Timing t = time_calls(
        cfg,
        [&] {
          for (int r = 0; r < kRepeat; ++r) sink = kern.fn(x.data(), n);
        },
        cfg.quick ? 20 : 100);
    report_elements("softmax", kern.name, t, kRepeat * n, "elem");
  }
  // Streaming chunks of 128 keys x 8 queries. The kernel works in place; calling it again on
  // its own output is the same work (exp has no data-dependent branches) and stays finite.
  const std::size_t keys = 128;
  std::vector<float> s = random_floats(keys * 8, 6), max(8, 0.5f), sum(8, 1.0f), rescale(8);
  for (const attnlens::OnlineSoftmaxKernel& kern : attnlens::online_softmax_kernels()) {
    const std::string name = std::string(kern.name) + " 128 keys x 8 queries";
    if (!selected(cfg, name)) continue;
    const Timing t = time_calls(
        cfg,
        [&] {
          for (int r = 0; r < kRepeat; ++r)
            kern.fn(keys, s.data(), max.data(), sum.data(), rescale.data());
        },
        cfg.quick ? 20 : 100);
    report_elements("softmax", name, t, kRepeat * keys * 8, "exp");
  }
  const std::size_t hidden = 64, n_keys = 256;
  const auto qa = random_floats(hidden, 4), kat = random_floats(hidden * n_keys, 5),
             v = random_floats(hidden, 6);
  for (const attnlens::AdditiveRowKernel& kern : attnlens::additive_row_kernels()) {
    if (!selected(cfg, kern.name)) continue;
    const Timing t = time_calls(
        cfg, [&] { kern.fn(hidden, qa.data(), kat.data(), n_keys, v.data(), n_keys, out.data()); },
        cfg.quick ? 20 : 100);  // ~16k tanh per call: long enough on its own
    report_elements("additive", kern.name, t, hidden * n_keys, "tanh");
  }
}

// Projections X[N, dm] * W[dm, H*D]: our GEMM kernels against Eigen's float GEMM.
void bench_projection(const Config& cfg) {
  const std::size_t dm = 256, cols = 256;
  for (std::size_t n : {16, 64, 256}) {
    const auto x = random_floats(n * dm, 7), w = random_floats(dm * cols, 8);
    std::vector<float> out(n * cols);
    const double flops = 2.0 * n * dm * cols;
    for (const attnlens::GemmKernel& kern : attnlens::gemm_kernels()) {
      const std::string name = std::string(kern.name) + " N=" + std::to_string(n);
      if (!selected(cfg, name)) continue;
      const Timing t = time_calls(
          cfg, [&] { kern.fn(n, cols, dm, x.data(), dm, w.data(), cols, out.data(), cols, false); },
          cfg.quick ? 20 : 100);
      report_flops("projection", name, t, flops);
    }
    const std::string name = "eigen_f32 N=" + std::to_string(n);
    if (!selected(cfg, name)) continue;
    using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    Eigen::Map<const RowMajor> xm(x.data(), n, dm), wm(w.data(), dm, cols);
    Eigen::Map<RowMajor> om(out.data(), n, cols);
    const Timing t = time_calls(
        cfg, [&] { om.noalias() = xm * wm; }, cfg.quick ? 20 : 100);
    report_flops("projection", name, t, flops);
  }
}

}  // namespace attnlens_bench
