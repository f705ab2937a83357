// The attention backward next to the forward it differentiates, on the headline workload (H=8,
// D=64, N = 512 and 2048, no mask and causal, one thread), each measured in the same run:
//   forward            attention(), streaming, output only
//   forward+lse        the same, also saving the row log-sum-exp (what a training step keeps)
//   backward           attention_backward() from that saved forward
// and a ratio line: backward / forward, and what saving the log-sum-exp costs the forward. The
// three run in turn, round after round (time_interleaved), so load on a shared machine shifts
// them alike.
// Forward flops count 4*H*N^2*D, backward flops 10*H*N^2*D (five products to the forward's two).
#include <cstdio>
#include <string>
#include <vector>

#include "attnlens/attnlens.h"
#include "benches.h"

namespace attnlens_bench {

void bench_backward(const Config& cfg) {
  constexpr std::int64_t kHeads = 8, kDim = 64;
  for (std::int64_t n : {512, 2048}) {
    const attnlens::AttentionShape shape{kHeads, n, n, kDim, kDim};
    const auto elements = static_cast<std::size_t>(kHeads * n * kDim);
    const std::vector<float> q = random_floats(elements, 9), k = random_floats(elements, 10),
                             v = random_floats(elements, 11),
                             d_output = random_floats(elements, 12);
    std::vector<float> output(elements), lse(static_cast<std::size_t>(kHeads * n));
    std::vector<float> dq(elements), dk(elements), dv(elements);
    const attnlens::AttentionInputs inputs{shape, q, k, v};
    const double forward_flops = 4.0 * kHeads * n * n * kDim;
    for (const bool causal : {false, true}) {
      const std::string name = "H=8 D=64 N=" + std::to_string(n) + (causal ? " causal" : " none");
      if (!selected(cfg, name)) continue;
      attnlens::AttentionOptions opt;
      opt.mask.causal = causal;
      opt.strategy = attnlens::Strategy::kStreaming;
      const std::vector<Timing> t = time_interleaved(
          cfg,
          {[&] {
             attnlens::attention(inputs, opt, attnlens::AttentionOutputs{output, {}, {}});
           },
           [&] {
             attnlens::attention(inputs, opt, attnlens::AttentionOutputs{output, {}, {}, lse});
           },
           [&] {
             attnlens::attention_backward({inputs, output, lse, d_output}, opt, {dq, dk, dv});
           }},
          cfg.quick ? 100 : 1000);
      const Timing &forward = t[0], &saving = t[1], &backward = t[2];
      report_flops("backward", name + " forward", forward, forward_flops);
      report_flops("backward", name + " forward+lse", saving, forward_flops);
      report_flops("backward", name + " backward", backward, 2.5 * forward_flops);
      std::printf("%-11s %-46s %10.2fx %9.2fx    (best, median) lse costs the forward %+.1f%%\n",
                  "backward", (name + " backward/forward").c_str(),
                  backward.best_ms / forward.best_ms, backward.median_ms / forward.median_ms,
                  100.0 * (saving.best_ms / forward.best_ms - 1.0));
    }
  }
}

}  // namespace attnlens_bench
