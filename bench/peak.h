// The register-only arithmetic peak of this machine for the kernels' instruction mix, so every
// kernel can be reported as a fraction of what the core can do at all.
#pragma once

namespace attnlens_bench {

// GFLOP/s of independent vector multiply-add chains that never touch memory: 128-bit mul + add
// (8 flops per pair) in SIMD builds, scalar mul + add (2 flops) in ATTNLENS_NO_SIMD builds. The
// best of several runs of about `run_ms` each, so a busy machine understates it least.
double register_peak_gflops(double run_ms);

// What the peak counts, for printing.
const char* register_peak_description();

}  // namespace attnlens_bench
