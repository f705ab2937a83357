// Register-only peak probe. Ten independent accumulators each run acc = acc * m + c: on x86,
// V8 turns every f32x4.mul and f32x4.add into one mulps/addps, and ten chains cover their
// latency (4 cycles each on the two FP ports), so the loop measures throughput, not latency.
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

__attribute__((noinline)) float mul_add_chains(long iterations, float m, float c) {
  const simd::f32x4 vm = simd::splat(m), vc = simd::splat(c);
  simd::f32x4 acc[kChains];
  for (simd::f32x4& a : acc) a = vc;
  for (long i = 0; i < iterations; ++i) {
    for (simd::f32x4& a : acc) a = simd::add(simd::mul(a, vm), vc);
  }
  simd::f32x4 sum = acc[0];
  for (int j = 1; j < kChains; ++j) sum = simd::add(sum, acc[j]);
  return simd::hsum(sum);
}
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
#endif

}  // namespace

double register_peak_gflops(double run_ms) {
  using Clock = std::chrono::steady_clock;
  float (*volatile probe)(long, float, float) = mul_add_chains;
  volatile float m = 0.999f, c = 0.001f;  // acc converges to c / (1 - m): no overflow, no denormals
  volatile float sink = 0.0f;
  const auto timed_ms = [&](long iterations) {
    const auto t0 = Clock::now();
    sink = sink + probe(iterations, m, c);
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  };
  // Calibrate: double the count until one run lasts a quarter of run_ms (these first runs also
  // let V8 tier the probe up from Liftoff to TurboFan), then aim for run_ms per run.
  long iterations = 1 << 12;
  double ms = timed_ms(iterations);
  while (ms < run_ms / 4 && iterations < (1L << 30)) ms = timed_ms(iterations *= 2);
  iterations = static_cast<long>(static_cast<double>(iterations) * run_ms / std::max(ms, 1e-3));
  double best = 0.0;
  for (int run = 0; run < 7; ++run) {
    ms = timed_ms(iterations);
    best = std::max(best, kChains * kFlopsPerPair * static_cast<double>(iterations) / (ms * 1e6));
  }
  return best;
}

const char* register_peak_description() {
#if ATTNLENS_HAVE_SIMD
  return "128-bit mul+add, register-only, 1 thread";
#else
  return "scalar mul+add, register-only, 1 thread";
#endif
}

}  // namespace attnlens_bench
