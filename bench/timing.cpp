#include "timing.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace attnlens_bench {

using Clock = std::chrono::steady_clock;

bool selected(const Config& cfg, const std::string& name) {
  return cfg.filter.empty() || name.find(cfg.filter) != std::string::npos;
}

Timing time_calls(const Config& cfg, const std::function<void()>& fn, double min_ms) {
  const auto elapsed_ms = [](Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  };
  const auto warm_start = Clock::now();
  for (int i = 0; i < 3 || elapsed_ms(warm_start) < 20.0; ++i) fn();

  std::vector<double> times;
  double total = 0.0, peak = 0.0;
  while ((total < min_ms || times.size() < 5) && times.size() < 500) {
    const auto t0 = Clock::now();
    fn();
    times.push_back(elapsed_ms(t0));
    total += times.back();
    if (cfg.peak != nullptr)
      peak = std::max(peak, cfg.peak->run(std::clamp(times.back() / 4, 0.5, 10.0)));
  }
  std::sort(times.begin(), times.end());
  return Timing{times[times.size() / 2], times.front(), peak};
}

std::vector<Timing> time_interleaved(const Config& cfg,
                                     const std::vector<std::function<void()>>& fns, double min_ms) {
  const auto elapsed_ms = [](Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  };
  for (const auto& fn : fns) {
    const auto warm_start = Clock::now();
    for (int i = 0; i < 3 || elapsed_ms(warm_start) < 20.0; ++i) fn();
  }
  std::vector<std::vector<double>> times(fns.size());
  std::vector<double> totals(fns.size(), 0.0);
  std::vector<Timing> result(fns.size());
  const auto done = [&] {
    for (std::size_t f = 0; f < fns.size(); ++f) {
      if (totals[f] < min_ms || times[f].size() < 5) return times[f].size() >= 500;
    }
    return true;
  };
  while (!done()) {
    for (std::size_t f = 0; f < fns.size(); ++f) {
      const auto t0 = Clock::now();
      fns[f]();
      times[f].push_back(elapsed_ms(t0));
      totals[f] += times[f].back();
      if (cfg.peak != nullptr) {
        result[f].peak_gflops = std::max(result[f].peak_gflops,
                                         cfg.peak->run(std::clamp(times[f].back() / 4, 0.5, 10.0)));
      }
    }
  }
  for (std::size_t f = 0; f < fns.size(); ++f) {
    std::sort(times[f].begin(), times[f].end());
    result[f].median_ms = times[f][times[f].size() / 2];
    result[f].best_ms = times[f].front();
  }
  return result;
}

void report_flops(const char* group, const std::string& name, const Timing& t, double flops) {
  const double median = flops / (t.median_ms * 1e6), best = flops / (t.best_ms * 1e6);
  std::printf("%-11s %-46s %10.3f %10.3f ms %8.2f %8.2f GFLOP/s %5.0f%%\n", group, name.c_str(),
              t.median_ms, t.best_ms, median, best,
              t.peak_gflops > 0 ? 100.0 * best / t.peak_gflops : 0.0);
}

void report_elements(const char* group, const std::string& name, const Timing& t, double elements,
                     const char* unit) {
  std::printf("%-11s %-46s %10.3f %10.3f ms %8.2f %8.2f ns/%s\n", group, name.c_str(), t.median_ms,
              t.best_ms, t.median_ms * 1e6 / elements, t.best_ms * 1e6 / elements, unit);
}

}  // namespace attnlens_bench
