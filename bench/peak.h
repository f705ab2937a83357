// The register-only arithmetic peak of this machine for the kernels' instruction mix, so every
// kernel can be reported as a fraction of what the core can do at all.
#pragma once

namespace attnlens_bench {

// Independent vector multiply-add chains that never touch memory: 128-bit mul + add (8 flops
// per pair) in SIMD builds, scalar mul + add (2 flops) in ATTNLENS_NO_SIMD builds, and in
// relaxed-SIMD builds f32x4.relaxed_madd (8 flops per instruction, twice the mul + add rate
// on FMA hardware) when `fused` is set.
//
// On a shared machine the throughput a process gets drifts by tens of percent within seconds
// (other work on the same physical core), so benchmarks sample the peak between their own runs
// and compare against the best sample taken alongside them.
class PeakProbe {
 public:
  // Calibrates the iteration count per millisecond (and lets V8 tier the probe up).
  explicit PeakProbe(bool fused = false);
  double run(double ms);  // GFLOP/s of one run of about `ms` milliseconds
  double best_of(int runs, double ms);

 private:
  float (*chains_)(long, float, float);
  double flops_per_iteration_;
  double iterations_per_ms_ = 0.0;
};

// What the peak counts, for printing.
const char* register_peak_description(bool fused = false);

// True when this build can measure the fused (relaxed_madd) peak.
bool has_fused_peak();

}  // namespace attnlens_bench
