// Whole attention calls. Flops are counted 4*H*Nq*Nk*D whatever the mask (the unmasked count), so
// a mask that skips work shows up as higher "effective" GFLOP/s, above 100% of the peak.
#include <string>
#include <vector>

#include "attnlens/attnlens.h"
#include "benches.h"

namespace attnlens_bench {
namespace {

struct Workload {
  attnlens::AttentionShape shape;
  std::vector<float> q, k, v, out, weights, scores;

  explicit Workload(std::int64_t n, std::int64_t heads = 8, std::int64_t dim = 64)
      : shape{heads, n, n, dim, dim},
        q(random_floats(static_cast<std::size_t>(heads * n * dim), 9)),
        k(random_floats(q.size(), 10)),
        v(random_floats(q.size(), 11)),
        out(q.size()) {}
  attnlens::AttentionInputs inputs() const { return {shape, q, k, v}; }
  double flops() const {
    return 4.0 * shape.heads * shape.query_len * shape.key_len * shape.head_dim;
  }
};

struct Mask {
  const char* name;
  attnlens::MaskSpec spec;
};

std::vector<Mask> masks() {
  attnlens::MaskSpec causal;
  causal.causal = true;
  attnlens::MaskSpec window;
  window.window = attnlens::LocalWindow{64, 64, 1};  // 128 keys around each query (129 with it)
  return {{"none", {}}, {"causal", causal}, {"window128", window}};
}

// Thread counts to time: 1, and 2 where the build has threads (lines then end in " 2t").
std::vector<std::int64_t> thread_counts() {
  if (attnlens::threads_supported()) return {1, 2};
  return {1};
}

std::string threads_suffix(std::int64_t threads) {
  return threads == 1 ? "" : " " + std::to_string(threads) + "t";
}

// The figures issue 6 sets targets for: H=8, D=64, streaming, default kernels; one thread, and
// two in threaded builds.
void bench_targets(const Config& cfg) {
  for (std::int64_t n : {512, 2048}) {
    Workload w(n);
    for (const Mask& mask : masks()) {
      for (std::int64_t threads : thread_counts()) {
        const std::string name = "H=8 D=64 N=" + std::to_string(n) + " " + mask.name + " stream" +
                                 threads_suffix(threads);
        if (!selected(cfg, name)) continue;
        attnlens::AttentionOptions opt;
        opt.mask = mask.spec;
        opt.strategy = attnlens::Strategy::kStreaming;
        opt.threads = threads;
        const Timing t = time_calls(
            cfg,
            [&] {
              attnlens::attention(w.inputs(), opt, attnlens::AttentionOutputs{w.out, {}, {}});
            },
            cfg.quick ? 100 : 1000);
        report_flops("attention", name, t, w.flops());
      }
    }
  }
}

// Where two threads start to pay (web/src/threads.js THREADS_MIN_FLOPS): small problems, with
// the weights as the visualisation asks for them, 1 and 2 threads.
void bench_thread_break_even(const Config& cfg) {
  if (!attnlens::threads_supported()) return;
  for (std::int64_t n : {16, 32, 64, 128, 256}) {
    Workload w(n, 4, 32);
    w.weights.resize(static_cast<std::size_t>(4 * n * n));
    for (std::int64_t threads : {1, 2}) {
      const std::string name =
          "H=4 D=32 N=" + std::to_string(n) + " weights" + threads_suffix(threads);
      if (!selected(cfg, name)) continue;
      attnlens::AttentionOptions opt;
      opt.threads = threads;
      const Timing t = time_calls(
          cfg,
          [&] {
            attnlens::attention(w.inputs(), opt, attnlens::AttentionOutputs{w.out, w.weights, {}});
          },
          cfg.quick ? 200 : 2000);
      report_flops("threads", name, t, w.flops());
    }
  }
}

// The visualisation's sizes: every keystroke recomputes weights and scores, so latency counts.
void bench_visualisation(const Config& cfg) {
  for (std::int64_t n : {16, 64, 256}) {
    Workload w(n);
    w.weights.resize(static_cast<std::size_t>(8 * n * n));
    w.scores.resize(w.weights.size());
    const std::string name = "H=8 D=64 N=" + std::to_string(n) + " weights+scores matrl";
    if (!selected(cfg, name)) continue;
    attnlens::AttentionOptions opt;
    opt.strategy = attnlens::Strategy::kMaterialized;
    const Timing t = time_calls(
        cfg,
        [&] {
          attnlens::attention(w.inputs(), opt,
                              attnlens::AttentionOutputs{w.out, w.weights, w.scores});
        },
        cfg.quick ? 50 : 300);
    report_flops("visualise", name, t, w.flops());
  }
}

// Every kernel set, mask and strategy at moderate sizes.
void bench_matrix(const Config& cfg) {
  for (std::int64_t n : {128, 512}) {
    Workload w(n);
    for (const attnlens::KernelSet& set : attnlens::kernel_sets()) {
      for (const Mask& mask : masks()) {
        for (auto strategy : {attnlens::Strategy::kStreaming, attnlens::Strategy::kMaterialized}) {
          const bool streaming = strategy == attnlens::Strategy::kStreaming;
          const std::string name = std::string(set.name) + (streaming ? " stream " : " matrl ") +
                                   mask.name + " N=" + std::to_string(n);
          if (!selected(cfg, name)) continue;
          attnlens::AttentionOptions opt;
          opt.mask = mask.spec;
          opt.strategy = strategy;
          opt.kernels = &set;
          const Timing t = time_calls(
              cfg,
              [&] {
                attnlens::attention(w.inputs(), opt, attnlens::AttentionOutputs{w.out, {}, {}});
              },
              cfg.quick ? 50 : 300);
          report_flops("attention", name, t, w.flops());
        }
      }
    }
  }
}

}  // namespace

void bench_attention(const Config& cfg) {
  bench_targets(cfg);
  bench_thread_break_even(cfg);
  bench_visualisation(cfg);
  bench_matrix(cfg);
}

}  // namespace attnlens_bench
