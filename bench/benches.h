// The benchmark groups bench_main runs, in order.
#pragma once

#include "timing.h"

namespace attnlens_bench {

void bench_gemm(const Config& cfg);
void bench_panel_gemm(const Config& cfg);
void bench_panel_gemv(const Config& cfg);
void bench_softmax(const Config& cfg);
void bench_projection(const Config& cfg);
void bench_linear(const Config& cfg);
void bench_linear_depth(const Config& cfg);
void bench_attention(const Config& cfg);
void bench_backward(const Config& cfg);

}  // namespace attnlens_bench
