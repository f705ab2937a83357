// The fuzzer's draws of the options between the score and the softmax (attention.h): soft cap,
// bias (per head or broadcast, with hidden keys), ALiBi, top-k and hashed attention; the bound
// on the logits they allow, for the tolerance; and whether a row's top-k choice is a near tie,
// where float and double may rightly keep different keys.
#pragma once

#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "attnlens/attnlens.h"
#include "reference/reference.h"
#include "reference/terms.h"

namespace fuzz_terms {

using namespace attnlens;

struct TermStorage {
  std::vector<float> bias, slopes;
};

// About one draw in four sets each option; returns their description.
inline std::string draw_terms(FuzzedDataProvider& in, const AttentionShape& s, AttentionOptions& o,
                              TermStorage& storage) {
  std::string text;
  if (in.ConsumeIntegralInRange<int>(0, 3) == 0) {
    o.softcap = static_cast<float>(in.ConsumeIntegralInRange<int>(1, 32)) / 4.0f;
    text += " softcap=" + std::to_string(o.softcap);
  }
  if (in.ConsumeIntegralInRange<int>(0, 3) == 0) {
    const bool per_head = in.ConsumeBool();
    storage.bias.resize(
        static_cast<std::size_t>((per_head ? s.heads : 1) * s.query_len * s.key_len));
    for (float& x : storage.bias) {
      const int n = in.ConsumeIntegralInRange<int>(-65, 64);
      x = n == -65 ? -std::numeric_limits<float>::infinity() : static_cast<float>(n) / 16.0f;
    }
    o.bias = FloatView(storage.bias);
    text += per_head ? " bias[H,Nq,Nk]" : " bias[Nq,Nk]";
  }
  if (in.ConsumeIntegralInRange<int>(0, 3) == 0) {
    storage.slopes = alibi_slopes(s.heads);
    o.alibi_slopes = FloatView(storage.slopes);
    text += " alibi";
  }
  if (in.ConsumeIntegralInRange<int>(0, 3) == 0) {
    o.top_k = in.ConsumeIntegralInRange<std::int64_t>(1, s.key_len);
    text += " top_k=" + std::to_string(o.top_k);
  }
  if (in.ConsumeIntegralInRange<int>(0, 5) == 0) {
    o.lsh.buckets = 2 * in.ConsumeIntegralInRange<std::int64_t>(1, 8);
    o.lsh.rounds = in.ConsumeIntegralInRange<std::int64_t>(1, 3);
    o.lsh.seed = in.ConsumeIntegral<std::uint32_t>();
    text += " lsh=" + std::to_string(o.lsh.buckets) + "/" + std::to_string(o.lsh.rounds);
  }
  return text;
}

// Whether the backward refuses these options (it differentiates plain logits only).
inline bool has_terms(const AttentionOptions& o) {
  return o.softcap != 0.0f || !o.bias.empty() || !o.alibi_slopes.empty() || o.top_k != 0 ||
         o.lsh.buckets != 0;
}

// The largest |logit| of a call whose scores the reference gave.
inline double max_abs_logit(const AttentionShape& s, const AttentionOptions& o,
                            const std::vector<double>& scores) {
  const float scale = o.scale.value_or(default_scale(o.score, s.head_dim));
  double score = 0.0;
  for (double x : scores) score = std::max(score, std::abs(x * scale));
  if (o.softcap > 0.0f) score = std::min(score, static_cast<double>(o.softcap));
  double bias = 0.0;
  for (float x : o.bias) {
    if (std::isfinite(x)) bias = std::max(bias, std::abs(static_cast<double>(x)));
  }
  double slope = 0.0;
  for (float x : o.alibi_slopes) slope = std::max(slope, std::abs(static_cast<double>(x)));
  const double distance =
      static_cast<double>(std::max(s.query_len + o.mask.query_offset, s.key_len));
  return (score + bias + slope * distance) / o.temperature;
}

// True when some row's k-th and (k+1)-th largest visible logits (in double) are within
// `tolerance`: float logits may then order them the other way.
inline bool top_k_near_tie(const AttentionInputs& in, const AttentionOptions& o,
                           const std::vector<double>& scores, double tolerance) {
  if (o.top_k == 0) return false;
  const AttentionShape& s = in.shape;
  const double scale = o.scale.value_or(default_scale(o.score, s.head_dim));
  const reference::Buckets buckets = reference::lsh_buckets(in, o.lsh);
  for (std::int64_t h = 0; h < s.heads; ++h) {
    for (std::int64_t i = 0; i < s.query_len; ++i) {
      std::vector<double> row;
      for (std::int64_t j = 0; j < s.key_len; ++j) {
        if (!reference::visible(o.mask, s, h, i, j) ||
            !reference::shares_bucket(buckets, s, h, i, j)) {
          continue;
        }
        const double x = reference::logit(
            o, s, scale, h, i, j,
            scores[static_cast<std::size_t>((h * s.query_len + i) * s.key_len + j)]);
        if (x != -std::numeric_limits<double>::infinity()) row.push_back(x);
      }
      const auto k = static_cast<std::size_t>(o.top_k);
      if (row.size() <= k) continue;
      std::sort(row.begin(), row.end(), std::greater<double>());
      if (row[k - 1] - row[k] <= tolerance * (1.0 + std::abs(row[k]))) return true;
    }
  }
  return false;
}

}  // namespace fuzz_terms
