// Register-only peak probe. Ten independent accumulators each run acc = acc * m + c: on x86,
// V8 turns every f32x4.mul and f32x4.add into one mulps/addps (every relaxed_madd into one
// vfmadd), and ten chains cover their latency (4 cycles each on the two FP ports), so the loop
// measures throughput, not latency.
//
// Clang must not fold the loop away: m and c arrive through a volatile read and the function is
// called through a volatile pointer (so neither clang nor binaryen can inline or constant-fold
// it), the chains are IEEE operations clang may not reassociate, and the sum of all
// accumulators is returned. bench/README.md says how to check the emitted wasm.
#include "peak.h"

#include <algorithm>
#include <chrono>

#include "kernels/vec128.h"

namespace attnlens_bench {
namespace {

constexpr int kChains = 10;

#if ATTNLENS_HAVE_SIMD
namespace simd = attnlens::simd;
constexpr double kFlopsPerPair = 8.0;  // 4 lanes x (mul + add)

template <typename M>
__attribute__((noinline)) float mul_add_chains(long iterations, float m, float c) {
  const simd::f32x4 vm = simd::splat(m), vc = simd::splat(c);
  simd::f32x4 acc[kChains];
  for (simd::f32x4& a : acc) a = vc;
  for (long i = 0; i < iterations; ++i) {
    for (simd::f32x4& a : acc) a = M::apply(a, vm, vc);
  }
  simd::f32x4 sum = acc[0];
  for (int j = 1; j < kChains; ++j) sum = simd::add(sum, acc[j]);
  return simd::hsum(sum);
}
float (*const kMulAddChains)(long, float, float) = mul_add_chains<simd::MulAdd>;
#if ATTNLENS_HAVE_RELAXED_SIMD
float (*const kFusedChains)(long, float, float) = mul_add_chains<simd::RelaxedMulAdd>;
#else
float (*const kFusedChains)(long, float, float) = nullptr;
#endif
#else
constexpr double kFlopsPerPair = 2.0;

__attribute__((noinline)) float mul_add_chains(long iterations, float m, float c) {
  float acc[kChains];
  for (float& a : acc) a = c;
  for (long i = 0; i < iterations; ++i) {
    for (float& a : acc) a = a * m + c;
  }
  float sum = 0.0f;
  for (float a : acc) sum += a;
  return sum;
}
float (*const kMulAddChains)(long, float, float) = mul_add_chains;
float (*const kFusedChains)(long, float, float) = nullptr;
#endif

volatile float probe_m = 0.999f, probe_c = 0.001f;  // acc converges to c / (1 - m): no overflow
volatile float probe_sink = 0.0f;

// Called through a volatile pointer, so the probe can be neither inlined nor folded.
double timed_ms(float (*chains)(long, float, float), long iterations) {
  using Clock = std::chrono::steady_clock;
  float (*volatile probe)(long, float, float) = chains;
  const auto t0 = Clock::now();
  probe_sink = probe_sink + probe(iterations, probe_m, probe_c);
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

}  // namespace

PeakProbe::PeakProbe(bool fused)
    : chains_(fused && kFusedChains != nullptr ? kFusedChains : kMulAddChains),
      flops_per_iteration_(kChains * kFlopsPerPair) {
  // Double the count until one run lasts 10 ms; the first runs also tier the probe up.
  long iterations = 1 << 12;
  double ms = timed_ms(chains_, iterations);
  while (ms < 10.0 && iterations < (1L << 28)) ms = timed_ms(chains_, iterations *= 2);
  for (int i = 0; i < 3; ++i) ms = std::min(ms, timed_ms(chains_, iterations));
  iterations_per_ms_ = static_cast<double>(iterations) / std::max(ms, 1e-3);
}

double PeakProbe::run(double ms) {
  const long iterations = std::max(1L, static_cast<long>(iterations_per_ms_ * ms));
  return flops_per_iteration_ * static_cast<double>(iterations) /
         (timed_ms(chains_, iterations) * 1e6);
}

double PeakProbe::best_of(int runs, double ms) {
  double best = 0.0;
  for (int i = 0; i < runs; ++i) best = std::max(best, run(ms));
  return best;
}

const char* register_peak_description(bool fused) {
#if ATTNLENS_HAVE_SIMD
  return fused && kFusedChains != nullptr ? "128-bit relaxed_madd (FMA), register-only, 1 thread"
                                          : "128-bit mul+add, register-only, 1 thread";
#else
  (void)fused;
  return "scalar mul+add, register-only, 1 thread";
#endif
}

bool has_fused_peak() { return kFusedChains != nullptr; }

}  // namespace attnlens_bench
