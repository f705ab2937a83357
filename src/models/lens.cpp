// The logit lens (lens.h).
#include "models/lens.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "models/blocks.h"
#include "models/lm_head.h"
#include "models/units/unit.h"
#include "validate.h"

namespace attnlens::models {
namespace {

// Rows whose vocabulary-wide logits exist at once: GPT-2's 50,257 tokens x 16 rows is 3 MiB,
// whatever the text's length.
constexpr std::int64_t kLensRows = 16;
constexpr std::int64_t kMaxLensTopK = 1024;

// The first k of `order` become the ids of row's k largest logits, best first (ties: the lower
// id, as top_k() of the JavaScript predictions).
void top_ids(const float* row, std::int64_t k, std::vector<std::int32_t>& order) {
  std::iota(order.begin(), order.end(), 0);
  std::partial_sort(order.begin(), order.begin() + k, order.end(),
                    [row](std::int32_t a, std::int32_t b) {
                      return row[a] > row[b] || (row[a] == row[b] && a < b);
                    });
}

}  // namespace

void lens_state(ForwardPass& p, std::int64_t state) {
  const std::int64_t k = p.options.lens_top_k;
  if (k == 0) return;
  const ModelUnit& unit = unit_of(p.config.architecture);
  const std::int64_t n = p.n, h = p.hidden, vocab = p.config.vocab;
  // The stack's finish (the final norm) works on p.x in place: run it, keep its result, and
  // put the residual stream back for the layers that follow.
  std::vector<float> finished = p.x;
  if (p.stack.finish) {
    p.stack.finish(p);
    std::swap(finished, p.x);
  }
  std::vector<float> rows, logits(static_cast<std::size_t>(std::min(n, kLensRows) * vocab));
  std::vector<float> scratch(static_cast<std::size_t>(vocab));
  std::vector<std::int32_t> order(static_cast<std::size_t>(vocab));
  for (std::int64_t first = 0; first < n; first += kLensRows) {
    const std::int64_t count = std::min(kLensRows, n - first);
    rows.assign(finished.begin() + first * h, finished.begin() + (first + count) * h);
    lm_head_logits(p, unit, rows, count, logits.data());
    for (std::int64_t r = 0; r < count; ++r) {
      const float* row = logits.data() + r * vocab;
      const float normaliser = log_sum_exp(p, row, scratch.data());
      top_ids(row, k, order);
      const std::int64_t at = (state * n + first + r) * k;
      for (std::int64_t j = 0; j < k; ++j) {
        const std::int32_t id = order[static_cast<std::size_t>(j)];
        p.outputs.lens_ids[static_cast<std::size_t>(at + j)] = id;
        p.outputs.lens_probabilities[static_cast<std::size_t>(at + j)] =
            std::exp(row[id] - normaliser);
      }
    }
  }
}

void check_lens(const TransformerConfig& c, const ForwardOptions& opt, const ForwardOutputs& out,
                std::int64_t n) {
  const std::int64_t k = opt.lens_top_k;
  if (k == 0) {
    if (!out.lens_ids.empty() || !out.lens_probabilities.empty()) {
      throw InvalidArgumentError("lens_top_k", "lens outputs were given but lens_top_k is 0");
    }
    return;
  }
  detail::require_in_range(k, 1, std::min(kMaxLensTopK, c.vocab), "lens_top_k");
  if (!c.lm_head) {
    throw InvalidArgumentError("lens_top_k",
                               "this checkpoint has no masked-LM head (cls.predictions.*), "
                               "so there is no output layer to read its hidden states with");
  }
  // An encoder-decoder's lens reads its decoder's states: n is then the decoder's T.
  const std::int64_t layers = is_encoder_decoder(c) ? c.layers - c.encoder_layers : c.layers;
  const std::int64_t count = detail::checked_mul((layers + 1) * n, k, "lens_ids");
  const std::string shape = "(layers+1)*N*k = " + detail::product_text({layers + 1, n, k});
  detail::require_length(out.lens_ids.size, count, "lens_ids", shape);
  detail::require_length(out.lens_probabilities.size, count, "lens_probabilities", shape);
}

}  // namespace attnlens::models
