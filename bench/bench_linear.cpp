// The linear layers of a model forward (models::linear) with the matrix stored as f32, f16, Q8_0
// and 4-bit (q4: Q4_0 / Q4_K's panel form, q4.h), at GPT-2 small's shapes (768 -> 2304: q|k|v; 768
// -> 768: the attention output; 768 -> 3072 and 3072 -> 768: the MLP) and Qwen2.5-0.5B's (896 ->
// 896: q and o; 896 -> 128: k and v; 896 -> 4864: gate and up; 4864 -> 896: down) for N = 1 (a
// decode step), 64 and 512 tokens. The storages run in turn in one loop (time_interleaved), so
// their ratios hold on a busy machine; one thread. Each storage has as many copies of its matrix as
// make 48 MiB of f32 (a model's layers), and each call takes the next copy, so the weights come
// from memory as in a forward pass, not from a cache that one small matrix would stay in.
//
// The `linear-depth` lines time linear() accumulating over depth slices of 128, 256 and 512
// against the whole depth in one panel_gemm call (the loop before slices: row blocks of 384 KiB
// of x at the full depth), interleaved, at ViT-base/16's shapes (197 tokens) and GPT-2 small's
// (N = 64, 256, 1024), f32, and f16 and Q8_0 at ViT's second MLP layer and GPT-2's first (N = 64).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "attnlens/attnlens.h"
#include "benches.h"
#include "models/linear.h"
#include "models/ops.h"
#include "models/packing.h"
#include "models/q4.h"
#include "models/q8_0.h"

namespace attnlens_bench {

namespace {

// One weight storage of the `linear` lines: as many copies of one matrix as make 48 MiB of f32
// (at least 2), and the PackedMatrix of copy `i`. A storage the core gains is one more make_*
// function and one more entry in bench_linear's list.
struct StoredCopies {
  const char* name;
  std::int64_t copies = 0;
  std::function<attnlens::models::PackedMatrix(std::int64_t)> matrix;
  std::shared_ptr<void> keep;  // the copies' memory
};

std::int64_t copies_for(std::int64_t in, std::int64_t out) {
  return std::max<std::int64_t>(2,
                                (48 << 20) / (attnlens::models::packed_elements(in, out, 1) * 4));
}

StoredCopies make_f32(std::int64_t in, std::int64_t out, attnlens::reference::Rng& rng) {
  using namespace attnlens::models;
  const std::int64_t elements = packed_elements(in, out, 1), copies = copies_for(in, out);
  auto data = std::make_shared<std::vector<float>>(static_cast<std::size_t>(elements * copies));
  for (float& v : *data) v = static_cast<float>(rng.integer(-1024, 1024)) / 4096.0f;
  return {"f32", copies,
          [=](std::int64_t c) {
            return PackedMatrix{data->data() + c * elements, nullptr, in, out, nullptr};
          },
          data};
}

StoredCopies make_f16(std::int64_t in, std::int64_t out, attnlens::reference::Rng& rng) {
  using namespace attnlens::models;
  const std::int64_t elements = packed_elements(in, out, 1), copies = copies_for(in, out);
  auto data =
      std::make_shared<std::vector<std::uint16_t>>(static_cast<std::size_t>(elements * copies));
  for (std::uint16_t& h : *data) h = static_cast<std::uint16_t>(0x2000 | rng.integer(0, 0x83ff));
  return {"f16", copies,
          [=](std::int64_t c) {
            return PackedMatrix{nullptr, data->data() + c * elements, in, out, nullptr};
          },
          data};
}

StoredCopies make_q8(std::int64_t in, std::int64_t out, attnlens::reference::Rng& rng) {
  using namespace attnlens::models;
  const std::int64_t bytes = q8_packed_bytes(in, out, 1), copies = copies_for(in, out);
  auto data = std::make_shared<std::vector<std::uint8_t>>(static_cast<std::size_t>(bytes * copies));
  std::vector<std::uint8_t> written(static_cast<std::size_t>(q8_written_bytes(in, out)));
  for (std::int64_t copy = 0; copy < copies; ++copy) {
    for (std::size_t b = 0; b < written.size(); b += kQ8BlockBytes) {
      written[b] = 0x00;
      written[b + 1] = 0x1c;  // scale 2^-8
      for (std::int64_t i = 0; i < kQ8Block; ++i) {
        written[b + 2 + i] = static_cast<std::uint8_t>(rng.integer(-127, 127));
      }
    }
    pack_q8_matrix(written.data(), in, out, 1, data->data() + copy * bytes);
  }
  return {"q8", copies,
          [=](std::int64_t c) {
            return PackedMatrix{nullptr, nullptr, in, out, data->data() + c * bytes};
          },
          data};
}

StoredCopies make_q4(std::int64_t in, std::int64_t out, attnlens::reference::Rng& rng) {
  using namespace attnlens::models;
  const std::int64_t bytes = q4_packed_bytes(in, out, 1), copies = copies_for(in, out);
  auto data = std::make_shared<std::vector<std::uint8_t>>(static_cast<std::size_t>(bytes * copies));
  std::vector<std::uint8_t> written(static_cast<std::size_t>(q4_written_bytes(in, out)));
  for (std::int64_t copy = 0; copy < copies; ++copy) {
    for (std::size_t b = 0; b < written.size(); b += kQ4BlockBytes) {
      const float scale_min[2] = {1.0f / 256, 8.0f / 256};  // Q4_0's form, d = 2^-8
      std::memcpy(written.data() + b, scale_min, sizeof scale_min);
      for (std::int64_t i = 0; i < kQ4Block / 2; ++i) {
        written[b + 8 + i] = static_cast<std::uint8_t>(rng.integer(0, 255));
      }
    }
    pack_q4_matrix(written.data(), in, out, 1, data->data() + copy * bytes);
  }
  return {"q4", copies,
          [=](std::int64_t c) {
            return PackedMatrix{nullptr, nullptr, in, out, nullptr, data->data() + c * bytes};
          },
          data};
}

}  // namespace

void bench_linear(const Config& cfg) {
  using namespace attnlens::models;
  struct Shape {
    const char* model;
    const char* layer;
    std::int64_t in, out;
  };
  const attnlens::KernelSet& kernels = attnlens::default_kernel_set();
  const StepContext ctx{kernels, model_ops_for(kernels), 1};
  if (FILE* f = std::fopen("/proc/loadavg", "r")) {
    char line[64] = {};
    if (std::fgets(line, sizeof line, f)) std::printf("linear     load average %s", line);
    std::fclose(f);
  }
  // GPT-2 small (hidden 768) and Qwen2.5-0.5B (hidden 896, 14 query heads and 2 key/value heads
  // of 64, intermediate 4864): every distinct linear layer of a block.
  const Shape shapes[] = {{"gpt2", "q|k|v", 768, 2304},     {"gpt2", "attn out", 768, 768},
                          {"gpt2", "mlp up", 768, 3072},    {"gpt2", "mlp down", 3072, 768},
                          {"qwen2", "q, o", 896, 896},      {"qwen2", "k, v", 896, 128},
                          {"qwen2", "gate, up", 896, 4864}, {"qwen2", "down", 4864, 896}};
  using Maker = StoredCopies (*)(std::int64_t, std::int64_t, attnlens::reference::Rng&);
  const Maker storages[] = {make_f32, make_f16, make_q8, make_q4};
  attnlens::reference::Rng rng(17);
  for (const Shape& shape : shapes) {
    const std::int64_t in = shape.in, out = shape.out;
    const std::string layer =
        std::string(shape.model) + " " + std::to_string(in) + "x" + std::to_string(out);
    if (!selected(cfg, "linear " + layer)) continue;
    std::vector<StoredCopies> stored;
    for (const Maker make : storages) stored.push_back(make(in, out, rng));
    for (std::int64_t n : {1, 64, 512}) {
      const std::string size = layer + " N=" + std::to_string(n);
      if (!selected(cfg, "linear " + size)) continue;
      const auto x = random_floats(static_cast<std::size_t>(n * in), 3);
      RowPanels panels;
      pack_rows(x.data(), n, in, panels);
      std::vector<float> y(static_cast<std::size_t>(n * out));
      std::vector<std::function<void()>> calls;
      std::vector<std::int64_t> next(stored.size(), 0);
      for (std::size_t s = 0; s < stored.size(); ++s) {
        calls.push_back([&, s] {
          const StoredCopies& w = stored[s];
          linear(ctx, panels, w.matrix(next[s]++ % w.copies), nullptr, y.data(), out);
        });
      }
      const std::vector<Timing> t = time_interleaved(cfg, calls, cfg.quick ? 30 : 200);
      for (std::size_t i = 0; i < t.size(); ++i) {
        report_flops("linear", std::string(stored[i].name) + " " + size, t[i],
                     2.0 * static_cast<double>(n * in * out));
      }
      std::string speeds;
      for (std::size_t i = 1; i < t.size(); ++i) {
        char part[48];
        std::snprintf(part, sizeof part, "%s%s %.2fx", i > 1 ? ", " : "", stored[i].name,
                      t[0].best_ms / t[i].best_ms);
        speeds += part;
      }
      std::printf("%-11s %-46s speed of f32's: %s (best times)\n", "linear",
                  (std::string("speed ") + size).c_str(), speeds.c_str());
    }
  }
}

void bench_linear_depth(const Config& cfg) {
  using namespace attnlens::models;
  struct Case {
    const char* model;
    std::int64_t rows, in, out;
    int storage;  // 0 f32, 1 f16, 2 Q8_0
  };
  const attnlens::KernelSet& kernels = attnlens::default_kernel_set();
  const StepContext ctx{kernels, model_ops_for(kernels), 1};
  if (FILE* f = std::fopen("/proc/loadavg", "r")) {
    char line[64] = {};
    if (std::fgets(line, sizeof line, f)) std::printf("linear-depth load average %s", line);
    std::fclose(f);
  }
  std::vector<Case> cases = {{"vit-base", 197, 768, 2304, 0},
                             {"vit-base", 197, 768, 3072, 0},
                             {"vit-base", 197, 3072, 768, 0},
                             {"vit-base", 197, 3072, 768, 1},
                             {"vit-base", 197, 3072, 768, 2}};
  for (std::int64_t n : {64, 256, 1024}) {
    for (const auto& [in, out] :
         {std::pair<std::int64_t, std::int64_t>{768, 2304}, {768, 768}, {768, 3072}, {3072, 768}}) {
      cases.push_back({"gpt2", n, in, out, 0});
    }
  }
  cases.push_back({"gpt2", 64, 768, 3072, 1});
  cases.push_back({"gpt2", 64, 768, 3072, 2});
  const char* storages[] = {"f32", "f16", "q8"};
  attnlens::reference::Rng rng(23);
  for (const Case& k : cases) {
    const std::string size = std::string(k.model) + " " + storages[k.storage] + " " +
                             std::to_string(k.rows) + "x" + std::to_string(k.in) + "x" +
                             std::to_string(k.out);
    if (!selected(cfg, "linear-depth " + size)) continue;
    // As many copies as make 48 MiB of f32, each call the next: weights come from memory.
    const std::int64_t elements = packed_elements(k.in, k.out, 1);
    const std::int64_t copies = std::max<std::int64_t>(2, (48 << 20) / (elements * 4));
    std::vector<float> f32;
    std::vector<std::uint16_t> f16;
    std::vector<std::uint8_t> q8;
    const std::int64_t q8_bytes = q8_packed_bytes(k.in, k.out, 1);
    if (k.storage == 0) {
      f32.resize(static_cast<std::size_t>(elements * copies));
      for (float& v : f32) v = static_cast<float>(rng.integer(-1024, 1024)) / 4096.0f;
    } else if (k.storage == 1) {
      f16.resize(static_cast<std::size_t>(elements * copies));
      for (std::uint16_t& h : f16) h = static_cast<std::uint16_t>(0x2000 | rng.integer(0, 0x83ff));
    } else {
      std::vector<std::uint8_t> written(static_cast<std::size_t>(q8_written_bytes(k.in, k.out)));
      q8.resize(static_cast<std::size_t>(q8_bytes * copies));
      for (std::int64_t copy = 0; copy < copies; ++copy) {
        for (std::size_t b = 0; b < written.size(); b += kQ8BlockBytes) {
          written[b] = 0x00;
          written[b + 1] = 0x1c;  // scale 2^-8
          for (std::int64_t i = 0; i < kQ8Block; ++i) {
            written[b + 2 + i] = static_cast<std::uint8_t>(rng.integer(-127, 127));
          }
        }
        pack_q8_matrix(written.data(), k.in, k.out, 1, q8.data() + copy * q8_bytes);
      }
    }
    const auto matrix = [&](std::int64_t copy) {
      if (k.storage == 0)
        return PackedMatrix{f32.data() + copy * elements, nullptr, k.in, k.out, nullptr};
      if (k.storage == 1)
        return PackedMatrix{nullptr, f16.data() + copy * elements, k.in, k.out, nullptr};
      return PackedMatrix{nullptr, nullptr, k.in, k.out, q8.data() + copy * q8_bytes};
    };
    const auto x = random_floats(static_cast<std::size_t>(k.rows * k.in), 3);
    RowPanels panels;
    pack_rows(x.data(), k.rows, k.in, panels);
    std::vector<float> y(static_cast<std::size_t>(k.rows * k.out));
    const std::int64_t slices[] = {k.in, 128, 256, 512};
    const char* names[] = {"whole", "128", "256", "512"};
    std::vector<std::function<void()>> calls;
    std::int64_t next = 0;
    for (const std::int64_t slice : slices) {
      calls.push_back([&, slice] {
        linear_in_depth_slices(ctx, panels, matrix(next++ % copies), nullptr, y.data(), k.out,
                               slice);
      });
    }
    const std::vector<Timing> t = time_interleaved(cfg, calls, cfg.quick ? 30 : 200);
    for (std::size_t i = 0; i < t.size(); ++i) {
      report_flops("linear-depth", size + " depth " + names[i], t[i],
                   2.0 * static_cast<double>(k.rows * k.in * k.out));
    }
    std::printf("%-11s %-46s whole / 128 %.2fx, / 256 %.2fx, / 512 %.2fx (best times)\n",
                "linear-depth", (std::string("speed ") + size).c_str(), t[0].best_ms / t[1].best_ms,
                t[0].best_ms / t[2].best_ms, t[0].best_ms / t[3].best_ms);
  }
}

}  // namespace attnlens_bench
