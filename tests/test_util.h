// Shared helpers for the attnlens tests: seeded random data that is identical on every platform,
// element-wise comparison against the double reference with a stated tolerance, and the attention
// problems and masks that several test files build.
#pragma once

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "attnlens/attnlens.h"
#include "reference/random.h"

namespace attnlens_test {

// ---------------------------------------------------------------------------------------------
// Random data (tests/reference/random.h, shared with the benchmarks)
// ---------------------------------------------------------------------------------------------

using attnlens::reference::random_flags;
using attnlens::reference::random_floats;
using attnlens::reference::Rng;

inline std::vector<double> to_double(const float* data, std::size_t n) {
  return std::vector<double>(data, data + n);
}

// ---------------------------------------------------------------------------------------------
// Kernel variants
// ---------------------------------------------------------------------------------------------

// Every registered variant of one operation as a Catch2 generator:
//   const GemmKernel kernel = GENERATE(each_kernel(gemm_kernels()));
//   CAPTURE(kernel.name);
// runs the test case once per variant, and every failure report names the kernel.
template <typename Kernel>
Catch::Generators::GeneratorWrapper<Kernel> each_kernel(attnlens::Span<const Kernel> kernels) {
  return Catch::Generators::from_range(kernels.begin(), kernels.end());
}

// ---------------------------------------------------------------------------------------------
// Comparison
// ---------------------------------------------------------------------------------------------

// |actual - expected| <= abs + rel * |expected|.
struct Tolerance {
  double abs = 0.0;
  double rel = 0.0;
};

// How a flat index decomposes, for failure messages: row-major extents and their names, e.g.
// {{H, Nq, Nk}, {"h", "i", "j"}}. Empty: print the flat index only.
struct Layout {
  std::vector<std::int64_t> dims;
  std::vector<std::string> names;
};

inline Layout head_layout(std::int64_t heads, std::int64_t rows, std::int64_t cols,
                          const char* col_name = "j") {
  return Layout{{heads, rows, cols}, {"h", "i", col_name}};
}

inline Layout matrix_layout(std::int64_t rows, std::int64_t cols) {
  return Layout{{rows, cols}, {"i", "j"}};
}

inline std::string describe_index(std::size_t flat, const Layout& layout) {
  std::ostringstream out;
  out << "flat " << flat;
  if (layout.dims.empty()) return out.str();
  std::vector<std::int64_t> coords(layout.dims.size());
  std::size_t rest = flat;
  for (std::size_t d = layout.dims.size(); d-- > 0;) {
    const auto extent = static_cast<std::size_t>(std::max<std::int64_t>(layout.dims[d], 1));
    coords[d] = static_cast<std::int64_t>(rest % extent);
    rest /= extent;
  }
  out << " (";
  for (std::size_t d = 0; d < coords.size(); ++d) {
    out << (d ? ", " : "") << layout.names[d] << "=" << coords[d];
  }
  out << ")";
  return out.str();
}

// Element counts of the containers the tests compare (attnlens::Span has a `size` member).
template <typename T>
std::size_t element_count(const std::vector<T>& v) {
  return v.size();
}
template <typename T>
std::size_t element_count(attnlens::Span<T> v) {
  return v.size;
}

struct Comparison {
  bool ok = true;
  std::size_t bad_count = 0;
  double worst_ratio = 0.0;  // max |diff| / allowed over all elements; < 1 when ok
  std::string message;       // the first failing element, for the test log
};

// Compares every element; NaN or Inf in `actual` always fails. Reports only the first bad element
// (and how many there were) so a broken kernel does not print thousands of lines.
template <typename Actual>
Comparison compare_close(const Actual& actual, const std::vector<double>& expected, Tolerance tol,
                         const Layout& layout, const std::string& label) {
  Comparison result;
  std::ostringstream msg;
  msg.precision(9);
  if (element_count(actual) != expected.size()) {
    result.ok = false;
    msg << label << ": size " << element_count(actual) << ", expected " << expected.size();
    result.message = msg.str();
    return result;
  }
  for (std::size_t n = 0; n < expected.size(); ++n) {
    const double a = actual[n];
    const double e = expected[n];
    const double allowed = tol.abs + tol.rel * std::fabs(e);
    const double diff = std::fabs(a - e);
    const bool good = std::isfinite(a) && diff <= allowed;
    if (allowed > 0.0) result.worst_ratio = std::max(result.worst_ratio, diff / allowed);
    if (good) continue;
    if (result.ok) {
      msg << label << ": first mismatch at " << describe_index(n, layout) << ": expected " << e
          << ", actual " << a << ", |diff| " << diff << " > allowed " << allowed << " (abs "
          << tol.abs << " + rel " << tol.rel << ")";
    }
    result.ok = false;
    ++result.bad_count;
  }
  if (!result.ok) {
    msg << "; " << result.bad_count << " of " << expected.size() << " elements out of tolerance";
    result.message = msg.str();
  }
  // ATTNLENS_TEST_ERRORS=1 prints how close every check came to its tolerance, for tuning.
  static const bool report = std::getenv("ATTNLENS_TEST_ERRORS") != nullptr;
  if (report) std::fprintf(stderr, "worst_ratio %.3f %s\n", result.worst_ratio, label.c_str());
  return result;
}

}  // namespace attnlens_test

// A macro rather than a function so that Catch2 reports the caller's line and INFO context.
#define ATTNLENS_CHECK_CLOSE(actual, expected, tol, layout, label)                      \
  do {                                                                                  \
    const ::attnlens_test::Comparison attnlens_cmp_ =                                   \
        ::attnlens_test::compare_close((actual), (expected), (tol), (layout), (label)); \
    if (attnlens_cmp_.ok) {                                                             \
      SUCCEED();                                                                        \
    } else {                                                                            \
      FAIL_CHECK(attnlens_cmp_.message);                                                \
    }                                                                                   \
  } while (false)

namespace attnlens_test {

// ---------------------------------------------------------------------------------------------
// Attention problems
// ---------------------------------------------------------------------------------------------

// Inputs of one attention call (and additive weights, used only with kAdditive) that own their
// storage; inputs() and additive() return views into it.
struct Problem {
  attnlens::AttentionShape shape;
  std::vector<float> q, k, v;
  std::int64_t hidden = 0;
  std::vector<float> w_query, w_key, w_v;

  attnlens::AttentionInputs inputs() const { return {shape, q, k, v}; }
  attnlens::AdditiveWeights additive() const { return {hidden, w_query, w_key, w_v}; }
  std::size_t output_size() const {
    return static_cast<std::size_t>(shape.heads * shape.query_len * shape.value_dim);
  }
  std::size_t weights_size() const {
    return static_cast<std::size_t>(shape.heads * shape.query_len * shape.key_len);
  }
};

// q, k, v uniform in [lo, hi); additive weights sized for `hidden` (scaled so the pre-tanh sums
// stay in tanh's sensitive range).
inline Problem make_problem(const attnlens::AttentionShape& shape, std::uint32_t seed,
                            float lo = -1.0f, float hi = 1.0f, std::int64_t hidden = 6) {
  Rng rng(seed);
  Problem p;
  p.shape = shape;
  p.q = random_floats(static_cast<std::size_t>(shape.heads * shape.query_len * shape.head_dim), rng,
                      lo, hi);
  const std::int64_t kv_heads = attnlens::kv_head_count(shape);
  p.k = random_floats(static_cast<std::size_t>(kv_heads * shape.key_len * shape.head_dim), rng, lo,
                      hi);
  p.v = random_floats(static_cast<std::size_t>(kv_heads * shape.key_len * shape.value_dim), rng, lo,
                      hi);
  p.hidden = hidden;
  const float w = 1.5f / std::sqrt(static_cast<float>(shape.head_dim));
  p.w_query =
      random_floats(static_cast<std::size_t>(shape.heads * hidden * shape.head_dim), rng, -w, w);
  p.w_key =
      random_floats(static_cast<std::size_t>(shape.heads * hidden * shape.head_dim), rng, -w, w);
  p.w_v = random_floats(static_cast<std::size_t>(shape.heads * hidden), rng, -1.0f, 1.0f);
  return p;
}

inline std::string describe(const attnlens::AttentionShape& s) {
  std::ostringstream out;
  out << "H=" << s.heads << " Nq=" << s.query_len << " Nk=" << s.key_len << " D=" << s.head_dim
      << " Dv=" << s.value_dim;
  if (s.kv_heads != 0) out << " Hkv=" << s.kv_heads;
  return out.str();
}

inline const char* score_name(attnlens::ScoreFunction score) {
  switch (score) {
    case attnlens::ScoreFunction::kScaledDot:
      return "scaled_dot";
    case attnlens::ScoreFunction::kDot:
      return "dot";
    case attnlens::ScoreFunction::kCosine:
      return "cosine";
    case attnlens::ScoreFunction::kAdditive:
      return "additive";
  }
  return "?";
}

inline const char* strategy_name(attnlens::Strategy strategy) {
  switch (strategy) {
    case attnlens::Strategy::kAuto:
      return "auto";
    case attnlens::Strategy::kMaterialized:
      return "materialized";
    case attnlens::Strategy::kStreaming:
      return "streaming";
  }
  return "?";
}

// ---------------------------------------------------------------------------------------------
// Masks
// ---------------------------------------------------------------------------------------------

enum class MaskKind {
  kNone,
  kCausal,
  kWindow,          // before 3, after 2
  kCausalWindow,    // Longformer-style left window
  kDilatedWindow,   // before 3, after 2, dilation 2
  kStrided,         // Sparse Transformer strided, stride 4
  kFixed,           // Sparse Transformer fixed, stride 4, summary 1
  kGlobal,          // window + global tokens (globals only matter next to a window or sparsity)
  kGlobalCausal,    // the same with causal
  kKeyLengths,      // per-head valid lengths, one head (of every three) fully padded
  kKeyValid,        // random key padding flags
  kCustom,          // random caller mask
  kCombined,        // causal + window + global + key_valid + custom
  kCombinedSparse,  // dilated window + fixed sparsity + key_lengths
};

inline const std::vector<MaskKind>& all_mask_kinds() {
  static const std::vector<MaskKind> kinds = {
      MaskKind::kNone,         MaskKind::kCausal,        MaskKind::kWindow,
      MaskKind::kCausalWindow, MaskKind::kDilatedWindow, MaskKind::kStrided,
      MaskKind::kFixed,        MaskKind::kGlobal,        MaskKind::kGlobalCausal,
      MaskKind::kKeyLengths,   MaskKind::kKeyValid,      MaskKind::kCustom,
      MaskKind::kCombined,     MaskKind::kCombinedSparse};
  return kinds;
}

// The shapes and tilings the forward and backward sweeps over every score and mask share: Nq < Nk
// with Dv != D, Nq > Nk with tile tails, one-element tiles (blocks 0: the tuned default).
struct TiledCase {
  attnlens::AttentionShape shape;
  std::int64_t query_block, key_block;
  std::optional<float> scale;
  float temperature;
};

inline const std::vector<TiledCase>& tiled_cases() {
  static const std::vector<TiledCase> cases = {
      {attnlens::AttentionShape{2, 17, 33, 5, 7}, 0, 0, std::nullopt, 1.0f},
      {attnlens::AttentionShape{3, 33, 17, 16, 3}, 8, 3, 0.7f, 1.3f},
      {attnlens::AttentionShape{1, 13, 13, 4, 4}, 1, 1, std::nullopt, 0.5f},
  };
  return cases;
}

inline const char* mask_name(MaskKind kind) {
  switch (kind) {
    case MaskKind::kNone:
      return "none";
    case MaskKind::kCausal:
      return "causal";
    case MaskKind::kWindow:
      return "window";
    case MaskKind::kCausalWindow:
      return "causal+window";
    case MaskKind::kDilatedWindow:
      return "dilated window";
    case MaskKind::kStrided:
      return "strided";
    case MaskKind::kFixed:
      return "fixed";
    case MaskKind::kGlobal:
      return "window+global";
    case MaskKind::kGlobalCausal:
      return "window+global+causal";
    case MaskKind::kKeyLengths:
      return "key_lengths";
    case MaskKind::kKeyValid:
      return "key_valid";
    case MaskKind::kCustom:
      return "custom";
    case MaskKind::kCombined:
      return "combined";
    case MaskKind::kCombinedSparse:
      return "combined sparse";
  }
  return "?";
}

// Owns the byte arrays a MaskSpec points into; must outlive the spec.
struct MaskStorage {
  std::vector<unsigned char> key_valid;
  std::vector<unsigned char> custom;
};

// A valid MaskSpec of the given kind for `shape` (window sizes and global positions are clamped
// to what the shape allows, so N = 1 works too).
inline attnlens::MaskSpec make_mask(MaskKind kind, const attnlens::AttentionShape& shape,
                                    std::uint32_t seed, MaskStorage& storage) {
  using attnlens::LocalWindow;
  using attnlens::SparsePattern;
  Rng rng(seed);
  const std::int64_t longest = std::max(shape.query_len, shape.key_len);
  // Dilation and stride are clamped too: mask.h bounds only before/after, but a stride or
  // dilation beyond the sequence means nothing, so the tests do not rely on it being accepted.
  const auto window = [&](std::int64_t before, std::int64_t after, std::int64_t dilation) {
    return LocalWindow{std::min(before, longest), std::min(after, longest),
                       std::min(dilation, longest)};
  };
  const auto sparse = [&](SparsePattern pattern, std::int64_t stride, std::int64_t summary) {
    stride = std::min(stride, longest);
    return attnlens::SparseSpec{pattern, stride, std::min(summary, stride)};
  };
  const auto globals = [&] {
    std::vector<std::int64_t> positions = {0, longest / 2, longest - 1};
    positions.erase(std::unique(positions.begin(), positions.end()), positions.end());
    return positions;
  };
  const auto key_lengths = [&] {
    // Half the keys, all keys, none: the last makes fully masked rows.
    std::vector<std::int64_t> lengths;
    for (std::int64_t h = 0; h < shape.heads; ++h) {
      const std::int64_t pattern[3] = {(shape.key_len + 1) / 2, shape.key_len, 0};
      lengths.push_back(pattern[h % 3]);
    }
    return lengths;
  };
  const auto key_valid = [&](double p) {
    storage.key_valid = random_flags(static_cast<std::size_t>(shape.key_len), rng, p);
    return attnlens::ByteView(storage.key_valid);
  };
  const auto custom = [&](double p) {
    storage.custom =
        random_flags(static_cast<std::size_t>(shape.query_len * shape.key_len), rng, p);
    return attnlens::ByteView(storage.custom);
  };

  attnlens::MaskSpec m;
  switch (kind) {
    case MaskKind::kNone:
      break;
    case MaskKind::kCausal:
      m.causal = true;
      break;
    case MaskKind::kWindow:
      m.window = window(3, 2, 1);
      break;
    case MaskKind::kCausalWindow:
      m.causal = true;
      m.window = window(4, 0, 1);
      break;
    case MaskKind::kDilatedWindow:
      m.window = window(3, 2, 2);
      break;
    case MaskKind::kStrided:
      m.sparse = sparse(SparsePattern::kStrided, 4, 1);
      break;
    case MaskKind::kFixed:
      m.sparse = sparse(SparsePattern::kFixed, 4, 1);
      break;
    case MaskKind::kGlobal:
      m.window = window(1, 1, 1);
      m.global_tokens = globals();
      break;
    case MaskKind::kGlobalCausal:
      m.causal = true;
      m.window = window(2, 0, 1);
      m.global_tokens = globals();
      break;
    case MaskKind::kKeyLengths:
      m.key_lengths = key_lengths();
      break;
    case MaskKind::kKeyValid:
      m.key_valid = key_valid(0.6);
      break;
    case MaskKind::kCustom:
      m.custom = custom(0.5);
      break;
    case MaskKind::kCombined:
      m.causal = true;
      m.window = window(6, 0, 1);
      m.global_tokens = {std::min<std::int64_t>(1, longest - 1)};
      m.key_valid = key_valid(0.8);
      m.custom = custom(0.8);
      break;
    case MaskKind::kCombinedSparse:
      m.window = window(4, 4, 2);
      m.sparse = sparse(SparsePattern::kFixed, 4, 2);
      m.key_lengths = key_lengths();
      break;
  }
  return m;
}

// Number of visible keys for (head, query), from the library's mask_matrix.
inline std::vector<std::int64_t> visible_counts(const attnlens::MaskSpec& mask,
                                                const attnlens::AttentionShape& shape,
                                                std::int64_t head) {
  const std::vector<unsigned char> m = attnlens::mask_matrix(mask, shape, head);
  std::vector<std::int64_t> counts(static_cast<std::size_t>(shape.query_len), 0);
  for (std::int64_t i = 0; i < shape.query_len; ++i) {
    for (std::int64_t j = 0; j < shape.key_len; ++j) counts[i] += m[i * shape.key_len + j] != 0;
  }
  return counts;
}

}  // namespace attnlens_test
