// attnlens benchmarks: the register-only peak, every registered kernel variant, the projections
// (ours vs Eigen), a model's linear layers in f32, f16, Q8_0 and 4-bit, and whole attention calls.
// Prints median and best times, GFLOP/s at both and the best as a percentage of the peak sampled
// alongside; asserts nothing.
//
//   attnlens_bench [--quick] [--filter SUBSTRING]
//
// Flop counts: GEMM 2*m*n*k; attention 4*H*Nq*Nk*D (the unmasked count). See README.md.
#include <cstdio>
#include <cstring>

#include "attnlens/attnlens.h"
#include "benches.h"
#include "peak.h"

int main(int argc, char** argv) {
  attnlens_bench::Config cfg;
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
  // In relaxed-SIMD builds the FMA peak is what the fastest kernels can reach, so lines are
  // measured against it; the mul+add peak is printed too.
  const bool fused = attnlens_bench::has_fused_peak();
  attnlens_bench::PeakProbe peak(fused);
  cfg.peak = &peak;
  if (fused) {
    attnlens_bench::PeakProbe mul_add;
    std::printf("%-11s %-46s %24s %17.2f GFLOP/s\n", "peak",
                attnlens_bench::register_peak_description(false), "", mul_add.best_of(10, 20.0));
  }
  std::printf("%-11s %-46s %24s %17.2f GFLOP/s\n", "peak",
              attnlens_bench::register_peak_description(fused), "", peak.best_of(10, 20.0));
  std::printf("%-11s %-46s %10s %10s    %8s %8s         %5s\n", "group", "name", "median", "best",
              "median", "best", "best/peak");
  attnlens_bench::bench_gemm(cfg);
  attnlens_bench::bench_panel_gemm(cfg);
  attnlens_bench::bench_panel_gemv(cfg);
  attnlens_bench::bench_softmax(cfg);
  attnlens_bench::bench_projection(cfg);
  attnlens_bench::bench_linear(cfg);
  attnlens_bench::bench_linear_depth(cfg);
  attnlens_bench::bench_attention(cfg);
  attnlens_bench::bench_backward(cfg);
  return 0;
}
