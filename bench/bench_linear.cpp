// The linear layers of a model forward (models::linear) with the matrix stored as f32, f16 and
// Q8_0, at GPT-2 small's shapes (768 -> 768: q, k, v, the attention output; 768 -> 3072: the
// MLP's first layer) for N = 1 (a decode step), 64 and 512 tokens. The three storages run in
// turn in one loop (time_interleaved), so their ratios hold on a busy machine; one thread. Each
// storage has as many copies of its matrix as make 48 MiB of f32 (a model's layers), and each
// call takes the next copy, so the weights come from memory as in a forward pass, not from a
// cache that one small matrix would stay in.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "attnlens/attnlens.h"
#include "benches.h"
#include "models/linear.h"
#include "models/ops.h"
#include "models/packing.h"
#include "models/q8_0.h"

namespace attnlens_bench {

void bench_linear(const Config& cfg) {
  using namespace attnlens::models;
  struct Shape {
    std::int64_t in, out;
  };
  const attnlens::KernelSet& kernels = attnlens::default_kernel_set();
  const StepContext ctx{kernels, model_ops_for(kernels), 1};
  if (FILE* f = std::fopen("/proc/loadavg", "r")) {
    char line[64] = {};
    if (std::fgets(line, sizeof line, f)) std::printf("linear     load average %s", line);
    std::fclose(f);
  }
  attnlens::reference::Rng rng(17);
  for (const Shape& shape : {Shape{768, 768}, Shape{768, 3072}}) {
    const std::int64_t in = shape.in, out = shape.out;
    const std::int64_t elements = packed_elements(in, out, 1);
    const std::int64_t copies = std::max<std::int64_t>(2, (48 << 20) / (elements * 4));
    std::vector<float> f32(static_cast<std::size_t>(elements * copies));
    for (float& v : f32) v = static_cast<float>(rng.integer(-1024, 1024)) / 4096.0f;
    std::vector<std::uint16_t> f16(f32.size());
    for (std::uint16_t& h : f16) h = static_cast<std::uint16_t>(0x2000 | rng.integer(0, 0x83ff));
    std::vector<std::uint8_t> written(static_cast<std::size_t>(q8_written_bytes(in, out)));
    const std::int64_t q8_bytes = q8_packed_bytes(in, out, 1);
    std::vector<std::uint8_t> q8(static_cast<std::size_t>(q8_bytes * copies));
    for (std::int64_t copy = 0; copy < copies; ++copy) {
      for (std::size_t b = 0; b < written.size(); b += kQ8BlockBytes) {
        written[b] = 0x00;
        written[b + 1] = 0x1c;  // scale 2^-8
        for (std::int64_t i = 0; i < kQ8Block; ++i) {
          written[b + 2 + i] = static_cast<std::uint8_t>(rng.integer(-127, 127));
        }
      }
      pack_q8_matrix(written.data(), in, out, 1, q8.data() + copy * q8_bytes);
    }
    const auto matrix = [&](int storage, std::int64_t copy) {
      if (storage == 0)
        return PackedMatrix{f32.data() + copy * elements, nullptr, in, out, nullptr};
      if (storage == 1)
        return PackedMatrix{nullptr, f16.data() + copy * elements, in, out, nullptr};
      return PackedMatrix{nullptr, nullptr, in, out, q8.data() + copy * q8_bytes};
    };
    const char* names[] = {"f32", "f16", "q8"};
    for (std::int64_t n : {1, 64, 512}) {
      const std::string size =
          std::to_string(in) + "x" + std::to_string(out) + " N=" + std::to_string(n);
      if (!selected(cfg, "linear " + size)) continue;
      const auto x = random_floats(static_cast<std::size_t>(n * in), 3);
      RowPanels panels;
      pack_rows(x.data(), n, in, panels);
      std::vector<float> y(static_cast<std::size_t>(n * out));
      std::vector<std::function<void()>> calls;
      std::int64_t next[3] = {0, 0, 0};
      for (int storage = 0; storage < 3; ++storage) {
        calls.push_back([&, storage] {
          const std::int64_t copy = next[storage]++ % copies;
          linear(ctx, panels, matrix(storage, copy), nullptr, y.data(), out);
        });
      }
      const std::vector<Timing> t = time_interleaved(cfg, calls, cfg.quick ? 30 : 200);
      for (std::size_t i = 0; i < t.size(); ++i) {
        report_flops("linear", std::string(names[i]) + " " + size, t[i], 2.0 * n * in * out);
      }
      std::printf("%-11s %-46s q8 / f32 %.2fx, q8 / f16 %.2fx (best times)\n", "linear",
                  (std::string("speed ") + size).c_str(), t[0].best_ms / t[2].best_ms,
                  t[1].best_ms / t[2].best_ms);
    }
  }
}

}  // namespace attnlens_bench
