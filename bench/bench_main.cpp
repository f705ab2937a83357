// attnlens benchmarks: every registered kernel variant, the projections (ours vs Eigen), and
// whole attention calls per strategy and mask. Prints median times and GFLOP/s; asserts nothing.
//
//   attnlens_bench [--quick] [--filter SUBSTRING]
//
// Flop counts: GEMM 2*m*n*k; attention 4*H*Nq*Nk*D (the unmasked count, so a mask that skips
// work shows up as higher "effective" GFLOP/s).
#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "attnlens/attnlens.h"
#include "peak.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Config {
  bool quick = false;
  std::string filter;
};

bool selected(const Config& cfg, const std::string& name) {
  return cfg.filter.empty() || name.find(cfg.filter) != std::string::npos;
}

// Median wall time in milliseconds of `fn`, repeated until ~min_ms has passed (at least 3 runs).
double median_ms(const std::function<void()>& fn, double min_ms) {
  fn();  // warm-up: page in buffers, let the wasm tier up
  std::vector<double> times;
  double total = 0.0;
  while ((total < min_ms || times.size() < 3) && times.size() < 200) {
    const auto t0 = Clock::now();
    fn();
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    times.push_back(ms);
    total += ms;
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

std::vector<float> random_floats(std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::vector<float> v(n);
  for (float& x : v) x = static_cast<float>(gen() >> 8) / 16777216.0f * 2.0f - 1.0f;
  return v;
}

void report(const char* group, const std::string& name, double ms, double flops) {
  std::printf("%-12s %-44s %10.3f ms %9.2f GFLOP/s\n", group, name.c_str(), ms,
              flops / (ms * 1e6));
}

void bench_gemm(const Config& cfg) {
  struct Size { std::size_t m, n, k; const char* role; };
  const Size sizes[] = {{32, 64, 64, "scores tile"}, {32, 64, 64, "P*V tile"},
                        {256, 256, 64, "materialized scores"}, {64, 256, 256, "projection"}};
  for (const Size& sz : sizes) {
    const auto a = random_floats(sz.m * sz.k, 1), b = random_floats(sz.k * sz.n, 2);
    std::vector<float> c(sz.m * sz.n);
    for (const attnlens::GemmKernel& kern : attnlens::gemm_kernels()) {
      const std::string name = std::string(kern.name) + " " + std::to_string(sz.m) + "x" +
                               std::to_string(sz.n) + "x" + std::to_string(sz.k);
      if (!selected(cfg, name)) continue;
      const double ms = median_ms([&] {
        kern.fn(sz.m, sz.n, sz.k, a.data(), sz.k, b.data(), sz.n, c.data(), sz.n, false);
      }, cfg.quick ? 20 : 100);
      report("gemm", name, ms, 2.0 * sz.m * sz.n * sz.k);
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
    const double ms = median_ms([&] { kern.fn(x.data(), 20.0f, out.data(), n); }, cfg.quick ? 20 : 100);
    std::printf("%-12s %-44s %10.3f ms %9.1f Melem/s\n", "softmax", kern.name, ms, n / (ms * 1e3));
  }
  for (const attnlens::RowMaxKernel& kern : attnlens::row_max_kernels()) {
    if (!selected(cfg, kern.name)) continue;
    volatile float sink = 0;
    const double ms = median_ms([&] { sink = kern.fn(x.data(), n); }, cfg.quick ? 20 : 100);
    std::printf("%-12s %-44s %10.3f ms %9.1f Melem/s\n", "softmax", kern.name, ms, n / (ms * 1e3));
  }
  const std::size_t hidden = 64, keys = 256;
  const auto qa = random_floats(hidden, 4), kat = random_floats(hidden * keys, 5),
             v = random_floats(hidden, 6);
  for (const attnlens::AdditiveRowKernel& kern : attnlens::additive_row_kernels()) {
    if (!selected(cfg, kern.name)) continue;
    const double ms = median_ms([&] {
      kern.fn(hidden, qa.data(), kat.data(), keys, v.data(), keys, out.data());
    }, cfg.quick ? 20 : 100);
    std::printf("%-12s %-44s %10.3f ms %9.1f Mtanh/s\n", "additive", kern.name, ms,
                hidden * keys / (ms * 1e3));
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
      const double ms = median_ms([&] {
        kern.fn(n, cols, dm, x.data(), dm, w.data(), cols, out.data(), cols, false);
      }, cfg.quick ? 20 : 100);
      report("projection", name, ms, flops);
    }
    const std::string name = "eigen_f32 N=" + std::to_string(n);
    if (!selected(cfg, name)) continue;
    using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    Eigen::Map<const RowMajor> xm(x.data(), n, dm), wm(w.data(), dm, cols);
    Eigen::Map<RowMajor> om(out.data(), n, cols);
    const double ms = median_ms([&] { om.noalias() = xm * wm; }, cfg.quick ? 20 : 100);
    report("projection", name, ms, flops);
  }
}

void bench_attention(const Config& cfg) {
  const std::int64_t heads = 8, dim = 64;
  std::vector<std::int64_t> lengths = {128, 512, 2048};
  if (cfg.quick) lengths = {128, 512};
  for (std::int64_t n : lengths) {
    const attnlens::AttentionShape shape{heads, n, n, dim, dim};
    const auto q = random_floats(static_cast<std::size_t>(heads * n * dim), 9);
    const auto k = random_floats(q.size(), 10), v = random_floats(q.size(), 11);
    std::vector<float> out(q.size());
    const double flops = 4.0 * heads * n * n * dim;
    struct Mask { const char* name; attnlens::MaskSpec spec; };
    attnlens::MaskSpec causal;
    causal.causal = true;
    attnlens::MaskSpec window;
    window.window = attnlens::LocalWindow{64, 64, 1};
    const Mask masks[] = {{"none", {}}, {"causal", causal}, {"window128", window}};
    for (const attnlens::KernelSet& set : attnlens::kernel_sets()) {
      for (const Mask& mask : masks) {
        for (auto strategy : {attnlens::Strategy::kStreaming, attnlens::Strategy::kMaterialized}) {
          const bool streaming = strategy == attnlens::Strategy::kStreaming;
          if (!streaming && n > 512) continue;  // O(N^2) memory: the point of streaming
          const std::string name = std::string(set.name) + (streaming ? " stream " : " matrl ") +
                                   mask.name + " N=" + std::to_string(n);
          if (!selected(cfg, name)) continue;
          attnlens::AttentionOptions opt;
          opt.mask = mask.spec;
          opt.strategy = strategy;
          opt.kernels = &set;
          const attnlens::AttentionInputs in{shape, q, k, v};
          const double ms = median_ms([&] {
            attnlens::attention(in, opt, attnlens::AttentionOutputs{out, {}, {}});
          }, cfg.quick ? 50 : 300);
          report("attention", name, ms, flops);
        }
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  Config cfg;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      cfg.quick = true;
    } else if (std::strcmp(argv[i], "--filter") == 0 && i + 1 < argc) {
      cfg.filter = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s [--quick] [--filter SUBSTRING]\n", argv[0]);
      return 2;
    }
  }
  std::printf("attnlens %s, simd kernels: %s\n", attnlens::version(),
              attnlens::simd_enabled() ? "yes" : "no");
  const double peak = attnlens_bench::register_peak_gflops(cfg.quick ? 20 : 100);
  std::printf("%-12s %-44s %24.2f GFLOP/s\n", "peak", attnlens_bench::register_peak_description(),
              peak);
  bench_gemm(cfg);
  bench_softmax(cfg);
  bench_projection(cfg);
  bench_attention(cfg);
  return 0;
}
