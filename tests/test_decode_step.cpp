// Decode-shaped calls: a few new queries (Nq 1..9) of grouped query heads (1, 2, 4 or 8 per K/V
// head) against a KV cache, causal aligned bottom-right (query_offset = Nk - Nq), the cache in a
// larger buffer (kv_capacity > Nk). With so few query panels per K/V head the kernels read the
// cached rows in place (KernelSet::panel_gemm_strided) instead of packing them: against the
// double reference, and bit for bit the rows of a longer call whose K/V heads are packed.
#include <cstring>
#include <limits>
#include <vector>

#include "attention_checks.h"

using namespace attnlens;
using namespace attnlens_test;

namespace {

// The last `rows` queries of each head of q [H, Nq, D].
std::vector<float> last_queries(const Problem& p, std::int64_t rows) {
  const AttentionShape& s = p.shape;
  std::vector<float> out;
  for (std::int64_t h = 0; h < s.heads; ++h) {
    const auto end = p.q.begin() + (h + 1) * s.query_len * s.head_dim;
    out.insert(out.end(), end - rows * s.head_dim, end);
  }
  return out;
}

// The last `rows` output rows of each head of out [H, Nq, Dv].
std::vector<float> last_rows(const std::vector<float>& out, const AttentionShape& s,
                             std::int64_t rows) {
  std::vector<float> tail;
  for (std::int64_t h = 0; h < s.heads; ++h) {
    const auto end = out.begin() + (h + 1) * s.query_len * s.value_dim;
    tail.insert(tail.end(), end - rows * s.value_dim, end);
  }
  return tail;
}

// x [Hkv, Nk, width] in a [Hkv, capacity, width] buffer whose rows past Nk are NaN.
std::vector<float> in_capacity(const std::vector<float>& x, std::int64_t kv_heads,
                               std::int64_t key_len, std::int64_t capacity, std::int64_t width) {
  std::vector<float> out(static_cast<std::size_t>(kv_heads * capacity * width),
                         std::numeric_limits<float>::quiet_NaN());
  for (std::int64_t h = 0; h < kv_heads; ++h) {
    std::copy(x.begin() + h * key_len * width, x.begin() + (h + 1) * key_len * width,
              out.begin() + h * capacity * width);
  }
  return out;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

}  // namespace

TEST_CASE("decode steps: Nq 1..9 over grouped K/V heads against the reference", "[decode]") {
  std::uint32_t seed = 21000;
  for (const std::int64_t group : {1, 2, 4, 8}) {
    // Nk 37: a padded last key panel; 130: past a streaming chunk. Dv 6 is packed (not whole
    // panels of rows), and so is cosine (its keys are normalised copies).
    for (const AttentionShape& base :
         {AttentionShape{2 * group, 1, 37, 16, 8, 2}, AttentionShape{group, 1, 130, 8, 6, 1}}) {
      for (std::int64_t nq = 1; nq <= 9; ++nq) {
        AttentionShape shape = base;
        shape.query_len = nq;
        const Problem p = make_problem(shape, seed++);
        for (const ScoreFunction score : {ScoreFunction::kScaledDot, ScoreFunction::kCosine}) {
          AttentionOptions options;
          options.score = score;
          options.mask.causal = true;
          options.mask.query_offset = shape.key_len - nq;
          INFO(describe(shape) << ", score " << score_name(score));
          check_all_runs(p, options, tolerances_for(shape));
        }
      }
    }
  }
}

TEST_CASE("decode steps: rows read in place from a KV cache are the packed rows, bit for bit",
          "[decode][kv_capacity]") {
  // 40 queries of 4 heads per K/V head pack their K/V heads (20 panels each); their last rows,
  // asked alone, are read in place, from a cache with NaN past Nk.
  for (const std::int64_t key_len : {64, 45}) {
    const AttentionShape long_shape{8, 40, key_len, 16, 12, 2};
    const Problem p = make_problem(long_shape, 21500 + static_cast<std::uint32_t>(key_len));
    const std::int64_t capacity = key_len + 11;
    const std::vector<float> k = in_capacity(p.k, 2, key_len, capacity, 16);
    const std::vector<float> v = in_capacity(p.v, 2, key_len, capacity, 12);
    for (const KernelSet& set : kernel_sets()) {
      AttentionOptions options;
      options.kernels = &set;
      options.strategy = Strategy::kStreaming;
      options.mask.causal = true;
      options.mask.query_offset = key_len - long_shape.query_len;
      const AttentionResult whole = attention(p.inputs(), options);
      for (std::int64_t nq = 1; nq <= 8; ++nq) {
        AttentionShape shape = long_shape;
        shape.query_len = nq;
        const std::vector<float> q = last_queries(p, nq);
        AttentionInputs cached{shape, q, k, v};
        cached.kv_capacity = capacity;
        options.mask.query_offset = key_len - nq;
        INFO("kernels " << set.name << ", Nk " << key_len << ", Nq " << nq);
        const AttentionResult step = attention(cached, options);
        CHECK(same_bits(step.output, last_rows(whole.output, long_shape, nq)));
        if (threads_supported()) {
          options.threads = 2;
          CHECK(same_bits(attention(cached, options).output, step.output));
          options.threads = 1;
        }
      }
    }
  }
}
