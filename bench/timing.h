// Timing and printing shared by the benchmarks.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "peak.h"
#include "reference/random.h"

namespace attnlens_bench {

struct Config {
  bool quick = false;
  std::string filter;
  PeakProbe* peak = nullptr;  // sampled between timed calls for the "% of peak" column
};

bool selected(const Config& cfg, const std::string& name);

// Wall times in milliseconds of repeated calls: the median, and the best, which is what a busy
// shared machine distorts least; and the best register-only peak sampled between the calls.
struct Timing {
  double median_ms = 0.0;
  double best_ms = 0.0;
  double peak_gflops = 0.0;
};

// Calls `fn` until it has run ~min_ms (at least 5 times, at most 500) after a warm-up of at
// least 3 calls or 20 ms that lets V8 tier the code up from Liftoff to TurboFan. After each
// call the peak probe (cfg.peak) runs for a quarter of the call's time (0.5 to 10 ms).
Timing time_calls(const Config& cfg, const std::function<void()>& fn, double min_ms);

// The same for calls to compare with each other: one call of each in turn, round after round,
// until each has run ~min_ms (at least 5 rounds), so a shared machine's slow stretches hit them
// alike and their ratio holds. One Timing per function, in order.
std::vector<Timing> time_interleaved(const Config& cfg,
                                     const std::vector<std::function<void()>>& fns, double min_ms);

// Seeded inputs: the tests' generator (tests/reference/random.h).
using attnlens::reference::random_floats;

// One line: group, name, median and best ms, GFLOP/s at both, and the best as % of the peak
// sampled alongside.
void report_flops(const char* group, const std::string& name, const Timing& t, double flops);
// One line for element-wise kernels: ns per element and millions of elements per second.
void report_elements(const char* group, const std::string& name, const Timing& t, double elements,
                     const char* unit);

}  // namespace attnlens_bench
